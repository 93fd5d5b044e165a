#include "views/timeline/timelinelayout.h"

#include "views/counttext.h"

#include <algorithm>
#include <cmath>

namespace rankscope {

void TimelineLayout::build(const EventStore* store, const QSet<int>& collapsedRanks,
                           const QSet<int>& toggledLanes, const QSet<int>& shownRanks)
{
    m_store = store;
    m_collapsed = collapsedRanks;
    m_ranks.clear();
    m_rankLanes.clear();
    m_rows.clear();
    m_laneRow.clear();
    m_laneOrdinal.clear();
    m_shownLevels.clear();
    m_laneNames.clear();
    m_contentHeight = 0;
    if (!m_store) return;
    const std::vector<Lane>& lanes = m_store->lanes;
    m_laneRow.assign(lanes.size(), -1);
    m_laneOrdinal.assign(lanes.size(), 0);
    m_shownLevels.assign(lanes.size(), 1);
    for (std::size_t i = 0; i < lanes.size(); ++i)
        if (std::find(m_ranks.begin(), m_ranks.end(), lanes[i].rank) == m_ranks.end() &&
            (shownRanks.isEmpty() || shownRanks.contains(lanes[i].rank)) && m_jobs.isShown(int(i)))
            m_ranks.push_back(lanes[i].rank);
    std::sort(m_ranks.begin(), m_ranks.end());
    m_rankLanes.resize(m_ranks.size());
    for (std::size_t r = 0; r < m_ranks.size(); ++r) {
        std::vector<int>& ids = m_rankLanes[r];
        for (int i = 0; i < int(lanes.size()); ++i)
            if (lanes[std::size_t(i)].rank == m_ranks[r] && m_jobs.isShown(i)) ids.push_back(i);
        // By job where the folder mixes them, then GPU streams first.
        std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
            const int ja = m_jobs.jobOfLane(a), jb = m_jobs.jobOfLane(b);
            if (ja != jb) return ja < jb;
            const Lane& la = lanes[std::size_t(a)];
            const Lane& lb = lanes[std::size_t(b)];
            const bool ga = la.kind == LaneKind::GpuStream, gb = lb.kind == LaneKind::GpuStream;
            if (ga != gb) return ga;
            return std::pair(la.pid, la.tid) < std::pair(lb.pid, lb.tid);
        });
        // The jobs of this rank that have GPU streams: their CPU threads are summarised.
        QSet<int> jobsWithGpu;
        for (int id : ids)
            if (lanes[std::size_t(id)].kind == LaneKind::GpuStream)
                jobsWithGpu.insert(m_jobs.jobOfLane(id));
        for (std::size_t k = 0; k < ids.size(); ++k) {
            const auto id = std::size_t(ids[k]);
            m_laneOrdinal[id] = int(k);
            const int levels = lanes[id].maxDepth + 1;
            const bool summarised = jobsWithGpu.contains(m_jobs.jobOfLane(int(id))) &&
                                    lanes[id].kind == LaneKind::CpuThread;
            const int byDefault = summarised ? 1 : std::min(levels, kDefaultLevels);
            m_shownLevels[id] = !toggledLanes.contains(int(id)) ? byDefault
                                : byDefault < levels            ? levels
                                                                : 1;
        }
        int y = m_contentHeight;
        m_rows.push_back({y, kRankHeaderHeight, m_ranks[r], -1, 0, RowKind::RankHeader});
        y += kRankHeaderHeight;
        if (m_collapsed.contains(m_ranks[r])) {
            if (!ids.empty()) {
                m_rows.push_back({y, kRowHeight, m_ranks[r], -1, 0, RowKind::RankSummary});
                y += kRowHeight + kLaneGap;
            }
        } else {
            for (int id : ids) {
                m_laneRow[std::size_t(id)] = int(m_rows.size());
                for (int d = 0; d < m_shownLevels[std::size_t(id)]; ++d) {
                    m_rows.push_back({y, kRowHeight, m_ranks[r], id, d, RowKind::Lane});
                    y += kRowHeight;
                }
                y += kLaneGap;
            }
        }
        m_contentHeight = y;
    }
    nameLanes();
}

void TimelineLayout::nameLanes()
{
    const std::vector<Lane>& lanes = m_store->lanes;
    m_laneNames.assign(lanes.size(), QString());
    for (const std::vector<int>& ids : m_rankLanes) {
        for (int id : ids) {
            const Lane& lane = lanes[std::size_t(id)];
            const QString thread = QString::fromStdString(lane.threadName).trimmed();
            const QString given = QString::fromStdString(lane.name).trimmed();
            QString name;
            if (lane.kind == LaneKind::GpuStream) {
                const QString device = !lane.processLabel.empty()
                                           ? QString::fromStdString(lane.processLabel).trimmed()
                                           : tr("GPU %1").arg(lane.pid);
                const QString stream = !thread.isEmpty()  ? thread
                                       : !given.isEmpty() ? given
                                                          : tr("stream %1").arg(lane.tid);
                // A source name that already says the device ("GPU 0 stream 7") keeps it once.
                name = stream.contains(device) ? stream : device + QStringLiteral(" · ") + stream;
            } else {
                name = !thread.isEmpty()  ? thread
                       : !given.isEmpty() ? given
                                          : tr("thread %1").arg(lane.tid);
            }
            const int job = m_jobs.mixed() ? m_jobs.jobOfLane(id) : -1;
            m_laneNames[std::size_t(id)] =
                job >= 0 ? tr("job %1 · %2").arg(job + 1).arg(name) : name;
        }
        // Unique within the rank: the ids where the metadata repeats a name, a counter after
        // that (the same pid and tid twice cannot come from one trace, but can from two).
        const auto countOf = [&](const QString& name) {
            return std::count_if(ids.begin(), ids.end(), [&](int other) {
                return m_laneNames[std::size_t(other)] == name;
            });
        };
        std::vector<int> repeated;
        for (int id : ids)
            if (countOf(m_laneNames[std::size_t(id)]) > 1) repeated.push_back(id);
        for (int id : repeated) {
            const Lane& lane = lanes[std::size_t(id)];
            m_laneNames[std::size_t(id)] += tr(" (pid %1, tid %2)").arg(lane.pid).arg(lane.tid);
        }
        for (std::size_t k = 0; k < ids.size(); ++k) {
            QString& name = m_laneNames[std::size_t(ids[k])];
            const QString base = name;
            for (int n = 2; countOf(name) > 1; ++n)
                name = base + QStringLiteral(" #%1").arg(n);
        }
    }
}

QString TimelineLayout::rankTitle(int rank) const
{
    // Over every lane of the rank, brushed or not (the rank overview titles brushed-out ranks),
    // of the job shown (LaneJobs::shown) or of every job.
    std::vector<int> jobs;
    if (m_jobs.mixed() && m_store)
        for (int id = 0; id < int(m_store->lanes.size()); ++id) {
            const int job = m_jobs.jobOfLane(id);
            if (m_store->lanes[std::size_t(id)].rank == rank && job >= 0 && m_jobs.isShown(id) &&
                std::find(jobs.begin(), jobs.end(), job) == jobs.end())
                jobs.push_back(job);
        }
    std::sort(jobs.begin(), jobs.end());
    if (jobs.empty()) return tr("Rank %1").arg(rank);
    if (jobs.size() == 1) return tr("Job %1 · rank %2").arg(jobs.front() + 1).arg(rank);
    QStringList numbers;
    for (int job : jobs)
        numbers.append(QString::number(job + 1));
    return tr("Rank %1 · jobs %2").arg(rank).arg(numbers.join(QStringLiteral(", ")));
}

int TimelineLayout::rankIndex(int rank) const
{
    const auto it = std::lower_bound(m_ranks.begin(), m_ranks.end(), rank);
    return it != m_ranks.end() && *it == rank ? int(it - m_ranks.begin()) : -1;
}

int TimelineLayout::shownLevels(int lane) const
{
    if (lane < 0 || lane >= int(m_shownLevels.size())) return 0;
    return m_shownLevels[std::size_t(lane)];
}

int TimelineLayout::levelCount(int lane) const
{
    if (!m_store || lane < 0 || std::size_t(lane) >= m_store->lanes.size()) return 0;
    return m_store->lanes[std::size_t(lane)].maxDepth + 1;
}

std::vector<int> TimelineLayout::summaryLanes(int rank) const
{
    const int r = rankIndex(rank);
    if (r < 0) return {};
    std::vector<int> out;
    for (int id : m_rankLanes[std::size_t(r)])
        if (m_store->lanes[std::size_t(id)].kind == LaneKind::GpuStream) out.push_back(id);
    return out.empty() ? m_rankLanes[std::size_t(r)] : out;
}

QString TimelineLayout::laneName(int lane) const
{
    if (lane < 0 || lane >= int(m_laneNames.size())) return {};
    return m_laneNames[std::size_t(lane)];
}

QString TimelineLayout::laneDescription(int laneIndex) const
{
    if (laneIndex < 0 || laneIndex >= int(m_laneNames.size())) return {};
    const Lane& lane = m_store->lanes[std::size_t(laneIndex)];
    const bool gpu = lane.kind == LaneKind::GpuStream;
    QStringList lines{
        laneName(laneIndex),
        gpu ? tr("Rank %1, GPU stream: device %2, stream %3")
                  .arg(lane.rank)
                  .arg(lane.pid)
                  .arg(lane.tid)
            : tr("Rank %1, CPU thread: pid %2, tid %3").arg(lane.rank).arg(lane.pid).arg(lane.tid)};
    const int job = m_jobs.mixed() ? m_jobs.jobOfLane(laneIndex) : -1;
    if (job >= 0)
        lines << (job == m_jobs.analysed
                      ? tr("Job %1 of the folder's %2: the one the diagnosis analyses")
                      : tr("Job %1 of the folder's %2: set aside by the diagnosis"))
                     .arg(job + 1)
                     .arg(m_jobs.jobCount);
    if (!lane.processLabel.empty())
        lines << tr("process_labels: %1").arg(QString::fromStdString(lane.processLabel));
    if (!lane.threadName.empty())
        lines << tr("thread_name: %1").arg(QString::fromStdString(lane.threadName).trimmed());
    if (!lane.name.empty()) lines << tr("source name: %1").arg(QString::fromStdString(lane.name));
    lines << tr("%1, %2 of %3 shown")
                 .arg(countText(qsizetype(lane.size()), tr("%1 event"), tr("%1 events")))
                 .arg(shownLevels(laneIndex))
                 .arg(countText(levelCount(laneIndex), tr("%1 level"), tr("%1 levels")));
    return lines.join(QLatin1Char('\n'));
}

int TimelineLayout::firstRowOfLane(int lane) const
{
    if (lane < 0 || lane >= int(m_laneRow.size())) return -1;
    return m_laneRow[std::size_t(lane)];
}

int TimelineLayout::rowTop(int lane, int depth) const
{
    const int first = firstRowOfLane(lane);
    if (first < 0 || depth < 0 || depth >= shownLevels(lane)) return -1;
    return m_rows[std::size_t(first + depth)].y;
}

std::size_t TimelineLayout::firstRowEndingBelow(int contentY) const
{
    return std::size_t(std::upper_bound(m_rows.begin(), m_rows.end(), contentY,
                                        [](int v, const Row& r) { return v < r.y + r.height; }) -
                       m_rows.begin());
}

const TimelineLayout::Row* TimelineLayout::rowAt(int y) const
{
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y,
                               [](int v, const Row& r) { return v < r.y; });
    if (it == m_rows.begin()) return nullptr;
    --it;
    return y < it->y + it->height ? &*it : nullptr;
}

std::pair<int, int> TimelineLayout::rankContentRange(int rank) const
{
    int top = -1, bottom = -1;
    for (const Row& row : m_rows)
        if (row.rank == rank) {
            if (top < 0) top = row.y;
            bottom = row.y + row.height;
        }
    return {top, bottom};
}

int TimelineLayout::laneOrdinal(int lane) const
{
    if (lane < 0 || lane >= int(m_laneOrdinal.size())) return 0;
    return m_laneOrdinal[std::size_t(lane)];
}

TimelineEventRef TimelineLayout::eventAt(const Row& row, const ZoomState& zoom, double trackX,
                                         std::int64_t offsetNs,
                                         const DrawnInstead& drawnInstead) const
{
    if (!m_store || row.kind == RowKind::RankHeader) return {};
    // Events are drawn at least one pixel wide; accept a click within two pixels of one.
    const auto tolNs = std::int64_t(std::ceil(2 * zoom.nsPerPx()));
    const std::int64_t t = zoom.xToTime(trackX) - offsetNs;
    TimelineEventRef best;
    double bestDist = 1e18;
    const auto nearest = [&](int laneIndex, int depth) {
        const Lane* instead = drawnInstead ? drawnInstead(laneIndex) : nullptr;
        const Lane& lane = instead ? *instead : m_store->lanes[std::size_t(laneIndex)];
        for (std::size_t i = firstEndingAfter(lane, t - tolNs);
             i < lane.size() && lane.startNs[i] <= t + tolNs; ++i) {
            if (lane.depth[i] != depth) continue;
            const double dist = t < lane.startNs[i] ? double(lane.startNs[i] - t)
                                : t > lane.endNs[i] ? double(t - lane.endNs[i])
                                                    : 0.0;
            if (dist < bestDist) {
                bestDist = dist;
                best = {laneIndex, std::int64_t(i), instead != nullptr};
            }
        }
    };
    if (row.kind == RowKind::Lane)
        nearest(row.lane, row.depth);
    else
        for (int lane : summaryLanes(row.rank))
            nearest(lane, 0);
    return best;
}

} // namespace rankscope
