#include "views/timeline/timelinelayout.h"

#include <algorithm>
#include <cmath>

namespace rankscope {

void TimelineLayout::build(const EventStore* store, const QSet<int>& collapsedRanks)
{
    m_store = store;
    m_collapsed = collapsedRanks;
    m_ranks.clear();
    m_rankLanes.clear();
    m_rows.clear();
    m_laneRow.clear();
    m_laneOrdinal.clear();
    m_contentHeight = 0;
    if (!m_store) return;
    const std::vector<Lane>& lanes = m_store->lanes;
    m_laneRow.assign(lanes.size(), -1);
    m_laneOrdinal.assign(lanes.size(), 0);
    for (const Lane& lane : lanes)
        if (std::find(m_ranks.begin(), m_ranks.end(), lane.rank) == m_ranks.end())
            m_ranks.push_back(lane.rank);
    std::sort(m_ranks.begin(), m_ranks.end());
    m_rankLanes.resize(m_ranks.size());
    for (std::size_t r = 0; r < m_ranks.size(); ++r) {
        std::vector<int>& ids = m_rankLanes[r];
        for (int i = 0; i < int(lanes.size()); ++i)
            if (lanes[std::size_t(i)].rank == m_ranks[r]) ids.push_back(i);
        std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
            const Lane& la = lanes[std::size_t(a)];
            const Lane& lb = lanes[std::size_t(b)];
            const bool ga = la.kind == LaneKind::GpuStream, gb = lb.kind == LaneKind::GpuStream;
            if (ga != gb) return ga;
            return std::pair(la.pid, la.tid) < std::pair(lb.pid, lb.tid);
        });
        for (std::size_t k = 0; k < ids.size(); ++k)
            m_laneOrdinal[std::size_t(ids[k])] = int(k);
        int y = m_contentHeight;
        m_rows.push_back({y, kRankHeaderHeight, m_ranks[r], -1, 0});
        y += kRankHeaderHeight;
        if (!m_collapsed.contains(m_ranks[r])) {
            for (int id : ids) {
                const Lane& lane = lanes[std::size_t(id)];
                m_laneRow[std::size_t(id)] = int(m_rows.size());
                for (int d = 0; d <= lane.maxDepth; ++d) {
                    m_rows.push_back({y, kRowHeight, lane.rank, id, d});
                    y += kRowHeight;
                }
                y += kLaneGap;
            }
        }
        m_contentHeight = y;
    }
}

int TimelineLayout::firstRowOfLane(int lane) const
{
    if (lane < 0 || lane >= int(m_laneRow.size())) return -1;
    return m_laneRow[std::size_t(lane)];
}

int TimelineLayout::rowTop(int lane, int depth) const
{
    const int first = firstRowOfLane(lane);
    if (first < 0) return -1;
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

QString TimelineLayout::laneLabel(int laneIndex) const
{
    const Lane& lane = m_store->lanes[std::size_t(laneIndex)];
    if (!lane.name.empty()) return QString::fromStdString(lane.name);
    if (lane.kind == LaneKind::GpuStream) return tr("GPU %1 stream %2").arg(lane.pid).arg(lane.tid);
    return tr("thread %1").arg(lane.tid);
}

TimelineEventRef TimelineLayout::eventAt(const Row& row, const ZoomState& zoom, double trackX,
                                         std::int64_t offsetNs) const
{
    if (!m_store || row.lane < 0) return {};
    const Lane& lane = m_store->lanes[std::size_t(row.lane)];
    // Events are drawn at least one pixel wide; accept a click within two pixels of one.
    const auto tolNs = std::int64_t(std::ceil(2 * zoom.nsPerPx()));
    const std::int64_t t = zoom.xToTime(trackX) - offsetNs;
    TimelineEventRef best;
    double bestDist = 1e18;
    for (std::size_t i = firstEndingAfter(lane, t - tolNs);
         i < lane.size() && lane.startNs[i] <= t + tolNs; ++i) {
        if (lane.depth[i] != row.depth) continue;
        const double dist = t < lane.startNs[i] ? double(lane.startNs[i] - t)
                            : t > lane.endNs[i] ? double(t - lane.endNs[i])
                                                : 0.0;
        if (dist < bestDist) {
            bestDist = dist;
            best = {row.lane, std::int64_t(i)};
        }
    }
    return best;
}

} // namespace rankscope
