#include "views/timeline/timelineview.h"

#include "model/analysis/analysiscontext.h"
#include "views/charts/chartdata.h"
#include "views/timeline/timelinecolors.h"

#include <QFontMetrics>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <limits>

namespace rankscope {

namespace colors = timelinecolors;

namespace {

constexpr double kZoomStep = 0.8;
constexpr int kRulerLabelMax = 120; // px: wider than any tick label ("999.999 ms")
constexpr double kPanFraction = 0.1;

QString qstr(std::string_view v)
{
    return QString::fromUtf8(v.data(), qsizetype(v.size()));
}

qint64 refKey(int lane, std::int64_t event)
{
    return (qint64(lane) << 40) | qint64(event);
}

const char* categoryLabel(EventCategory c)
{
    switch (c) {
    case EventCategory::CpuOp:
        return "CPU op";
    case EventCategory::UserAnnotation:
        return "user annotation";
    case EventCategory::PythonFunction:
        return "Python function";
    case EventCategory::Runtime:
        return "CUDA runtime";
    case EventCategory::Kernel:
        return "kernel";
    case EventCategory::CommKernel:
        return "communication kernel";
    case EventCategory::Memcpy:
        return "memcpy";
    case EventCategory::Memset:
        return "memset";
    case EventCategory::Other:
        return "other";
    }
    return "other";
}

// Opaque axis-aligned rects without antialiasing are plain scanline fills: writing them into
// the frame directly costs a fraction of a QPainter::fillRect call each (and makes grouping them
// by colour moot), which matters when a zoomed-out frame is one rect per pixel column and row.
struct FrameFill {
    uchar* bits;
    qsizetype bytesPerLine;
    QRect clip;

    void fill(const QRect& r0, QRgb c) const
    {
        const QRect r = r0.intersected(clip);
        for (int y = r.top(); y <= r.bottom(); ++y) {
            auto* line = reinterpret_cast<QRgb*>(bits + y * bytesPerLine);
            std::fill(line + r.left(), line + r.left() + r.width(), c);
        }
    }
};

// One row's pending rectangle: sub-pixel neighbours of one colour become one rect, and events
// entirely under the previous run's pixels are skipped.
struct RowRun {
    int y = 0, h = 0;
    double x1 = 0, x2 = -1, nextFreeX = -1e18;
    QRgb color = 0;
    bool open = false;
};

void flush(RowRun& run, const FrameFill& out)
{
    if (!run.open) return;
    const int l = int(std::floor(run.x1));
    const int r = std::max(l + 1, int(std::ceil(run.x2)));
    out.fill(QRect(l, run.y, r - l, run.h), run.color);
    run.open = false;
}

void extendOrFlush(RowRun& run, double x1, double x2, QRgb color, const FrameFill& out)
{
    if (run.open && run.color == color && x1 <= run.x2 + 0.5 &&
        (x2 - x1 < 2.0 || run.x2 - run.x1 < 2.0)) {
        run.x2 = std::max(run.x2, x2);
        return;
    }
    flush(run, out);
    run.open = true;
    run.x1 = x1;
    run.x2 = x2;
    run.color = color;
}

} // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent)
{
    viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    verticalScrollBar()->setSingleStep(kRowHeight);
    setMinimumSize(400, 200);
}

TimelineView::~TimelineView() = default;

void TimelineView::setSession(SessionPtr session)
{
    m_session = std::move(session);
    m_selected = {};
    m_peers.clear();
    m_hover = {};
    m_hits.clear();
    m_hitsByLane.clear();
    m_currentHit = -1;
    m_collectiveAt.clear();
    m_nameColors.assign(m_session ? m_session->events.strings.size() : 0, 0);
    if (m_session) {
        const EventStore& store = m_session->events;
        // The category of a name's first event picks its hue family; done once here so that
        // level-of-detail columns (which only know a name) get the same colour as the events.
        for (const Lane& lane : store.lanes)
            for (std::size_t i = 0; i < lane.size(); ++i) {
                QRgb& c = m_nameColors[std::size_t(lane.nameId[i])];
                if (c == 0)
                    c = colors::eventColor(store.strings.view(lane.nameId[i]), lane.category[i])
                            .rgb();
            }
        for (std::size_t i = 0; i < store.collectives.size(); ++i) {
            const CollectiveRecord& c = store.collectives[i];
            // Only records that point at an event of the store can be selected or outlined.
            if (c.laneIndex >= 0 && std::size_t(c.laneIndex) < store.lanes.size() &&
                c.eventIndex >= 0 &&
                std::size_t(c.eventIndex) < store.lanes[std::size_t(c.laneIndex)].size())
                m_collectiveAt.insert(refKey(c.laneIndex, c.eventIndex), i);
        }
    }
    relayout();
    updateTraceRange();
    if (!m_findText.isEmpty()) {
        const QString text = m_findText;
        m_findText.clear();
        setFindText(text);
    }
    contentChanged();
}

void TimelineView::setClockOffsets(const QHash<int, qint64>& offsetNs)
{
    m_offsetNs = offsetNs;
    updateTraceRange();
    contentChanged();
    Q_EMIT clockChanged();
}

void TimelineView::setUseClockOffsets(bool use)
{
    if (use == m_useOffsets) return;
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_useOffsets = use;
    updateTraceRange();
    // Stay at the time range in view: comparing the clocks at a stall must not zoom out.
    setVisibleRange(s, e);
    contentChanged();
    Q_EMIT clockChanged();
}

TimelineClock TimelineView::clock() const
{
    return {m_useOffsets ? m_offsetNs : QHash<int, qint64>{}, m_useOffsets};
}

std::int64_t TimelineView::offsetOf(int rank) const
{
    return m_useOffsets ? m_offsetNs.value(rank, 0) : 0;
}

std::int64_t TimelineView::displayTimeNs(int rank, std::int64_t rawNs) const
{
    return rawNs + offsetOf(rank);
}

void TimelineView::setMarkers(const QList<TimelineMarker>& markers)
{
    m_markers = markers;
    contentChanged();
}

void TimelineView::showRange(std::int64_t startNs, std::int64_t endNs, const QList<int>& ranks)
{
    bool expanded = false;
    for (int rank : ranks)
        expanded |= m_collapsed.remove(rank);
    if (expanded) relayout();
    // Marker times are on the common clock; in raw mode the first rank's own clock applies.
    const std::int64_t shift =
        (!m_useOffsets && !ranks.isEmpty()) ? -m_offsetNs.value(ranks.first(), 0) : 0;
    const std::int64_t margin = std::max<std::int64_t>((endNs - startNs) / 10, 1000);
    setVisibleRange(startNs + shift - margin, endNs + shift + margin);
    if (!ranks.isEmpty()) {
        for (const Row& row : m_rows)
            if (row.lane < 0 && row.rank == ranks.first()) {
                verticalScrollBar()->setValue(row.y);
                break;
            }
    }
    contentChanged();
}

void TimelineView::setRankBanner(int rank, const QString& text)
{
    if (text.isEmpty())
        m_banners.remove(rank);
    else
        m_banners.insert(rank, text);
    contentChanged();
}

void TimelineView::setRankCollapsed(int rank, bool collapsed)
{
    if (collapsed)
        m_collapsed.insert(rank);
    else
        m_collapsed.remove(rank);
    relayout();
    contentChanged();
}

void TimelineView::setDetailsProvider(TimelineDetailsProvider provider)
{
    m_detailsProvider = std::move(provider);
}

void TimelineView::setVisibleRange(std::int64_t startNs, std::int64_t endNs)
{
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_zoom.setVisibleRange(startNs, endNs);
    rangeMaybeChanged(s, e);
}

void TimelineView::rangeMaybeChanged(std::int64_t oldStart, std::int64_t oldEnd)
{
    if (oldStart == m_zoom.visibleStartNs() && oldEnd == m_zoom.visibleEndNs()) return;
    viewport()->update();
    Q_EMIT rangeChanged(m_zoom.visibleStartNs(), m_zoom.visibleEndNs());
}

void TimelineView::contentChanged()
{
    ++m_version;
    viewport()->update();
}

void TimelineView::relayout()
{
    m_ranks.clear();
    m_rankLanes.clear();
    m_rows.clear();
    m_laneRow.clear();
    m_contentHeight = 0;
    if (m_session) {
        const std::vector<Lane>& lanes = m_session->events.lanes;
        m_laneRow.assign(lanes.size(), -1);
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
    updateScrollBar();
}

void TimelineView::updateTraceRange()
{
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
    if (m_session)
        for (const Lane& lane : m_session->events.lanes) {
            if (lane.size() == 0) continue;
            lo = std::min(lo, displayTimeNs(lane.rank, lane.startNs.front()));
            hi = std::max(hi, displayTimeNs(lane.rank, *std::max_element(lane.endNs.begin(),
                                                                         lane.endNs.end())));
        }
    if (lo > hi) lo = hi = 0;
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_zoom.setTraceRange(lo, hi);
    m_zoom.setWidthPx(trackWidth());
    rangeMaybeChanged(s, e);
}

void TimelineView::updateScrollBar()
{
    const int visible = std::max(0, viewport()->height() - kHeaderHeight);
    verticalScrollBar()->setPageStep(visible);
    verticalScrollBar()->setRange(0, std::max(0, m_contentHeight - visible));
}

int TimelineView::scrollY() const
{
    return verticalScrollBar()->value();
}

int TimelineView::trackWidth() const
{
    return std::max(1, viewport()->width() - kLabelWidth);
}

int TimelineView::xForTime(std::int64_t displayNs) const
{
    return kLabelWidth + int(std::floor(m_zoom.timeToX(displayNs)));
}

int TimelineView::yForLane(int lane, int depth) const
{
    if (lane < 0 || lane >= int(m_laneRow.size()) || m_laneRow[std::size_t(lane)] < 0) return -1;
    const Row& row = m_rows[std::size_t(m_laneRow[std::size_t(lane)] + depth)];
    return kHeaderHeight + row.y - scrollY() + row.height / 2;
}

const TimelineView::Row* TimelineView::rowAt(int viewportY) const
{
    if (viewportY < kHeaderHeight) return nullptr;
    const int y = viewportY - kHeaderHeight + scrollY();
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y,
                               [](int v, const Row& r) { return v < r.y; });
    if (it == m_rows.begin()) return nullptr;
    --it;
    return y < it->y + it->height ? &*it : nullptr;
}

QRgb TimelineView::nameColor(StringId id) const
{
    return m_nameColors[std::size_t(id)];
}

QColor TimelineView::colorForEvent(TimelineEventRef ref) const
{
    if (!m_session || !ref.isValid()) return {};
    return QColor(
        nameColor(m_session->events.lanes[std::size_t(ref.lane)].nameId[std::size_t(ref.event)]));
}

QColor TimelineView::laneBackground(int lane) const
{
    if (lane < 0 || lane >= int(m_laneRow.size())) return colors::kBackgroundEven;
    int ordinal = 0;
    for (const auto& ids : m_rankLanes) {
        auto it = std::find(ids.begin(), ids.end(), lane);
        if (it != ids.end()) {
            ordinal = int(it - ids.begin());
            break;
        }
    }
    return ordinal % 2 ? colors::kBackgroundOdd : colors::kBackgroundEven;
}

QString TimelineView::laneLabel(int laneIndex) const
{
    const Lane& lane = m_session->events.lanes[std::size_t(laneIndex)];
    if (!lane.name.empty()) return QString::fromStdString(lane.name);
    if (lane.kind == LaneKind::GpuStream) return tr("GPU %1 stream %2").arg(lane.pid).arg(lane.tid);
    return tr("thread %1").arg(lane.tid);
}

TimelineEventRef TimelineView::hitTest(QPoint pos) const
{
    if (!m_session || pos.x() < kLabelWidth) return {};
    const Row* row = rowAt(pos.y());
    if (!row || row->lane < 0) return {};
    const Lane& lane = m_session->events.lanes[std::size_t(row->lane)];
    const std::int64_t offset = offsetOf(lane.rank);
    const double x = pos.x() - kLabelWidth;
    // Events are drawn at least one pixel wide; accept a click within two pixels of one.
    const auto tolNs = std::int64_t(std::ceil(2 * m_zoom.nsPerPx()));
    const std::int64_t t = m_zoom.xToTime(x) - offset;
    TimelineEventRef best;
    double bestDist = 1e18;
    for (std::size_t i = firstEndingAfter(lane, t - tolNs);
         i < lane.size() && lane.startNs[i] <= t + tolNs; ++i) {
        if (lane.depth[i] != row->depth) continue;
        const double dist = t < lane.startNs[i] ? double(lane.startNs[i] - t)
                            : t > lane.endNs[i] ? double(t - lane.endNs[i])
                                                : 0.0;
        if (dist < bestDist) {
            bestDist = dist;
            best = {row->lane, std::int64_t(i)};
        }
    }
    return best;
}

QRectF TimelineView::eventRect(TimelineEventRef ref) const
{
    const Lane& lane = m_session->events.lanes[std::size_t(ref.lane)];
    const int y = yForLane(ref.lane, lane.depth[std::size_t(ref.event)]);
    if (y < 0) return {};
    const std::int64_t off = offsetOf(lane.rank);
    const double x1 = kLabelWidth + m_zoom.timeToX(lane.startNs[std::size_t(ref.event)] + off);
    const double x2 =
        std::max(x1 + 1, kLabelWidth + m_zoom.timeToX(lane.endNs[std::size_t(ref.event)] + off));
    return QRectF(x1, y - kRowHeight / 2 + 1, x2 - x1, kRowHeight - 2);
}

void TimelineView::select(TimelineEventRef ref)
{
    m_selected = ref;
    m_selectedRank = -1;
    m_peers.clear();
    if (m_session && ref.isValid()) {
        const EventStore& store = m_session->events;
        auto it = m_collectiveAt.constFind(refKey(ref.lane, ref.event));
        if (it != m_collectiveAt.constEnd()) {
            const CollectiveRecord& mine = store.collectives[*it];
            for (std::size_t i = 0; i < store.collectives.size(); ++i) {
                const CollectiveRecord& c = store.collectives[i];
                if (c.processGroupName == mine.processGroupName && c.seq == mine.seq)
                    m_peers.push_back(i);
            }
            std::sort(m_peers.begin(), m_peers.end(), [&](std::size_t a, std::size_t b) {
                return store.collectives[a].rank < store.collectives[b].rank;
            });
        }
    }
    viewport()->update();
    Q_EMIT selectionChanged(ref);
}

std::pair<std::int64_t, std::int64_t>
TimelineView::collectiveArrival(const CollectiveRecord& c) const
{
    const std::int64_t enter = c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs;
    const std::int64_t exit = c.execEndNs >= 0 ? c.execEndNs : c.issueEndNs;
    return {enter < 0 ? -1 : displayTimeNs(c.rank, enter),
            exit < 0 ? -1 : displayTimeNs(c.rank, exit)};
}

QString TimelineView::selectionDetailsHtml() const
{
    if (m_session && !m_selected.isValid() && m_selectedRank >= 0) {
        // A rank picked from the charts: what its group holds.
        const EventStore& store = m_session->events;
        int gpu = 0, cpu = 0;
        for (const Lane& lane : store.lanes)
            if (lane.rank == m_selectedRank) ++(lane.kind == LaneKind::GpuStream ? gpu : cpu);
        QString html = tr("<h3>Rank %1</h3><p>%2 GPU stream(s), %3 CPU thread(s), %4 events, "
                          "%5 collectives.</p>")
                           .arg(m_selectedRank)
                           .arg(gpu)
                           .arg(cpu)
                           .arg(store.eventCountOfRank(m_selectedRank))
                           .arg(store.collectiveCountOfRank(m_selectedRank));
        const QString banner = m_banners.value(m_selectedRank);
        if (!banner.isEmpty()) html += QStringLiteral("<p>%1</p>").arg(banner.toHtmlEscaped());
        return html;
    }
    if (!m_session) return tr("<i>Open a trace folder to see its events here.</i>");
    if (!m_selected.isValid()) {
        // Nothing picked yet: say what there is to pick instead of leaving the pane blank.
        const EventStore& store = m_session->events;
        return tr("<p><i>Click an event to see its details; click a collective to compare its "
                  "ranks.</i></p><p>%1 rank(s), %2 lane(s), %3 event(s), %4 collective "
                  "record(s). <b>Time per rank</b> breaks each rank's time down (whole run or "
                  "the visible window); <b>Collective by rank</b> shows the slowest "
                  "collectives.</p>")
            .arg(m_ranks.size())
            .arg(store.lanes.size())
            .arg(store.eventCount())
            .arg(store.collectives.size());
    }
    const EventStore& store = m_session->events;
    const Lane& lane = store.lanes[std::size_t(m_selected.lane)];
    const auto i = std::size_t(m_selected.event);
    const auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
    const auto line = [&](const QString& k, const QString& v) {
        return QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(esc(k), esc(v));
    };
    const std::int64_t startNs = displayTimeNs(lane.rank, lane.startNs[i]);
    QString html = QStringLiteral("<h3>%1</h3><table cellspacing=\"2\" cellpadding=\"2\">")
                       .arg(esc(qstr(store.strings.view(lane.nameId[i]))));
    html += line(tr("Category"), QString::fromLatin1(categoryLabel(lane.category[i])));
    html += line(tr("Rank"), QString::number(lane.rank));
    html += line(tr("Lane"), laneLabel(m_selected.lane));
    html += line(tr("Start"), ZoomState::formatNs(startNs - m_zoom.traceStartNs(), 1) +
                                  tr(" (raw %1 ns)").arg(lane.startNs[i]));
    html +=
        line(tr("Clock"), m_useOffsets ? tr("aligned clocks: times from the trace start, each rank "
                                            "shifted by its estimated offset")
                                       : tr("raw timestamps: times from the trace start, each rank "
                                            "on its own clock"));
    html += line(tr("Duration"), ZoomState::formatNs(lane.endNs[i] - lane.startNs[i], 1));
    html += line(tr("Depth"), QString::number(lane.depth[i]));
    if (m_detailsProvider) {
        for (const auto& [key, value] : m_detailsProvider(*m_session, m_selected))
            html += line(key, value);
    } else {
        html += line(tr("Args"), tr("not available (no details provider for this source)"));
    }
    html += QStringLiteral("</table>");
    if (!m_peers.empty()) {
        const std::size_t record = m_collectiveAt.value(refKey(m_selected.lane, m_selected.event));
        const CollectiveRecord& mine = store.collectives[record];
        const auto sv = [&](StringId id) { return qstr(store.strings.view(id)); };
        // Named as the collective chart names it, so that the two read as the same group.
        const QString groupName = sv(mine.processGroupName);
        const auto match = ChartData::findCollective(m_session->analysis, record);
        html +=
            tr("<h4>Collective %1, %2, seq %3 on %4 ranks</h4>")
                .arg(esc(sv(mine.op)),
                     groupName.isEmpty() ? tr("unnamed group") : tr("group %1").arg(esc(groupName)))
                .arg(mine.seq)
                .arg(match ? m_session->analysis.groups[std::size_t(match->first)].members.size()
                           : m_peers.size());
        html += tr("<p>Enter and exit on %1.</p>").arg(clock().name());
        // The analysis may number the collective by issue order where the trace has its own
        // sequence numbers: name it as the Collective by rank tab (and the findings) do.
        const CollectiveGroup* group = nullptr;
        const MatchedCollective* row = nullptr;
        const Finding* waitedFor = nullptr; // the hang or desync the analysis reports on it
        if (match) {
            group = &m_session->analysis.groups[std::size_t(match->first)];
            row = &group->collectives[std::size_t(match->second)];
            html +=
                tr("<p>The analysis matched it across ranks as <b>%1</b>.</p>")
                    .arg(esc(ChartData::collective(*m_session, match->first, match->second, clock())
                                 .title));
            for (const Finding& f : m_session->analysis.findings)
                if ((f.kind == FindingKind::Hang || f.kind == FindingKind::Desync) &&
                    f.processGroup == group->name && f.seq == row->seq) {
                    waitedFor = &f;
                    break;
                }
            if (row->mismatch != MismatchKind::None && !row->detail.empty())
                html += tr("<p>Mismatch: %1.</p>").arg(esc(QString::fromStdString(row->detail)));
        }
        html += tr("<table cellspacing=\"2\" cellpadding=\"4\"><tr><th>rank</th><th>op</th>"
                   "<th>size</th><th>dtype</th><th>enter</th><th>exit</th><th>state</th></tr>");
        // Every member of the matched group, the ranks with no record of it included; without a
        // match, the records found on the timeline.
        std::vector<std::pair<int, std::int32_t>> members; // rank, record (-1: none)
        if (row)
            for (std::size_t slot = 0; slot < group->members.size(); ++slot)
                members.emplace_back(group->members[slot], row->records[slot]);
        else
            for (std::size_t p : m_peers)
                members.emplace_back(store.collectives[p].rank, std::int32_t(p));
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        const auto fmt = [&](std::int64_t t) {
            return t < 0 ? tr("—") : ZoomState::formatNs(t - m_zoom.traceStartNs(), 1);
        };
        for (const auto& [rank, index] : members) {
            if (index < 0) {
                html += tr("<tr><td>%1</td><td>—</td><td>—</td><td>—</td><td>—</td><td>—</td>"
                           "<td><b>never arrived</b></td></tr>")
                            .arg(rank);
                continue;
            }
            const CollectiveRecord& c = store.collectives[std::size_t(index)];
            const auto [enter, exit] = collectiveArrival(c);
            if (enter >= 0) {
                first = std::min(first, enter);
                last = std::max(last, enter);
            }
            QString state = c.state == CollectiveRecord::State::Completed ? tr("completed")
                            : c.state == CollectiveRecord::State::Started ? tr("started")
                                                                          : tr("issued");
            // A rank the analysis shows waiting in it for another did not complete it with
            // the others, whatever end its span has (a timeout ends it too).
            const bool blamed =
                waitedFor && std::find(waitedFor->ranks.begin(), waitedFor->ranks.end(), rank) !=
                                 waitedFor->ranks.end();
            if (waitedFor && !blamed)
                state = tr("waited for %1, did not complete with it (%2)")
                            .arg(QString::fromStdString(formatRanks(waitedFor->ranks)),
                                 QString::fromStdString(waitedFor->id));
            // An NCCL COLL line is printed when the call is enqueued: "issued" is all it can
            // tell, not a call seen to be stuck. The line says where to read the rest.
            if (c.stateUnknown) {
                state = tr("issued (NCCL log, completion not shown)");
                const QList<SourceFile>& sources = m_session->folder.sources();
                if (c.sourceIndex >= 0 && c.sourceIndex < sources.size()) {
                    QString where = sources[c.sourceIndex].relativePath;
                    if (c.sourceLine > 0) where += QLatin1Char(':') + QString::number(c.sourceLine);
                    state += QStringLiteral(": ") + where;
                }
            }
            const QString size = c.inNelems < 0 ? tr("—")
                                 : c.outNelems >= 0 && c.outNelems != c.inNelems
                                     ? QStringLiteral("%1 → %2").arg(c.inNelems).arg(c.outNelems)
                                     : QString::number(c.inNelems);
            const QString dtype = sv(c.dtype);
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td>"
                                   "<td>%6</td><td>%7</td></tr>")
                        .arg(rank)
                        .arg(esc(sv(c.op)), size, dtype.isEmpty() ? tr("—") : esc(dtype),
                             fmt(enter), fmt(exit), esc(state));
        }
        html += QStringLiteral("</table>");
        // Raw timestamps mix the ranks' clocks, so the skew then includes their offsets.
        if (last >= first)
            html +=
                (m_useOffsets ? tr("<p>Arrival skew (first to last rank): <b>%1</b></p>")
                              : tr("<p>Arrival skew (first to last rank, raw timestamps: includes "
                                   "the clocks' offsets): <b>%1</b></p>"))
                    .arg(ZoomState::formatDuration(last - first));
    }
    return html;
}

void TimelineView::setFindText(const QString& text)
{
    if (text == m_findText) return;
    m_findText = text;
    m_hits.clear();
    m_hitsByLane.clear();
    m_currentHit = -1;
    m_findMatch.clear();
    if (m_session && !text.isEmpty()) {
        const EventStore& store = m_session->events;
        m_findMatch.assign(store.strings.size(), 0);
        for (std::size_t id = 1; id < store.strings.size(); ++id) {
            m_findMatch[id] =
                qstr(store.strings.view(StringId(id))).contains(text, Qt::CaseInsensitive);
        }
        m_hitsByLane.resize(store.lanes.size());
        for (std::size_t l = 0; l < store.lanes.size(); ++l) {
            const Lane& lane = store.lanes[l];
            for (std::size_t i = 0; i < lane.size(); ++i)
                if (m_findMatch[std::size_t(lane.nameId[i])]) {
                    m_hitsByLane[l].push_back(std::int64_t(i));
                    m_hits.push_back({int(l), std::int64_t(i)});
                }
        }
        const auto startOf = [&](const TimelineEventRef& r) {
            const Lane& lane = store.lanes[std::size_t(r.lane)];
            return displayTimeNs(lane.rank, lane.startNs[std::size_t(r.event)]);
        };
        std::stable_sort(m_hits.begin(), m_hits.end(),
                         [&](const auto& a, const auto& b) { return startOf(a) < startOf(b); });
    }
    contentChanged();
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
}

void TimelineView::findNext()
{
    if (m_hits.empty()) return;
    m_currentHit = (m_currentHit + 1) % int(m_hits.size());
    select(m_hits[std::size_t(m_currentHit)]);
    ensureVisible(m_selected);
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
}

void TimelineView::findPrevious()
{
    if (m_hits.empty()) return;
    m_currentHit = m_currentHit <= 0 ? int(m_hits.size()) - 1 : m_currentHit - 1;
    select(m_hits[std::size_t(m_currentHit)]);
    ensureVisible(m_selected);
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
}

void TimelineView::revealEvent(TimelineEventRef ref)
{
    if (!m_session || !ref.isValid() || std::size_t(ref.lane) >= m_session->events.lanes.size() ||
        std::size_t(ref.event) >= m_session->events.lanes[std::size_t(ref.lane)].size())
        return;
    select(ref);
    ensureVisible(ref);
}

void TimelineView::selectRank(int rank)
{
    if (rank >= 0 && std::find(m_ranks.begin(), m_ranks.end(), rank) == m_ranks.end()) rank = -1;
    if (rank >= 0 && m_collapsed.remove(rank)) {
        relayout();
        contentChanged();
    }
    m_selected = {};
    m_peers.clear();
    m_selectedRank = rank;
    if (rank >= 0) verticalScrollBar()->setValue(rankContentRange(rank).first);
    viewport()->update();
    Q_EMIT selectionChanged(m_selected);
}

std::pair<int, int> TimelineView::rankContentRange(int rank) const
{
    int top = -1, bottom = -1;
    for (const Row& row : m_rows)
        if (row.rank == rank) {
            if (top < 0) top = row.y;
            bottom = row.y + row.height;
        }
    return {top, bottom};
}

std::pair<int, int> TimelineView::markerXRange(const TimelineMarker& m, int rank,
                                               bool withLabel) const
{
    const int w = viewport()->width();
    const std::int64_t shift = m_useOffsets ? 0 : -m_offsetNs.value(rank, 0);
    const int x1 = std::max(kLabelWidth, xForTime(m.startNs + shift));
    int x2 = std::min(w, std::max(xForTime(m.endNs + shift), x1 + 2));
    if (withLabel)
        x2 = std::min(w, std::max(x2, x1 + 8 + fontMetrics().horizontalAdvance(m.label)));
    return {x1, x2};
}

int TimelineView::markerAt(QPoint pos) const
{
    if (!m_session || pos.x() < kLabelWidth || pos.y() < kHeaderHeight) return -1;
    const Row* row = rowAt(pos.y());
    if (!row) return -1;
    const bool header = row->lane < 0;
    if (!header && hitTest(pos).isValid()) return -1;
    // The last drawn marker is on top.
    for (int i = int(m_markers.size()) - 1; i >= 0; --i) {
        const TimelineMarker& m = m_markers[i];
        if (!m.ranks.isEmpty() && !m.ranks.contains(row->rank)) continue;
        const auto [x1, x2] = markerXRange(m, row->rank, header);
        if (x2 > kLabelWidth && pos.x() >= x1 && pos.x() < x2) return i;
    }
    return -1;
}

void TimelineView::ensureVisible(TimelineEventRef ref)
{
    const Lane& lane = m_session->events.lanes[std::size_t(ref.lane)];
    if (m_collapsed.remove(lane.rank)) {
        relayout();
        contentChanged();
    }
    const std::int64_t s = displayTimeNs(lane.rank, lane.startNs[std::size_t(ref.event)]);
    const std::int64_t e = displayTimeNs(lane.rank, lane.endNs[std::size_t(ref.event)]);
    const std::int64_t span = m_zoom.visibleSpanNs();
    if (e - s > span)
        setVisibleRange(s - (e - s) / 10, e + (e - s) / 10);
    else if (s < m_zoom.visibleStartNs() || e > m_zoom.visibleEndNs())
        setVisibleRange((s + e) / 2 - span / 2, (s + e) / 2 - span / 2 + span);
    const Row& row = m_rows[std::size_t(m_laneRow[std::size_t(ref.lane)])];
    const int visibleH = viewport()->height() - kHeaderHeight;
    if (row.y < scrollY() || row.y + row.height > scrollY() + visibleH)
        verticalScrollBar()->setValue(row.y - visibleH / 3);
}

void TimelineView::fitSelectionOrAll()
{
    if (m_zoom.hasSelection() && m_zoom.selectionEndNs() > m_zoom.selectionStartNs()) {
        setVisibleRange(m_zoom.selectionStartNs(), m_zoom.selectionEndNs());
    } else if (m_selected.isValid()) {
        const Lane& lane = m_session->events.lanes[std::size_t(m_selected.lane)];
        const std::int64_t s =
            displayTimeNs(lane.rank, lane.startNs[std::size_t(m_selected.event)]);
        const std::int64_t e = displayTimeNs(lane.rank, lane.endNs[std::size_t(m_selected.event)]);
        const std::int64_t margin = std::max<std::int64_t>((e - s) / 10, 1);
        setVisibleRange(s - margin, e + margin);
    } else {
        setVisibleRange(m_zoom.traceStartNs(), m_zoom.traceEndNs());
    }
}

// --- painting --------------------------------------------------------------------------------

void TimelineView::paintEvent(QPaintEvent*)
{
    const CacheKey key{m_zoom.visibleStartNs(), m_zoom.visibleEndNs(), viewport()->size(),
                       scrollY(), m_version};
    if (!(key == m_baseKey) || m_base.isNull()) {
        if (m_base.size() != viewport()->size())
            m_base = QImage(viewport()->size(), QImage::Format_RGB32);
        renderBase();
        m_baseKey = key;
    }
    QPainter p(viewport());
    p.drawImage(0, 0, m_base);
    renderOverlay(p);
}

QImage TimelineView::renderImage()
{
    QImage image(viewport()->size(), QImage::Format_RGB32);
    viewport()->render(&image);
    return image;
}

void TimelineView::renderBase()
{
    QImage& image = m_base;
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing, false);
    const int w = image.width(), h = image.height();
    p.fillRect(0, kHeaderHeight, w, h - kHeaderHeight, colors::kBackgroundEven);
    m_zoom.setWidthPx(trackWidth());
    if (!m_session) {
        p.fillRect(0, 0, w, kHeaderHeight, colors::kLabelColumn);
        p.setPen(palette().color(QPalette::WindowText));
        p.drawText(QRect(0, 0, w, h), Qt::AlignCenter, tr("No trace loaded"));
        return;
    }
    const int sy = scrollY();
    const int contentTop = sy, contentBottom = sy + h - kHeaderHeight;
    // Rows are sorted by y: binary-search the first one on screen, then walk lane by lane.
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), contentTop,
                               [](int v, const Row& r) { return v < r.y + r.height; });
    p.setClipRect(0, kHeaderHeight, w, h - kHeaderHeight);
    const QFontMetrics fm(font());
    const std::int64_t step = ZoomState::tickStepNs(m_zoom.nsPerPx(), 90);
    for (; it != m_rows.end() && it->y < contentBottom;) {
        const int yv = kHeaderHeight + it->y - sy;
        if (it->lane < 0) {
            const int rank = it->rank;
            p.fillRect(0, yv, w, it->height, colors::kRankHeader);
            p.setPen(QColor(40, 40, 60));
            const bool collapsed = m_collapsed.contains(rank);
            const std::size_t r =
                std::size_t(std::find(m_ranks.begin(), m_ranks.end(), rank) - m_ranks.begin());
            QString title = (collapsed ? QStringLiteral("\u25b8 ") : QStringLiteral("\u25be ")) +
                            tr("Rank %1").arg(rank);
            if (collapsed) title += tr("  (%1 lanes)").arg(m_rankLanes[r].size());
            p.drawText(QRect(6, yv, kLabelWidth - 8, it->height), Qt::AlignVCenter, title);
            const QString banner = m_banners.value(rank);
            if (!banner.isEmpty()) {
                const QRect br(kLabelWidth + 4, yv + 2,
                               std::min(w - kLabelWidth - 8, fm.horizontalAdvance(banner) + 16),
                               it->height - 4);
                p.fillRect(br, QColor(200, 40, 40));
                p.setPen(Qt::white);
                p.drawText(br.adjusted(8, 0, 0, 0), Qt::AlignVCenter,
                           fm.elidedText(banner, Qt::ElideRight, br.width() - 12));
            }
            ++it;
            continue;
        }
        const int lane = it->lane;
        const int firstRow = it->depth;
        int lastRow = firstRow;
        auto jt = it;
        while (jt != m_rows.end() && jt->lane == lane && jt->y < contentBottom) {
            lastRow = jt->depth;
            ++jt;
        }
        const int laneTop = yv - firstRow * kRowHeight;
        const int laneHeight =
            (m_session->events.lanes[std::size_t(lane)].maxDepth + 1) * kRowHeight;
        p.fillRect(kLabelWidth, laneTop, w - kLabelWidth, laneHeight, laneBackground(lane));
        // Grid lines behind the events, one per ruler tick.
        p.setPen(QColor(232, 232, 238));
        const std::int64_t firstTick =
            (m_zoom.visibleStartNs() - m_zoom.traceStartNs()) / step * step + m_zoom.traceStartNs();
        for (std::int64_t t = firstTick; t <= m_zoom.visibleEndNs(); t += step)
            if (t >= m_zoom.visibleStartNs())
                p.drawLine(xForTime(t), laneTop, xForTime(t), laneTop + laneHeight - 1);
        renderLane(p, lane, firstRow, lastRow, laneTop);
        p.fillRect(0, laneTop, kLabelWidth, laneHeight, colors::kLabelColumn);
        p.setPen(QColor(30, 30, 30));
        p.drawText(QRect(16, laneTop, kLabelWidth - 20, kRowHeight), Qt::AlignVCenter,
                   fm.elidedText(laneLabel(lane), Qt::ElideRight, kLabelWidth - 20));
        it = jt;
    }
    // Findings, over their ranks' groups.
    for (const TimelineMarker& m : m_markers) {
        for (std::size_t r = 0; r < m_ranks.size(); ++r) {
            const int rank = m_ranks[r];
            if (!m.ranks.isEmpty() && !m.ranks.contains(rank)) continue;
            const auto [x1, x2] = markerXRange(m, rank, false);
            if (x2 <= kLabelWidth || x1 >= w) continue;
            const auto [top, bottom] = rankContentRange(rank);
            const int yt = kHeaderHeight + top - sy, yb = kHeaderHeight + bottom - sy;
            QColor fill = m.color;
            fill.setAlpha(60);
            p.fillRect(QRect(x1, yt, x2 - x1, yb - yt), fill);
            p.fillRect(QRect(x1, yt, 2, yb - yt), m.color);
            p.setPen(m.color.darker(150));
            p.drawText(QRect(x1 + 4, yt, std::max(0, w - x1 - 4), kRankHeaderHeight),
                       Qt::AlignVCenter, m.label);
        }
    }
    p.setClipping(false);
    p.fillRect(kLabelWidth - 1, kHeaderHeight, 1, h - kHeaderHeight, QColor(200, 200, 210));
    renderOverview(p);
    renderRuler(p);
}

void TimelineView::renderLane(QPainter& p, int laneIndex, int firstRow, int lastRow, int laneTop)
{
    const Lane& lane = m_session->events.lanes[std::size_t(laneIndex)];
    if (lane.size() == 0) return;
    const std::int64_t off = offsetOf(lane.rank);
    const double npp = m_zoom.nsPerPx();
    const int width = trackWidth();
    const std::int64_t t0 = m_zoom.visibleStartNs() - off, t1 = m_zoom.visibleEndNs() - off;
    const QRgb bg = laneBackground(laneIndex).rgb();
    std::vector<RowRun> runs(std::size_t(lastRow - firstRow + 1));
    for (int d = firstRow; d <= lastRow; ++d) {
        runs[std::size_t(d - firstRow)].y = laneTop + d * kRowHeight + 1;
        runs[std::size_t(d - firstRow)].h = kRowHeight - 2;
    }
    QImage& frame = m_base;
    const FrameFill rects{frame.bits(), frame.bytesPerLine(),
                          QRect(kLabelWidth, kHeaderHeight, frame.width() - kLabelWidth,
                                frame.height() - kHeaderHeight)};
    struct Label {
        QRect rect;
        StringId name;
        QRgb color;
    };
    std::vector<Label> labels;

    const std::size_t first = firstEndingAfter(lane, t0);
    const std::size_t last = std::size_t(
        std::lower_bound(lane.startNs.begin() + std::ptrdiff_t(first), lane.startNs.end(), t1) -
        lane.startNs.begin());
    const bool haveLod = std::size_t(laneIndex) < m_session->laneLods.size() &&
                         !m_session->laneLods[std::size_t(laneIndex)].rows.empty();
    // More events than two per pixel: draw the pyramid, one column per pixel, so the frame
    // costs O(pixels) however many events are in view.
    if (haveLod && last - first > std::size_t(2 * width)) {
        const LaneLod& lod = m_session->laneLods[std::size_t(laneIndex)];
        for (int d = firstRow; d <= lastRow && d < int(lod.rows.size()); ++d) {
            const LodRow& row = lod.rows[std::size_t(d)];
            const int level = row.levelFor(npp);
            if (level < 0) continue;
            const std::vector<LodBucket>& buckets = row.levels[std::size_t(level)];
            const double bw = double(row.bucketNs(level));
            RowRun& run = runs[std::size_t(d - firstRow)];
            const auto n = std::int64_t(buckets.size());
            for (int x = 0; x < width; ++x) {
                const double ta = double(t0 - row.originNs) + x * npp, tb = ta + npp;
                std::int64_t b0 = std::max<std::int64_t>(0, std::int64_t(std::floor(ta / bw)));
                const std::int64_t b1 = std::min<std::int64_t>(n, std::int64_t(std::ceil(tb / bw)));
                double busy = 0, best = -1;
                bool starts = false;
                StringId dom = 0;
                for (std::int64_t b = b0; b < b1; ++b) {
                    const LodBucket& bk = buckets[std::size_t(b)];
                    starts |= bk.count > 0;
                    if (bk.busy <= 0 && bk.count == 0) continue;
                    const double cover = std::min(tb, (b + 1) * bw) - std::max(ta, b * bw);
                    busy += bk.busy * cover;
                    if (bk.busy > best) {
                        best = bk.busy;
                        dom = bk.dominant;
                    }
                }
                if (best < 0) {
                    flush(run, rects);
                    continue;
                }
                // A pixel where an event starts is at least half shaded, so that instant and
                // sub-pixel events stay visible however far out the view is.
                const double shade = std::max(std::min(1.0, busy / npp), starts ? 0.5 : 0.0);
                const QRgb c = colors::shadedColumn(nameColor(dom), bg, float(shade));
                extendOrFlush(run, kLabelWidth + x, kLabelWidth + x + 1, c, rects);
            }
            flush(run, rects);
        }
    } else {
        const double maxX = kLabelWidth + width + 1.0;
        for (std::size_t i = first; i < last; ++i) {
            const int d = lane.depth[i];
            if (d < firstRow || d > lastRow) continue;
            RowRun& run = runs[std::size_t(d - firstRow)];
            double x1 = kLabelWidth + double(lane.startNs[i] - t0) / npp;
            double x2 = std::max(x1 + 1.0, kLabelWidth + double(lane.endNs[i] - t0) / npp);
            if (x2 <= run.nextFreeX) continue;
            x1 = std::max({x1, run.nextFreeX, double(kLabelWidth) - 1});
            x2 = std::min(x2, maxX);
            run.nextFreeX = x2;
            const QRgb c = nameColor(lane.nameId[i]);
            // A gap of one pixel between wide neighbours keeps back-to-back events apart.
            const double drawX2 = x2 - x1 >= 6 ? x2 - 1 : x2;
            extendOrFlush(run, x1, drawX2, c, rects);
            if (x2 - x1 > 30)
                labels.push_back(
                    {QRect(int(x1) + 3, run.y, int(drawX2 - x1) - 5, run.h), lane.nameId[i], c});
        }
        for (RowRun& run : runs)
            flush(run, rects);
    }
    if (!labels.empty()) {
        const QFontMetrics fm(font());
        const StringTable& strings = m_session->events.strings;
        for (const Label& l : labels) {
            const QRect r =
                l.rect.intersected(QRect(kLabelWidth, l.rect.y(), width, l.rect.height()));
            if (r.width() < fm.averageCharWidth() * 3) continue;
            const QString text =
                fm.elidedText(qstr(strings.view(l.name)), Qt::ElideRight, r.width());
            if (text.isEmpty() || fm.horizontalAdvance(text) > r.width()) continue;
            p.setPen(colors::textColorOn(QColor(l.color)));
            p.drawText(r, Qt::AlignVCenter | Qt::AlignLeft, text);
        }
    }
    // Find hits: an outline per hit, at most one per pixel and row.
    if (!m_hitsByLane.empty() && !m_hitsByLane[std::size_t(laneIndex)].empty()) {
        const auto& hits = m_hitsByLane[std::size_t(laneIndex)];
        auto h = std::lower_bound(hits.begin(), hits.end(), std::int64_t(first));
        std::vector<int> lastX(runs.size(), -1);
        p.setPen(QPen(colors::kFindHit, 2));
        for (; h != hits.end() && *h < std::int64_t(last); ++h) {
            const auto i = std::size_t(*h);
            const int d = lane.depth[i];
            if (d < firstRow || d > lastRow) continue;
            const int x1 = kLabelWidth + int(std::floor(double(lane.startNs[i] - t0) / npp));
            if (x1 <= lastX[std::size_t(d - firstRow)]) continue;
            const int x2 =
                std::max(x1 + 3, kLabelWidth + int(std::ceil(double(lane.endNs[i] - t0) / npp)));
            lastX[std::size_t(d - firstRow)] = x2;
            p.drawRect(QRect(x1 - 1, laneTop + d * kRowHeight, x2 - x1 + 1, kRowHeight - 1));
        }
    }
}

void TimelineView::renderOverview(QPainter& p)
{
    const int w = viewport()->width();
    const int tw = trackWidth();
    p.fillRect(0, 0, w, kOverviewHeight, QColor(250, 250, 252));
    p.fillRect(0, 0, kLabelWidth, kOverviewHeight + kRulerHeight, colors::kLabelColumn);
    p.setPen(QColor(90, 90, 100));
    p.drawText(QRect(6, 0, kLabelWidth - 8, kOverviewHeight), Qt::AlignVCenter, tr("Overview"));
    // Busy fraction of the GPU streams' top rows (of the CPU threads' when there is no GPU
    // lane) across the whole trace, from the pyramids.
    const double span = double(m_zoom.traceEndNs() - m_zoom.traceStartNs());
    const double npp = span / tw;
    if (m_overviewWidth != tw || m_overviewVersion != m_version) {
        m_overviewWidth = tw;
        m_overviewVersion = m_version;
        m_overviewBusy.assign(std::size_t(tw), 0.0);
        const EventStore& store = m_session->events;
        const bool anyGpu = std::any_of(store.lanes.begin(), store.lanes.end(), [](const Lane& l) {
            return l.kind == LaneKind::GpuStream && l.size() > 0;
        });
        int contributing = 0;
        for (std::size_t l = 0; l < store.lanes.size() && l < m_session->laneLods.size(); ++l) {
            const LaneLod& lod = m_session->laneLods[l];
            if (lod.rows.empty() || (anyGpu && store.lanes[l].kind != LaneKind::GpuStream))
                continue;
            const LodRow& row = lod.rows[0];
            const int level = row.levelFor(npp);
            if (level < 0) continue;
            ++contributing;
            const double bw = double(row.bucketNs(level));
            const std::int64_t origin = row.originNs + offsetOf(store.lanes[l].rank);
            for (std::size_t b = 0; b < row.levels[std::size_t(level)].size(); ++b) {
                const float v = row.levels[std::size_t(level)][b].busy;
                if (v <= 0) continue;
                // Spread the bucket over the pixels it covers (it can be wider than one).
                const double b0 = double(origin - m_zoom.traceStartNs()) + double(b) * bw;
                const double b1 = b0 + bw;
                for (int x = std::max(0, int(b0 / npp)); x < tw && x * npp < b1; ++x) {
                    const double cover = std::min(b1, (x + 1) * npp) - std::max(b0, x * npp);
                    if (cover > 0) m_overviewBusy[std::size_t(x)] += v * cover / npp;
                }
            }
        }
        for (double& v : m_overviewBusy)
            v = contributing > 0 ? std::min(1.0, v / contributing) : 0.0;
    }
    for (int x = 0; x < tw; ++x) {
        const int bh = int(std::round((kOverviewHeight - 4) * m_overviewBusy[std::size_t(x)]));
        if (bh > 0)
            p.fillRect(kLabelWidth + x, kOverviewHeight - 2 - bh, 1, bh, QColor(120, 140, 180));
    }
    const int x1 = kLabelWidth + int((m_zoom.visibleStartNs() - m_zoom.traceStartNs()) / npp);
    const int x2 =
        kLabelWidth + int(std::ceil((m_zoom.visibleEndNs() - m_zoom.traceStartNs()) / npp));
    p.fillRect(QRect(x1, 0, std::max(2, x2 - x1), kOverviewHeight), QColor(60, 90, 200, 50));
    p.setPen(QColor(60, 90, 200));
    p.drawRect(QRect(x1, 0, std::max(2, x2 - x1) - 1, kOverviewHeight - 1));
}

void TimelineView::renderRuler(QPainter& p)
{
    const int w = viewport()->width();
    const int y0 = kOverviewHeight;
    p.fillRect(kLabelWidth, y0, w - kLabelWidth, kRulerHeight, QColor(244, 244, 248));
    p.fillRect(0, y0 + kRulerHeight - 1, w, 1, QColor(190, 190, 200));
    p.setPen(QColor(90, 90, 100));
    p.drawText(QRect(6, y0, kLabelWidth - 8, kRulerHeight), Qt::AlignVCenter,
               tr("Time, %1").arg(clock().name()));
    const std::int64_t step = ZoomState::tickStepNs(m_zoom.nsPerPx(), 90);
    const std::int64_t origin = m_zoom.traceStartNs();
    const std::int64_t firstTick = (m_zoom.visibleStartNs() - origin) / step * step + origin;
    p.setPen(QColor(60, 60, 70));
    const QFontMetrics fm(font());
    for (std::int64_t t = firstTick; t <= m_zoom.visibleEndNs(); t += step) {
        if (t < m_zoom.visibleStartNs()) continue;
        const int x = xForTime(t);
        p.drawLine(x, y0 + kRulerHeight - 7, x, y0 + kRulerHeight - 1);
        // A tick near the right edge keeps its mark but not a label cut in half. Measured only
        // there: a text width per tick cost 3-4 ms a frame (bench/timeline_bench).
        const QString label = ZoomState::formatNs(t - origin, step);
        if (x + 3 + kRulerLabelMax > w && x + 3 + fm.horizontalAdvance(label) > w) continue;
        p.drawText(QRect(x + 3, y0, kRulerLabelMax, kRulerHeight - 4),
                   Qt::AlignVCenter | Qt::AlignLeft, label);
    }
}

void TimelineView::renderOverlay(QPainter& p)
{
    if (!m_session) return;
    const int w = viewport()->width(), h = viewport()->height();
    p.setClipRect(kLabelWidth, kHeaderHeight, w - kLabelWidth, h - kHeaderHeight);
    const EventStore& store = m_session->events;
    // The same collective on every rank, and the arrival skew between first and last.
    if (!m_peers.empty()) {
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        p.setPen(QPen(colors::kArrivalSkew, 2));
        for (std::size_t i : m_peers) {
            const CollectiveRecord& c = store.collectives[i];
            const auto [enter, exit] = collectiveArrival(c);
            if (enter >= 0) {
                first = std::min(first, enter);
                last = std::max(last, enter);
            }
            if (m_collectiveAt.contains(refKey(c.laneIndex, c.eventIndex))) {
                const QRectF r = eventRect({c.laneIndex, c.eventIndex});
                if (!r.isNull()) p.drawRect(r.adjusted(-1, -1, 1, 1));
            }
        }
        if (last >= first) {
            const int x1 = xForTime(first), x2 = std::max(xForTime(last), x1 + 1);
            QColor band = colors::kArrivalSkew;
            band.setAlpha(40);
            p.fillRect(QRect(x1, kHeaderHeight, x2 - x1, h - kHeaderHeight), band);
            p.fillRect(QRect(x1, kHeaderHeight, 1, h), colors::kArrivalSkew);
            p.fillRect(QRect(x2, kHeaderHeight, 1, h), colors::kArrivalSkew);
            // In the ruler, as a measured span's length is: over the tracks it hid the top
            // lane's events once the view was scrolled.
            const QString text = tr("arrival skew %1").arg(ZoomState::formatDuration(last - first));
            const QFontMetrics fm(font());
            const int tw = fm.horizontalAdvance(text) + 10;
            const QRect box(std::clamp(x1 + 4, kLabelWidth, std::max(kLabelWidth, w - tw)),
                            kOverviewHeight + 1, tw, kRulerHeight - 3);
            p.setClipRect(kLabelWidth, kOverviewHeight, w - kLabelWidth, kRulerHeight);
            p.fillRect(box, colors::kArrivalSkew);
            p.setPen(Qt::white);
            p.drawText(box, Qt::AlignCenter, text);
            p.setClipRect(kLabelWidth, kHeaderHeight, w - kLabelWidth, h - kHeaderHeight);
        }
    }
    if (m_selectedRank >= 0) {
        const auto [top, bottom] = rankContentRange(m_selectedRank);
        if (top >= 0) {
            const int sy = scrollY();
            p.setClipRect(0, kHeaderHeight, w, h - kHeaderHeight);
            p.setPen(QPen(colors::kSelection, 2));
            p.drawRect(QRect(1, kHeaderHeight + top - sy + 1, w - 2, bottom - top - 2));
            p.setClipRect(kLabelWidth, kHeaderHeight, w - kLabelWidth, h - kHeaderHeight);
        }
    }
    if (m_selected.isValid()) {
        const QRectF r = eventRect(m_selected);
        if (!r.isNull()) {
            p.setPen(QPen(colors::kSelection, 2));
            p.drawRect(r.adjusted(-1, -1, 1, 1));
        }
    }
    if (m_hover.isValid() && !(m_hover == m_selected)) {
        const QRectF r = eventRect(m_hover);
        if (!r.isNull()) {
            p.setPen(QPen(QColor(0, 0, 0, 140), 1));
            p.drawRect(r);
        }
    }
    if (m_zoom.hasSelection()) {
        const int x1 = xForTime(m_zoom.selectionStartNs());
        const int x2 = std::max(x1 + 1, xForTime(m_zoom.selectionEndNs()));
        p.fillRect(QRect(x1, kHeaderHeight, x2 - x1, h - kHeaderHeight), QColor(40, 120, 255, 45));
        p.fillRect(QRect(x1, kHeaderHeight, 1, h), QColor(40, 120, 255));
        p.fillRect(QRect(x2, kHeaderHeight, 1, h), QColor(40, 120, 255));
        p.setClipping(false);
        const QString text =
            ZoomState::formatDuration(m_zoom.selectionEndNs() - m_zoom.selectionStartNs());
        const QFontMetrics fm(font());
        const int tw = fm.horizontalAdvance(text) + 10;
        const QRect box((x1 + x2) / 2 - tw / 2, kOverviewHeight + 1, tw, kRulerHeight - 3);
        p.fillRect(box, QColor(40, 120, 255));
        p.setPen(Qt::white);
        p.drawText(box, Qt::AlignCenter, text);
    }
    p.setClipping(false);
    if (m_hover.isValid() && m_drag == Drag::None) {
        const Lane& lane = store.lanes[std::size_t(m_hover.lane)];
        const auto i = std::size_t(m_hover.event);
        const QFontMetrics fm(font());
        const QString text =
            fm.elidedText(qstr(store.strings.view(lane.nameId[i])), Qt::ElideMiddle, 420) +
            QStringLiteral("  ") + ZoomState::formatDuration(lane.endNs[i] - lane.startNs[i]);
        const QRectF er = eventRect(m_hover);
        const int tw = fm.horizontalAdvance(text) + 10;
        int x = std::clamp(m_mouseX + 12, kLabelWidth, std::max(kLabelWidth, w - tw));
        int y = int(er.bottom()) + 4;
        if (y + fm.height() + 4 > h) y = int(er.top()) - fm.height() - 8;
        const QRect box(x, y, tw, fm.height() + 4);
        p.fillRect(box, QColor(30, 30, 40, 230));
        p.setPen(Qt::white);
        p.drawText(box, Qt::AlignCenter, text);
    }
}

// --- interaction -----------------------------------------------------------------------------

void TimelineView::resizeEvent(QResizeEvent* event)
{
    QAbstractScrollArea::resizeEvent(event);
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_zoom.setWidthPx(trackWidth());
    m_zoom.setVisibleRange(s, e);
    updateScrollBar();
}

void TimelineView::scrollContentsBy(int, int)
{
    viewport()->update();
}

void TimelineView::mousePressEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton || !m_session) return;
    const QPoint pos = event->position().toPoint();
    m_pressPos = m_lastPos = pos;
    if (pos.y() < kOverviewHeight && pos.x() >= kLabelWidth) {
        m_drag = Drag::Overview;
        mouseMoveEvent(event);
        return;
    }
    if (pos.x() < kLabelWidth) {
        if (const Row* row = rowAt(pos.y()); row && row->lane < 0)
            setRankCollapsed(row->rank, !isRankCollapsed(row->rank));
        return;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
        m_drag = Drag::Measure;
        m_measureStartNs = m_zoom.xToTime(pos.x() - kLabelWidth);
        m_zoom.setSelection(m_measureStartNs, m_measureStartNs);
        viewport()->update();
        return;
    }
    m_drag = Drag::Pan;
}

void TimelineView::mouseMoveEvent(QMouseEvent* event)
{
    const QPoint pos = event->position().toPoint();
    m_mouseX = pos.x();
    switch (m_drag) {
    case Drag::Pan: {
        const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
        m_zoom.panByPx(double(m_lastPos.x() - pos.x()));
        verticalScrollBar()->setValue(scrollY() + m_lastPos.y() - pos.y());
        rangeMaybeChanged(s, e);
        break;
    }
    case Drag::Measure:
        m_zoom.setSelection(m_measureStartNs, m_zoom.xToTime(pos.x() - kLabelWidth));
        viewport()->update();
        break;
    case Drag::Overview: {
        const double frac = double(pos.x() - kLabelWidth) / trackWidth();
        const auto centre =
            m_zoom.traceStartNs() +
            std::int64_t(frac * double(m_zoom.traceEndNs() - m_zoom.traceStartNs()));
        const std::int64_t span = m_zoom.visibleSpanNs();
        setVisibleRange(centre - span / 2, centre - span / 2 + span);
        break;
    }
    case Drag::None: {
        const TimelineEventRef hover = hitTest(pos);
        if (!(hover == m_hover)) {
            m_hover = hover;
            viewport()->update();
        } else if (m_hover.isValid()) {
            viewport()->update(); // the tooltip follows the cursor
        }
        break;
    }
    }
    m_lastPos = pos;
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() != Qt::LeftButton) return;
    const Drag drag = m_drag;
    m_drag = Drag::None;
    const QPoint pos = event->position().toPoint();
    if (drag == Drag::Pan && (pos - m_pressPos).manhattanLength() < 4) {
        m_zoom.clearSelection();
        const TimelineEventRef hit = hitTest(pos);
        const int marker = hit.isValid() ? -1 : markerAt(pos);
        select(hit);
        if (marker >= 0) Q_EMIT markerClicked(marker, m_markers[marker].id);
    }
}

void TimelineView::wheelEvent(QWheelEvent* event)
{
    const QPoint pos = event->position().toPoint();
    const int delta = event->angleDelta().y();
    if (delta == 0) return;
    // Over the labels, or with Shift, the wheel scrolls the lanes; over the tracks it zooms at
    // the cursor, as in Perfetto.
    if (pos.x() < kLabelWidth || (event->modifiers() & Qt::ShiftModifier)) {
        verticalScrollBar()->setValue(scrollY() - delta / 2);
        return;
    }
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_zoom.zoomAt(pos.x() - kLabelWidth, std::pow(kZoomStep, delta / 120.0));
    rangeMaybeChanged(s, e);
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    const bool cursorInTracks = m_mouseX >= kLabelWidth && m_mouseX < viewport()->width();
    const double anchorX = cursorInTracks ? m_mouseX - kLabelWidth : trackWidth() / 2.0;
    if (event->matches(QKeySequence::Find)) {
        Q_EMIT findRequested();
        return;
    }
    switch (event->key()) {
    case Qt::Key_W:
        m_zoom.zoomAt(anchorX, kZoomStep);
        break;
    case Qt::Key_S:
        m_zoom.zoomAt(anchorX, 1.0 / kZoomStep);
        break;
    case Qt::Key_A:
        m_zoom.panByPx(-kPanFraction * trackWidth());
        break;
    case Qt::Key_D:
        m_zoom.panByPx(kPanFraction * trackWidth());
        break;
    case Qt::Key_F:
        fitSelectionOrAll();
        break;
    case Qt::Key_Return:
    case Qt::Key_Enter:
        if (event->modifiers() & Qt::ShiftModifier)
            findPrevious();
        else
            findNext();
        break;
    case Qt::Key_Escape:
        m_zoom.clearSelection();
        select({});
        break;
    default:
        QAbstractScrollArea::keyPressEvent(event);
        return;
    }
    rangeMaybeChanged(s, e);
}

void TimelineView::leaveEvent(QEvent* event)
{
    QAbstractScrollArea::leaveEvent(event);
    m_mouseX = -1;
    if (m_hover.isValid()) {
        m_hover = {};
        viewport()->update();
    }
}

} // namespace rankscope
