#include "views/timeline/timelineview.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/collectivedetails.h"
#include "model/digest/digest.h"
#include "views/charts/chartdata.h"
#include "views/counttext.h"
#include "views/timeline/timelinecolors.h"

#include <QFile>
#include <QFontMetrics>
#include <QImageWriter>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QSvgGenerator>
#include <QToolTip>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

namespace rankscope {

namespace colors = timelinecolors;

namespace {

constexpr double kZoomStep = 0.8;
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
    connect(&m_detailsWatcher, &QFutureWatcher<TimelineDetailRows>::finished, this, [this] {
        if (m_detailsWatcher.isCanceled()) return;
        m_detailRows = m_detailsWatcher.result();
        Q_EMIT detailsRead();
    });
    // A read is asked for once the view rests (a zoom by wheel is many frames).
    m_rawTimer = new QTimer(this);
    m_rawTimer->setSingleShot(true);
    m_rawTimer->setInterval(150);
    connect(m_rawTimer, &QTimer::timeout, this, &TimelineView::requestRawDetail);
    connect(&m_rawWatcher, &QFutureWatcher<std::vector<RawRead>>::finished, this,
            &TimelineView::rawDetailRead);
    m_search = new EventSearch(this);
    connect(m_search, &EventSearch::hitsChanged, this, [this](bool restarted) {
        if (restarted) m_currentHit = -1;
        contentChanged();
        Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
    });
}

TimelineView::~TimelineView()
{
    ++*m_rawGeneration; // a read in flight stops at its next rank
}

void TimelineView::setSession(SessionPtr session)
{
    m_session = std::move(session);
    m_toggledLanes.clear(); // lane indices are the old session's
    m_selected = {};
    m_peers.clear();
    m_hover = {};
    m_search->clear(); // its lane indices are the old session's
    m_currentHit = -1;
    m_collectiveAt.clear();
    ++*m_rawGeneration;
    m_rawWatcher.cancel();
    m_rawPending.clear();
    m_raw.clear();
    m_rawUnavailable.clear();
    m_rawNote.clear();
    m_painter.setSession(m_session.get());
    m_layout.setLaneJobs(m_session ? LaneJobs::of(*m_session, m_session->jobs) : LaneJobs{});
    if (m_session) {
        const EventStore& store = m_session->events;
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
    fitLabelWidth();
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
        const int top = m_layout.rankContentRange(ranks.first()).first;
        if (top >= 0) verticalScrollBar()->setValue(top);
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

void TimelineView::setShownJob(int job)
{
    LaneJobs jobs = m_layout.laneJobs();
    jobs.shown = jobs.mixed() ? job : -1;
    m_layout.setLaneJobs(std::move(jobs));
    relayout();
    updateTraceRange(); // fits the job's range
    contentChanged();
    // Find looks in the lanes shown: the other job's hits go (they are on another time scale),
    // the job's are searched.
    if (!m_findText.isEmpty()) {
        m_search->clear();
        m_currentHit = -1;
    }
    findInShownLanes();
}

void TimelineView::setRankFilter(const QList<int>& ranks)
{
    const QSet<int> filter(ranks.begin(), ranks.end());
    if (filter == m_rankFilter) return;
    m_rankFilter = filter;
    relayout();
    contentChanged();
    // Searched again in the ranks shown; until that search delivers, the earlier hits stay
    // and find steps over those of hidden ranks (isHitShown).
    findInShownLanes();
}

void TimelineView::findInShownLanes()
{
    if (m_findText.isEmpty()) return;
    m_search->search(m_session, m_findText, clock(), findLanes());
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
}

bool TimelineView::isHitShown(int hit) const
{
    const EventHit h = m_search->result().hit(std::size_t(hit));
    return m_layout.rankIndex(m_session->events.lanes[std::size_t(h.lane)].rank) >= 0 &&
           m_layout.laneJobs().isShown(h.lane);
}

void TimelineView::setLaneToggled(int lane, bool toggled)
{
    if (toggled == m_toggledLanes.contains(lane)) return;
    if (toggled)
        m_toggledLanes.insert(lane);
    else
        m_toggledLanes.remove(lane);
    relayout();
    contentChanged();
}

int TimelineView::widestLaneName() const
{
    const QFontMetrics fm(font());
    int widest = 0;
    if (m_session)
        for (std::size_t lane = 0; lane < m_session->events.lanes.size(); ++lane)
            widest = std::max(widest, fm.horizontalAdvance(m_layout.laneName(int(lane))));
    return widest;
}

void TimelineView::fitLabelWidth()
{
    // The names in full where they are short enough: the handle before, "+N" levels after.
    setLabelWidth(std::clamp(widestLaneName() + 60, int(kLabelWidth), int(kMaxFitLabelWidth)));
}

void TimelineView::setLabelWidth(int px)
{
    px = std::clamp(px, int(kMinLabelWidth), int(kMaxExportLabelWidth));
    if (px == m_labelWidth) return;
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_labelWidth = px;
    // The same time range over the narrower or wider track.
    m_zoom.setWidthPx(trackWidth());
    m_zoom.setVisibleRange(s, e);
    contentChanged();
    Q_EMIT labelWidthChanged(m_labelWidth);
}

void TimelineView::setDetailsProvider(TimelineDetailsProvider provider)
{
    m_detailsProvider = std::move(provider);
    readSelectionDetails();
}

void TimelineView::readSelectionDetails()
{
    m_detailRows.reset();
    if (!m_detailsProvider || !m_session || !m_selected.isValid()) {
        m_detailsWatcher.cancel();
        return;
    }
    // The watcher reports only the newest future: a click on another event drops this one. The
    // lane's store (a raw read's) is kept alive until the worker is done.
    const EventLane held = eventLane(m_selected);
    if (!held.lane) return;
    m_detailsWatcher.setFuture(QtConcurrent::run(
        [provider = m_detailsProvider, session = m_session, owner = held.owner, lane = held.lane,
         event = std::size_t(m_selected.event)] { return provider(*session, *lane, event); }));
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
    m_layout.build(m_session ? &m_session->events : nullptr, m_collapsed, m_toggledLanes,
                   m_rankFilter);
    updateScrollBar();
}

void TimelineView::updateTraceRange()
{
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
    if (m_session)
        for (std::size_t l = 0; l < m_session->events.lanes.size(); ++l) {
            const Lane& lane = m_session->events.lanes[l];
            if (lane.size() == 0 || !m_layout.laneJobs().isShown(int(l))) continue;
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
    verticalScrollBar()->setRange(0, std::max(0, m_layout.contentHeight() - visible));
}

int TimelineView::scrollY() const
{
    return verticalScrollBar()->value();
}

int TimelineView::trackWidth() const
{
    return std::max(1, viewport()->width() - m_labelWidth);
}

int TimelineView::xForTime(std::int64_t displayNs) const
{
    return m_labelWidth + int(std::floor(m_zoom.timeToX(displayNs)));
}

int TimelineView::yForLane(int lane, int depth) const
{
    const int top = m_layout.rowTop(lane, depth);
    if (top < 0) return -1;
    return kHeaderHeight + top - scrollY() + kRowHeight / 2;
}

const TimelineView::Row* TimelineView::rowAt(int viewportY) const
{
    if (viewportY < kHeaderHeight) return nullptr;
    return m_layout.rowAt(viewportY - kHeaderHeight + scrollY());
}

TimelineFrame TimelineView::frame() const
{
    TimelineFrame f;
    f.session = m_session.get();
    f.layout = &m_layout;
    f.zoom = m_zoom;
    f.clock = clock();
    f.labelWidth = m_labelWidth;
    f.scrollY = scrollY();
    f.markers = m_markers;
    f.banners = m_banners;
    f.findHits = &m_search->result();
    for (const RawDetail& raw : m_raw)
        for (std::size_t k = 0; k < raw.laneOf.size(); ++k)
            if (raw.laneOf[k] >= 0)
                f.rawLanes.insert(raw.laneOf[k], {&raw.events->lanes[k], &raw.events->strings,
                                                  &raw.colors, raw.range.startNs, raw.range.endNs,
                                                  raw.findHits ? &*raw.findHits : nullptr, int(k)});
    return f;
}

// --- a digest's detail, read back from the original traces --------------------------------------

const EventStore* TimelineView::rawDetail(int rank, std::int64_t* startNs,
                                          std::int64_t* endNs) const
{
    const auto it = m_raw.constFind(rank);
    if (it == m_raw.cend()) return nullptr;
    if (startNs) *startNs = it->range.startNs;
    if (endNs) *endNs = it->range.endNs;
    return it->events.get();
}

TimelineView::EventLane TimelineView::eventLane(TimelineEventRef ref) const
{
    if (!m_session || !ref.isValid() || std::size_t(ref.lane) >= m_session->events.lanes.size())
        return {};
    const Lane& stored = m_session->events.lanes[std::size_t(ref.lane)];
    EventLane out;
    if (!ref.raw) {
        out = {&stored, &m_session->events.strings, nullptr, nullptr};
    } else if (const auto it = m_raw.constFind(stored.rank); it != m_raw.cend()) {
        const auto k = std::find(it->laneOf.begin(), it->laneOf.end(), ref.lane);
        if (k != it->laneOf.end())
            out = {&it->events->lanes[std::size_t(k - it->laneOf.begin())], &it->events->strings,
                   it->events, &it->colors};
    }
    if (out.lane && std::size_t(ref.event) >= out.lane->size()) return {};
    return out;
}

void TimelineView::rawDetailReplaced(int rank)
{
    const auto ofRank = [&](TimelineEventRef ref) {
        return ref.raw && m_session->events.lanes[std::size_t(ref.lane)].rank == rank;
    };
    if (m_hover.raw && ofRank(m_hover)) m_hover = {};
    if (!m_selected.raw || !ofRank(m_selected)) return;
    // The same event in the new read, found by where it starts and where it is in its source.
    TimelineEventRef same;
    TimelineEventRef probe = m_selected;
    probe.event = 0;
    if (const Lane* lane = eventLane(probe).lane)
        for (auto i = std::size_t(std::lower_bound(lane->startNs.begin(), lane->startNs.end(),
                                                   m_selectedRaw.startNs) -
                                  lane->startNs.begin());
             i < lane->size() && lane->startNs[i] == m_selectedRaw.startNs && !same.isValid(); ++i)
            if (RawIdentity{lane->startNs[i], lane->endNs[i], lane->sourceOffset[i],
                            lane->depth[i]} == m_selectedRaw)
                same = {m_selected.lane, std::int64_t(i), true};
    if (same.isValid())
        m_selected = same; // the same event: its details stand
    else
        select({});
}

void TimelineView::requestRawDetail()
{
    if (!m_session || m_session->digestReductions.empty()) return;
    const double npp = m_zoom.nsPerPx();
    // The ranks with a row on screen.
    std::set<int> ranks;
    const int top = scrollY(), bottom = top + viewport()->height() - kHeaderHeight;
    const std::vector<Row>& rows = m_layout.rows();
    for (std::size_t i = m_layout.firstRowEndingBelow(top); i < rows.size() && rows[i].y < bottom;
         ++i)
        ranks.insert(rows[i].lane >= 0 ? m_session->events.lanes[std::size_t(rows[i].lane)].rank
                                       : rows[i].rank);
    std::vector<RawAsk> asks;
    QSet<int> wanted;
    for (const int rank : ranks) {
        const auto r = m_session->digestReductions.find(rank);
        if (r == m_session->digestReductions.end() || r->second.eventsKept >= r->second.eventsRead)
            continue;
        if (npp >= std::max(double(r->second.resolutionNs), kRawDetailNsPerPx) ||
            m_rawUnavailable.contains(rank))
            continue;
        const std::int64_t t0 = m_zoom.visibleStartNs() - offsetOf(rank);
        const std::int64_t t1 = m_zoom.visibleEndNs() - offsetOf(rank);
        const auto inside = [&](std::int64_t a, std::int64_t b) { return a <= t0 && b >= t1; };
        if (std::any_of(m_session->digestWindows.begin(), m_session->digestWindows.end(),
                        [&](const Digest::Window& w) {
                            return w.rank == rank && inside(w.startNs, w.endNs);
                        }))
            continue; // the digest holds every event here
        if (int(wanted.size()) >= kMaxRawDetailRanks) break;
        wanted.insert(rank);
        const auto have = m_raw.constFind(rank);
        if (have != m_raw.cend() && inside(have->range.startNs, have->range.endNs)) continue;
        const std::int64_t margin = (t1 - t0) / 2;
        asks.push_back({rank, t0 - margin, t1 + margin});
    }
    // What is no longer in view is let go.
    bool dropped = false;
    for (auto it = m_raw.begin(); it != m_raw.end();) {
        if (wanted.contains(it.key())) {
            ++it;
        } else {
            const int rank = it.key();
            it = m_raw.erase(it);
            rawDetailReplaced(rank);
            dropped = true;
        }
    }
    if (dropped) contentChanged();
    // The read in flight already covers these: let it finish.
    const bool covered =
        m_rawWatcher.isRunning() && asks.size() == m_rawPending.size() &&
        std::equal(asks.begin(), asks.end(), m_rawPending.begin(),
                   [](const RawAsk& a, const RawAsk& p) {
                       return a.rank == p.rank && p.startNs <= a.startNs && p.endNs >= a.endNs;
                   });
    if (covered) return;
    const quint64 generation = ++*m_rawGeneration;
    m_rawPending = asks;
    if (asks.empty()) {
        m_rawWatcher.cancel();
        return;
    }
    m_rawWatcher.setFuture(
        QtConcurrent::run([session = m_session, asks, generation, current = m_rawGeneration] {
            std::vector<RawRead> out;
            for (const RawAsk& ask : asks) {
                if (*current != generation) return std::vector<RawRead>{}; // superseded
                Digest::RawWindow raw =
                    Digest::readRawWindow(session->folder, ask.rank, ask.startNs, ask.endNs);
                out.push_back(
                    {ask, std::make_shared<const EventStore>(std::move(raw.events)), raw.error});
            }
            return out;
        }));
}

void TimelineView::rawDetailRead()
{
    if (m_rawWatcher.isCanceled() || !m_session) return;
    const std::vector<RawRead> reads = m_rawWatcher.result();
    if (reads.size() != m_rawPending.size()) return; // superseded
    m_rawPending.clear();
    const EventStore& store = m_session->events;
    for (const RawRead& read : reads) {
        if (!read.error.isEmpty()) {
            m_rawUnavailable.insert(read.ask.rank);
            if (m_rawNote.isEmpty()) {
                m_rawNote = tr("Full detail below the digest's resolution is not available: %1. "
                               "The timeline stays at the digest's resolution.")
                                .arg(read.error);
                Q_EMIT rawDetailUnavailable(m_rawNote);
            }
            continue;
        }
        RawDetail detail;
        detail.range = read.ask;
        detail.events = read.events;
        detail.colors = TimelinePainter::nameColors(*read.events);
        // The rank's lanes in the digest, in the order the folder reads them: matched by what
        // names a lane, each used once.
        std::vector<char> used(store.lanes.size(), 0);
        for (const Lane& lane : read.events->lanes) {
            int match = -1;
            for (std::size_t l = 0; l < store.lanes.size() && match < 0; ++l) {
                const Lane& d = store.lanes[l];
                if (!used[l] && d.rank == lane.rank && d.sourceIndex == lane.sourceIndex &&
                    d.kind == lane.kind && d.pid == lane.pid && d.tid == lane.tid &&
                    d.name == lane.name)
                    match = int(l);
            }
            if (match >= 0) used[std::size_t(match)] = 1;
            detail.laneOf.push_back(match);
        }
        m_raw.insert(read.ask.rank, std::move(detail));
        rawDetailReplaced(read.ask.rank);
    }
    findInRawDetail();
    contentChanged();
}

void TimelineView::findInRawDetail()
{
    for (RawDetail& raw : m_raw)
        if (m_findText.isEmpty())
            raw.findHits.reset();
        else if (!raw.findHits || raw.findHits->text != m_findText)
            raw.findHits = searchEvents(*raw.events, m_findText, clock());
}

bool TimelineView::stepRawHit(bool forward)
{
    if (!m_selected.raw) return false;
    const int rank = m_session->events.lanes[std::size_t(m_selected.lane)].rank;
    const RawDetail& raw = *m_raw.constFind(rank);
    if (!raw.findHits) return false;
    // Hits are in time order (start, then lane, then event): the first past the selection.
    const std::vector<EventHit> hits = raw.findHits->allHits();
    const auto k = std::size_t(std::find(raw.laneOf.begin(), raw.laneOf.end(), m_selected.lane) -
                               raw.laneOf.begin());
    const auto key = [&](int lane, std::int64_t event) {
        return std::tuple{raw.events->lanes[std::size_t(lane)].startNs[std::size_t(event)], lane,
                          event};
    };
    const auto here = key(int(k), m_selected.event);
    const auto after =
        std::upper_bound(hits.begin(), hits.end(), here, [&](const auto& h, const EventHit& hit) {
            return h < key(hit.lane, hit.event);
        });
    const auto before =
        std::lower_bound(hits.begin(), hits.end(), here, [&](const EventHit& hit, const auto& h) {
            return key(hit.lane, hit.event) < h;
        });
    // Hits of lanes the digest does not show are not drawn: passed over.
    std::vector<EventHit>::const_iterator next = hits.end();
    if (forward) {
        for (auto it = after; it != hits.end() && next == hits.end(); ++it)
            if (raw.laneOf[std::size_t(it->lane)] >= 0) next = it;
    } else {
        for (auto it = before; it != hits.begin() && next == hits.end();)
            if (raw.laneOf[std::size_t((--it)->lane)] >= 0) next = it;
    }
    if (next == hits.end()) return false;
    select({raw.laneOf[std::size_t(next->lane)], next->event, true});
    ensureVisible(m_selected);
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
    return true;
}

QString TimelineView::digestWindowsAt(int viewportX, int rank) const
{
    if (!m_session) return {};
    QStringList parts;
    const std::vector<Finding>& findings = m_session->analysis.findings;
    for (const Digest::Window& w : m_session->digestWindows) {
        if (rank >= 0 && w.rank != rank) continue;
        const int x1 = xForTime(displayTimeNs(w.rank, w.startNs));
        const int x2 = std::max(x1 + 2, xForTime(displayTimeNs(w.rank, w.endNs)));
        if (viewportX < x1 || viewportX >= x2) continue;
        if (w.finding < 0)
            parts.append(tr("the last events of rank %1").arg(w.rank));
        else if (std::size_t(w.finding) < findings.size())
            parts.append(tr("finding %1 on rank %2")
                             .arg(QString::fromStdString(findings[std::size_t(w.finding)].id))
                             .arg(w.rank));
    }
    if (parts.isEmpty()) return {};
    return tr("Full detail stored: %1").arg(parts.join(QStringLiteral(", ")));
}

QColor TimelineView::colorForEvent(TimelineEventRef ref) const
{
    const EventLane held = eventLane(ref);
    if (!held.lane) return {};
    const StringId name = held.lane->nameId[std::size_t(ref.event)];
    return QColor(held.colors ? (*held.colors)[std::size_t(name)] : m_painter.nameColor(name));
}

QColor TimelineView::laneBackground(int lane) const
{
    return TimelinePainter::laneBackground(m_layout, lane);
}

TimelineEventRef TimelineView::hitTest(QPoint pos) const
{
    if (!m_session || pos.x() < m_labelWidth) return {};
    const Row* row = rowAt(pos.y());
    if (!row || row->kind == TimelineLayout::RowKind::RankHeader) return {};
    // Where the original trace's events are drawn, they are what is hit.
    const TimelineFrame f = frame();
    return m_layout.eventAt(*row, m_zoom, pos.x() - m_labelWidth, offsetOf(row->rank),
                            [&f](int lane) {
                                const TimelineRawLane* raw = f.rawLaneShown(lane);
                                return raw ? raw->lane : nullptr;
                            });
}

QRectF TimelineView::eventRect(TimelineEventRef ref) const
{
    const EventLane held = eventLane(ref);
    if (!held.lane) return {};
    const Lane& lane = *held.lane;
    const int y = yForLane(ref.lane, lane.depth[std::size_t(ref.event)]);
    if (y < 0) return {};
    const std::int64_t off = offsetOf(lane.rank);
    const double x1 = m_labelWidth + m_zoom.timeToX(lane.startNs[std::size_t(ref.event)] + off);
    const double x2 =
        std::max(x1 + 1, m_labelWidth + m_zoom.timeToX(lane.endNs[std::size_t(ref.event)] + off));
    return QRectF(x1, y - kRowHeight / 2 + 1, x2 - x1, kRowHeight - 2);
}

void TimelineView::select(TimelineEventRef ref)
{
    if (ref.raw && !eventLane(ref).lane) ref = {}; // not (or no longer) read back
    m_selected = ref;
    m_selectedRank = -1;
    m_peers.clear();
    if (const Lane* lane = ref.raw ? eventLane(ref).lane : nullptr) {
        const auto i = std::size_t(ref.event);
        m_selectedRaw = {lane->startNs[i], lane->endNs[i], lane->sourceOffset[i], lane->depth[i]};
    } else if (m_session && ref.isValid()) {
        // A record points at the store's events only: an event read back has no peers.
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
    readSelectionDetails();
    viewport()->update();
    Q_EMIT selectionChanged(ref);
}

QString TimelineView::selectionDetailsHtml() const
{
    if (m_session && !m_selected.isValid() && m_selectedRank >= 0) {
        // A rank picked from the charts: what its group holds.
        const EventStore& store = m_session->events;
        int gpu = 0, cpu = 0;
        for (const Lane& lane : store.lanes)
            if (lane.rank == m_selectedRank) ++(lane.kind == LaneKind::GpuStream ? gpu : cpu);
        const qsizetype events = qsizetype(store.eventCountOfRank(m_selectedRank));
        const qsizetype collectives = qsizetype(store.collectiveCountOfRank(m_selectedRank));
        QString html = tr("<h3>Rank %1</h3><p>%2, %3, %4, %5.</p>")
                           .arg(m_selectedRank)
                           .arg(countText(gpu, tr("%1 GPU stream"), tr("%1 GPU streams")),
                                countText(cpu, tr("%1 CPU thread"), tr("%1 CPU threads")),
                                countText(events, tr("%1 event"), tr("%1 events")),
                                countText(collectives, tr("%1 collective"), tr("%1 collectives")));
        const QString banner = m_banners.value(m_selectedRank);
        if (!banner.isEmpty()) html += QStringLiteral("<p>%1</p>").arg(banner.toHtmlEscaped());
        return html;
    }
    if (!m_session) return tr("<i>Open a trace folder to see its events here.</i>");
    if (!m_selected.isValid()) {
        // Nothing picked yet: say what there is to pick instead of leaving the pane blank. The
        // counts first: the folded pane's one line keeps its head.
        const EventStore& store = m_session->events;
        // Nothing to click: what the lanes' pane says instead.
        if (store.lanes.empty())
            return QStringLiteral("<p>%1</p>")
                .arg(TimelinePainter::noEventsText(*m_session)
                         .toHtmlEscaped()
                         .replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        return tr("<p>%1, %2, %3, %4.</p><p><i>Click "
                  "an event to see its details; click a collective to compare its ranks.</i> "
                  "<b>Time per rank</b> breaks each rank's time down (whole run or the visible "
                  "window); <b>Collective by rank</b> shows the slowest collectives.</p>")
            .arg(countText(qsizetype(m_layout.ranks().size()), tr("%1 rank"), tr("%1 ranks")),
                 countText(qsizetype(store.lanes.size()), tr("%1 lane"), tr("%1 lanes")),
                 countText(qsizetype(store.eventCount()), tr("%1 event"), tr("%1 events")),
                 countText(qsizetype(store.collectives.size()), tr("%1 collective record"),
                           tr("%1 collective records")));
    }
    const EventStore& store = m_session->events;
    const EventLane held = eventLane(m_selected); // a raw selection's read is held while selected
    const Lane& lane = *held.lane;
    const auto i = std::size_t(m_selected.event);
    const auto esc = [](const QString& s) { return s.toHtmlEscaped(); };
    const auto line = [&](const QString& k, const QString& v) {
        return QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(esc(k), esc(v));
    };
    const std::int64_t startNs = displayTimeNs(lane.rank, lane.startNs[i]);
    QString html = QStringLiteral("<h3>%1</h3><table cellspacing=\"2\" cellpadding=\"2\">")
                       .arg(esc(qstr(held.strings->view(lane.nameId[i]))));
    html += line(tr("Category"), QString::fromLatin1(categoryLabel(lane.category[i])));
    html += line(tr("Rank"), QString::number(lane.rank));
    html += line(tr("Lane"), m_layout.laneName(m_selected.lane));
    html += line(tr("Start"), ZoomState::formatNs(startNs - m_zoom.traceStartNs(), 1) +
                                  tr(" (raw %1 ns)").arg(lane.startNs[i]));
    html +=
        line(tr("Clock"), m_useOffsets ? tr("aligned clocks: times from the trace start, each rank "
                                            "shifted by its estimated offset")
                                       : tr("raw timestamps: times from the trace start, each rank "
                                            "on its own clock"));
    html += line(tr("Duration"), ZoomState::formatNs(lane.endNs[i] - lane.startNs[i], 1));
    html += line(tr("Depth"), QString::number(lane.depth[i]));
    if (m_selected.raw)
        html += line(tr("Detail"), tr("read back from the original trace (below the digest's "
                                      "resolution)"));
    if (m_detailsProvider && m_detailRows) {
        for (const auto& [key, value] : *m_detailRows)
            html += line(key, value);
    } else if (m_detailsProvider) {
        html += line(tr("Args"), tr("reading from the trace file…"));
    } else {
        html += line(tr("Args"), tr("not available (no details provider for this source)"));
    }
    html += QStringLiteral("</table>");
    if (!m_peers.empty()) {
        const std::size_t record = m_collectiveAt.value(refKey(m_selected.lane, m_selected.event));
        const CollectiveRecord& mine = store.collectives[record];
        const auto sv = [&](StringId id) { return qstr(store.strings.view(id)); };
        // Every member of the matched group, as the analysis decides each one's state; without a
        // match, the records found on the timeline.
        const auto match = ChartData::findCollective(m_session->analysis, record);
        const CollectiveDetails details =
            match ? collectiveDetails(*m_session, m_session->analysis, match->first, match->second)
                  : collectiveDetailsOfRecords(*m_session, m_peers);
        // Named as the collective chart names it, so that the two read as the same group.
        const QString groupName = sv(mine.processGroupName);
        html += tr("<h4>Collective %1, %2, seq %3 on %4</h4>")
                    .arg(esc(sv(mine.op)), groupName.isEmpty() ? tr("unnamed group")
                                                               : tr("group %1").arg(esc(groupName)))
                    .arg(mine.seq)
                    .arg(countText(qsizetype(details.rows.size()), tr("%1 rank"), tr("%1 ranks")));
        // A rank arrives at a collective when it calls it on the host; the execution (the bar on
        // the collective's own thread or stream, whose Start is above) begins later, so the two
        // times are named apart.
        html += tr("<p><b>called</b>: when each rank called it on the host, its arrival; "
                   "<b>execution ended</b>: when its execution finished. The execution starts "
                   "after the call, so an execution bar's Start is later than its rank's call. "
                   "Times on %1.</p>")
                    .arg(clock().name());
        // The analysis may number the collective by issue order where the trace has its own
        // sequence numbers: name it as the Collective by rank tab (and the findings) do.
        if (match) {
            const MatchedCollective& row = m_session->analysis.groups[std::size_t(match->first)]
                                               .collectives[std::size_t(match->second)];
            html +=
                tr("<p>The analysis matched it across ranks as <b>%1</b>.</p>")
                    .arg(esc(ChartData::collective(*m_session, match->first, match->second, clock())
                                 .title));
            if (row.mismatch != MismatchKind::None && !row.detail.empty())
                html += tr("<p>Mismatch: %1.</p>").arg(esc(QString::fromStdString(row.detail)));
        }
        html += tr("<table cellspacing=\"2\" cellpadding=\"4\"><tr><th>rank</th><th>op</th>"
                   "<th>size</th><th>dtype</th><th>called</th><th>execution ended</th>"
                   "<th>state</th></tr>");
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        const auto fmt = [&](std::int64_t t) {
            return t < 0 ? tr("—") : ZoomState::formatNs(t - m_zoom.traceStartNs(), 1);
        };
        const auto text = [](const std::string& s) {
            return s.empty() ? tr("—") : QString::fromStdString(s).toHtmlEscaped();
        };
        for (const CollectiveRankRow& r : details.rows) {
            const std::int64_t enter = r.enterNs < 0 ? -1 : displayTimeNs(r.rank, r.enterNs);
            const std::int64_t exit = r.exitNs < 0 ? -1 : displayTimeNs(r.rank, r.exitNs);
            // A record without the call or without the execution has the other's time there
            // (collectiveEnterExit): said in the cell, so that it is not read as the named one.
            const CollectiveRecord* record =
                r.record < 0 ? nullptr : &store.collectives[std::size_t(r.record)];
            QString called = fmt(enter), ended = fmt(exit);
            if (record && enter >= 0 && record->issueStartNs < 0)
                called += tr(" (execution start: no call recorded)");
            if (record && exit >= 0 && record->execEndNs < 0)
                ended += tr(" (the call's return: no execution end recorded)");
            if (enter >= 0) {
                first = std::min(first, enter);
                last = std::max(last, enter);
            }
            const QString ranks = QString::fromStdString(formatRanks(r.waitedFor));
            const QString note = QString::fromStdString(r.note);
            QString state;
            switch (r.state) {
            case CollectiveRankState::Completed:
                state = tr("completed");
                break;
            case CollectiveRankState::Started:
                state = tr("started");
                break;
            case CollectiveRankState::Issued:
                state = tr("issued");
                break;
            case CollectiveRankState::LoggedOnly:
                // An NCCL COLL line is printed when the call is enqueued: "issued" is all it
                // can tell, not a call seen to be stuck. The line says where to read the rest.
                state = tr("issued (NCCL log, completion not shown)") +
                        (note.isEmpty() ? QString() : QStringLiteral(": ") + note);
                break;
            case CollectiveRankState::WaitedFor:
                state = r.waitedFor.empty() ? tr("waited in it, did not complete it (%1)")
                                                  .arg(QString::fromStdString(r.finding))
                                            : tr("waited for %1, did not complete it (%2)")
                                                  .arg(ranks, QString::fromStdString(r.finding));
                break;
            case CollectiveRankState::NeverArrived:
                state = tr("never arrived");
                break;
            case CollectiveRankState::NoRecord:
                state = tr("no record: no trace, dump or log lines for this group (it left %1)")
                            .arg(note);
                break;
            }
            const QString size = r.inNelems < 0 ? tr("—")
                                 : r.outNelems >= 0 && r.outNelems != r.inNelems
                                     ? QStringLiteral("%1 → %2").arg(r.inNelems).arg(r.outNelems)
                                     : QString::number(r.inNelems);
            const bool strong = r.state == CollectiveRankState::NeverArrived ||
                                r.state == CollectiveRankState::NoRecord;
            html += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td>"
                                   "<td>%6</td><td>%7</td></tr>")
                        .arg(r.rank)
                        .arg(text(r.op), size, text(r.dtype), esc(called), esc(ended),
                             strong ? QStringLiteral("<b>%1</b>").arg(esc(state)) : esc(state));
        }
        html += QStringLiteral("</table>");
        if (!details.unnamedMembers.empty())
            html += QStringLiteral("<p>%1.</p>")
                        .arg(esc(QString::fromStdString(details.unnamedMembers)));
        // Raw timestamps mix the ranks' clocks, so the skew then includes their offsets.
        if (last >= first)
            html += (m_useOffsets
                         ? tr("<p>Arrival skew (first to last rank to call it): <b>%1</b></p>")
                         : tr("<p>Arrival skew (first to last rank to call it, raw timestamps: "
                              "includes the clocks' offsets): <b>%1</b></p>"))
                        .arg(ZoomState::formatDuration(last - first));
    }
    return html;
}

void TimelineView::setFindText(const QString& text)
{
    if (text == m_findText) return;
    m_findText = text;
    if (!m_raw.isEmpty()) {
        findInRawDetail();
        contentChanged();
    }
    if (m_session && !text.isEmpty()) {
        m_search->search(m_session, text, clock(), findLanes());
    } else {
        m_search->clear();
        m_currentHit = -1;
        contentChanged();
    }
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
}

std::vector<char> TimelineView::findLanes() const
{
    // The lanes the layout shows (a folded rank's included: stepping to a hit unfolds it). With
    // ranks brushed on the overview or one job shown of several, a hit elsewhere would be in no
    // row (and off this job's time scale), so those lanes are not searched.
    const LaneJobs& jobs = m_layout.laneJobs();
    if (!m_session || (m_rankFilter.isEmpty() && (!jobs.mixed() || jobs.shown < 0))) return {};
    std::vector<char> lanes(m_session->events.lanes.size(), 0);
    for (std::size_t r = 0; r < m_layout.ranks().size(); ++r)
        for (int lane : m_layout.lanesOfRankIndex(r))
            lanes[std::size_t(lane)] = 1;
    return lanes;
}

std::vector<TimelineEventRef> TimelineView::findHits() const
{
    const EventSearchResult& result = m_search->result();
    std::vector<TimelineEventRef> refs;
    refs.reserve(result.hitCount());
    for (std::size_t i = 0; i < result.hitCount(); ++i) {
        const EventHit h = result.hit(i);
        refs.push_back({h.lane, h.event});
    }
    return refs;
}

void TimelineView::findNext()
{
    if (stepRawHit(true)) return;
    const int count = findHitCount();
    if (count == 0) return;
    // While the search runs, the last hit found so far waits for the next batch instead of
    // wrapping around to the first. Hits in ranks the brush hides are stepped over.
    for (int tries = 0; tries < count; ++tries) {
        if (m_currentHit + 1 < count)
            ++m_currentHit;
        else if (!isFinding())
            m_currentHit = 0;
        else
            break;
        if (isHitShown(m_currentHit)) break;
    }
    if (m_currentHit >= 0 && isHitShown(m_currentHit)) showCurrentHit();
}

void TimelineView::findPrevious()
{
    if (stepRawHit(false)) return;
    const int count = findHitCount();
    if (count == 0) return;
    for (int tries = 0; tries < count; ++tries) {
        m_currentHit = m_currentHit <= 0 ? count - 1 : m_currentHit - 1;
        if (isHitShown(m_currentHit)) {
            showCurrentHit();
            return;
        }
    }
}

void TimelineView::showCurrentHit()
{
    const EventHit h = m_search->result().hit(std::size_t(m_currentHit));
    select({h.lane, h.event});
    ensureVisible(m_selected);
    Q_EMIT findHitsChanged(findHitCount(), m_currentHit);
}

void TimelineView::revealEvent(TimelineEventRef ref)
{
    if (!eventLane(ref).lane) return;
    select(ref);
    ensureVisible(ref);
}

void TimelineView::selectRank(int rank)
{
    const std::vector<int>& ranks = m_layout.ranks();
    if (rank >= 0 && std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) rank = -1;
    if (rank >= 0 && m_collapsed.remove(rank)) {
        relayout();
        contentChanged();
    }
    m_selected = {};
    m_peers.clear();
    m_selectedRank = rank;
    if (rank >= 0) verticalScrollBar()->setValue(m_layout.rankContentRange(rank).first);
    viewport()->update();
    Q_EMIT selectionChanged(m_selected);
}

int TimelineView::markerAt(QPoint pos) const
{
    if (!m_session || pos.x() < m_labelWidth || pos.y() < kHeaderHeight) return -1;
    const Row* row = rowAt(pos.y());
    if (!row) return -1;
    const bool header = row->kind == TimelineLayout::RowKind::RankHeader;
    if (!header && hitTest(pos).isValid()) return -1;
    const TimelineFrame f = frame();
    // In the rank's header a label is its marker's, wherever it was moved to.
    if (header)
        for (const TimelinePainter::MarkerLabel& l :
             TimelinePainter::markerLabels(f, row->rank, viewport()->width(), fontMetrics()))
            if (pos.x() >= l.x1 && pos.x() < l.x2) return l.marker;
    // The last drawn marker is on top.
    for (int i = int(m_markers.size()) - 1; i >= 0; --i) {
        const TimelineMarker& m = m_markers[i];
        if (!m.ranks.isEmpty() && !m.ranks.contains(row->rank)) continue;
        const auto [x1, x2] = TimelinePainter::markerXRange(f, m, row->rank, viewport()->width());
        if (x2 > m_labelWidth && pos.x() >= x1 && pos.x() < x2) return i;
    }
    return -1;
}

void TimelineView::ensureVisible(TimelineEventRef ref)
{
    const Lane& lane = *eventLane(ref).lane;
    // Its rank unfolded and its level shown.
    const bool unfold = m_collapsed.remove(lane.rank);
    if (lane.depth[std::size_t(ref.event)] >= m_layout.shownLevels(ref.lane))
        m_toggledLanes.insert(ref.lane);
    if (unfold || lane.depth[std::size_t(ref.event)] >= m_layout.shownLevels(ref.lane)) {
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
    const int rowY = m_layout.rowTop(ref.lane, 0);
    const int visibleH = viewport()->height() - kHeaderHeight;
    if (rowY < scrollY() || rowY + kRowHeight > scrollY() + visibleH)
        verticalScrollBar()->setValue(rowY - visibleH / 3);
}

void TimelineView::fitSelectionOrAll()
{
    if (m_zoom.hasSelection() && m_zoom.selectionEndNs() > m_zoom.selectionStartNs()) {
        setVisibleRange(m_zoom.selectionStartNs(), m_zoom.selectionEndNs());
    } else if (m_selected.isValid()) {
        const Lane& lane = *eventLane(m_selected).lane;
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
        m_zoom.setWidthPx(trackWidth());
        QPainter p(&m_base);
        p.setFont(font());
        p.setPen(palette().color(QPalette::WindowText));
        m_painter.paint(p, m_base.size(), frame(), &m_base);
        m_baseKey = key;
        if (m_session && !m_session->digestReductions.empty()) m_rawTimer->start();
    }
    QPainter p(viewport());
    p.drawImage(0, 0, m_base);
    renderOverlay(p);
}

TimelineLayout TimelineView::wholeTimelineLayout() const
{
    TimelineLayout layout;
    if (m_session) layout.build(&m_session->events, m_collapsed, m_toggledLanes);
    return layout;
}

ZoomState TimelineView::wholeTimelineZoom() const
{
    ZoomState zoom = m_zoom;
    zoom.setWidthPx(trackWidth());
    zoom.fitAll();
    return zoom;
}

int TimelineView::wholeTimelineLabelWidth() const
{
    // Room for every lane's name in full.
    return std::clamp(widestLaneName() + 60, m_labelWidth, int(kMaxExportLabelWidth));
}

TimelineFrame TimelineView::wholeTimelineFrame(const TimelineLayout& layout) const
{
    TimelineFrame f = frame();
    f.layout = &layout;
    f.zoom = wholeTimelineZoom();
    f.scrollY = 0;
    f.labelWidth = wholeTimelineLabelWidth();
    return f;
}

QSize TimelineView::wholeTimelineSize(const QImage& above) const
{
    return wholeTimelineSize(wholeTimelineLayout(), above);
}

QSize TimelineView::wholeTimelineSize(const TimelineLayout& layout, const QImage& above) const
{
    return {wholeTimelineLabelWidth() + trackWidth(),
            above.height() + kHeaderHeight + layout.contentHeight()};
}

bool TimelineView::exportPng(const QString& path, QString* error, const QImage& above)
{
    const TimelineLayout layout = wholeTimelineLayout();
    const TimelineFrame f = wholeTimelineFrame(layout);
    const QSize size = wholeTimelineSize(layout, above);
    if (qint64(size.width()) * size.height() * 4 > kMaxExportPngBytes) {
        if (error)
            *error = tr("The whole timeline is %1 × %2 px, too large for a PNG: export it as SVG, "
                        "or fold ranks first.")
                         .arg(size.width())
                         .arg(size.height());
        return false;
    }
    QImage image(size, QImage::Format_RGB32);
    image.fill(palette().color(QPalette::Base));
    {
        QPainter p(&image);
        p.drawImage(0, 0, above);
    }
    // The timeline below `above`, painted into the same pixels.
    QImage below(image.scanLine(above.height()), size.width(), size.height() - above.height(),
                 image.bytesPerLine(), QImage::Format_RGB32);
    {
        QPainter p(&below);
        p.setFont(font());
        p.setPen(palette().color(QPalette::WindowText));
        m_painter.paint(p, below.size(), f, &below);
    }
    QImageWriter writer(path, "png");
    if (writer.write(image)) return true;
    if (error) *error = writer.errorString();
    return false;
}

bool TimelineView::exportSvg(const QString& path, QString* error, const QImage& above)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        if (error) *error = file.errorString();
        return false;
    }
    const TimelineLayout layout = wholeTimelineLayout();
    const QSize size = wholeTimelineSize(layout, above);
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(), size));
    svg.setTitle(tr("RankScope timeline"));
    {
        QPainter p(&svg);
        p.drawImage(0, 0, above);
        p.translate(0, above.height());
        p.setFont(font());
        p.setPen(palette().color(QPalette::WindowText));
        m_painter.paint(p, QSize(size.width(), size.height() - above.height()),
                        wholeTimelineFrame(layout));
    }
    if (file.error() == QFileDevice::NoError && file.flush()) return true;
    if (error) *error = file.errorString();
    return false;
}

QImage TimelineView::renderImage()
{
    QImage image(viewport()->size(), QImage::Format_RGB32);
    viewport()->render(&image);
    return image;
}

void TimelineView::renderOverlay(QPainter& p)
{
    if (!m_session) return;
    const int w = viewport()->width(), h = viewport()->height();
    p.setClipRect(m_labelWidth, kHeaderHeight, w - m_labelWidth, h - kHeaderHeight);
    const EventStore& store = m_session->events;
    // The same collective on every rank, and the arrival skew between first and last.
    if (!m_peers.empty()) {
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        p.setPen(QPen(colors::kArrivalSkew, 2));
        for (std::size_t i : m_peers) {
            const CollectiveRecord& c = store.collectives[i];
            if (const std::int64_t enterNs = collectiveEnterExit(c).first; enterNs >= 0) {
                const std::int64_t enter = displayTimeNs(c.rank, enterNs);
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
            const QFontMetrics fm(font());
            // Beside the ruler's tick labels rather than over them, as near the first arrival
            // as they leave room for: the skew's length alone where the ticks are too close for
            // the whole title (the details name it), over them only where even that has none.
            std::vector<std::pair<int, int>> tickLabels;
            for (const TimelinePainter::RulerTick& tick :
                 TimelinePainter::rulerTicks(frame(), w, fm))
                if (!tick.label.isEmpty()) {
                    const auto [from, to] = TimelinePainter::rulerLabelSpan(tick, fm);
                    tickLabels.emplace_back(from - 2, to + 2);
                }
            const QString skew = ZoomState::formatDuration(last - first);
            QString text = tr("arrival skew %1").arg(skew);
            QRect box;
            for (const QString& candidate : {text, skew}) {
                const int tw = fm.horizontalAdvance(candidate) + 10;
                const int wanted = std::clamp(x1 + 4, m_labelWidth, std::max(m_labelWidth, w - tw));
                const std::optional<int> free =
                    TimelinePainter::nearestFreeX(wanted, tw, m_labelWidth, w, tickLabels);
                if (free || box.isNull()) {
                    text = candidate;
                    box = QRect(free.value_or(wanted), kOverviewHeight + 1, tw, kRulerHeight - 3);
                }
                if (free) break;
            }
            p.setClipRect(m_labelWidth, kOverviewHeight, w - m_labelWidth, kRulerHeight);
            p.fillRect(box, colors::kArrivalSkew);
            p.setPen(Qt::white);
            p.drawText(box, Qt::AlignCenter, text);
            p.setClipRect(m_labelWidth, kHeaderHeight, w - m_labelWidth, h - kHeaderHeight);
        }
    }
    if (m_selectedRank >= 0) {
        const auto [top, bottom] = m_layout.rankContentRange(m_selectedRank);
        if (top >= 0) {
            const int sy = scrollY();
            p.setClipRect(0, kHeaderHeight, w, h - kHeaderHeight);
            p.setPen(QPen(colors::kSelection, 2));
            p.drawRect(QRect(1, kHeaderHeight + top - sy + 1, w - 2, bottom - top - 2));
            p.setClipRect(m_labelWidth, kHeaderHeight, w - m_labelWidth, h - kHeaderHeight);
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
        const EventLane held = eventLane(m_hover);
        const Lane& lane = *held.lane;
        const auto i = std::size_t(m_hover.event);
        const QFontMetrics fm(font());
        const QString text =
            fm.elidedText(qstr(held.strings->view(lane.nameId[i])), Qt::ElideMiddle, 420) +
            QStringLiteral("  ") + ZoomState::formatDuration(lane.endNs[i] - lane.startNs[i]);
        // Under the event's row; in a folded rank's summary row, under the cursor's.
        QRectF er = eventRect(m_hover);
        if (er.isNull()) er = QRectF(m_mouseX, m_mouseY - kRowHeight / 2, 1, kRowHeight);
        const int tw = fm.horizontalAdvance(text) + 10;
        int x = std::clamp(m_mouseX + 12, m_labelWidth, std::max(m_labelWidth, w - tw));
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
    // Made shorter (the details pane unfolding under the lanes on a click): the selected event,
    // in view before, is scrolled up into view again.
    const int shorter = event->oldSize().height() - event->size().height();
    if (shorter <= 0 || !m_selected.isValid()) return;
    const QRectF selected = eventRect(m_selected);
    const int bottom = int(std::ceil(selected.bottom()));
    const int height = viewport()->height();
    if (selected.isValid() && selected.top() >= kHeaderHeight && bottom > height &&
        bottom <= height + shorter)
        verticalScrollBar()->setValue(verticalScrollBar()->value() + bottom - height + 2);
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
    if (pos.y() < kOverviewHeight && pos.x() >= m_labelWidth) {
        m_drag = Drag::Overview;
        mouseMoveEvent(event);
        return;
    }
    if (onLabelEdge(pos)) {
        m_drag = Drag::ResizeLabels;
        return;
    }
    if (pos.x() < m_labelWidth) {
        const Row* row = rowAt(pos.y());
        if (!row) return;
        if (row->kind != TimelineLayout::RowKind::Lane)
            setRankCollapsed(row->rank, !isRankCollapsed(row->rank));
        else if (m_layout.isLaneToggleable(row->lane))
            setLaneToggled(row->lane, !m_toggledLanes.contains(row->lane));
        return;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
        m_drag = Drag::Measure;
        m_measureStartNs = m_zoom.xToTime(pos.x() - m_labelWidth);
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
    m_mouseY = pos.y();
    switch (m_drag) {
    case Drag::Pan: {
        const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
        m_zoom.panByPx(double(m_lastPos.x() - pos.x()));
        verticalScrollBar()->setValue(scrollY() + m_lastPos.y() - pos.y());
        rangeMaybeChanged(s, e);
        break;
    }
    case Drag::Measure:
        m_zoom.setSelection(m_measureStartNs, m_zoom.xToTime(pos.x() - m_labelWidth));
        viewport()->update();
        break;
    case Drag::Overview: {
        const double frac = double(pos.x() - m_labelWidth) / trackWidth();
        const auto centre =
            m_zoom.traceStartNs() +
            std::int64_t(frac * double(m_zoom.traceEndNs() - m_zoom.traceStartNs()));
        const std::int64_t span = m_zoom.visibleSpanNs();
        setVisibleRange(centre - span / 2, centre - span / 2 + span);
        break;
    }
    case Drag::ResizeLabels:
        // The track keeps at least half the view.
        setLabelWidth(std::min(pos.x(), viewport()->width() / 2));
        break;
    case Drag::None: {
        if (onLabelEdge(pos))
            viewport()->setCursor(Qt::SplitHCursor);
        else
            viewport()->unsetCursor();
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
    if (pos.x() < m_labelWidth || (event->modifiers() & Qt::ShiftModifier)) {
        verticalScrollBar()->setValue(scrollY() - delta / 2);
        return;
    }
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    m_zoom.zoomAt(pos.x() - m_labelWidth, std::pow(kZoomStep, delta / 120.0));
    rangeMaybeChanged(s, e);
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event)
{
    const std::int64_t s = m_zoom.visibleStartNs(), e = m_zoom.visibleEndNs();
    const bool cursorInTracks = m_mouseX >= m_labelWidth && m_mouseX < viewport()->width();
    const double anchorX = cursorInTracks ? m_mouseX - m_labelWidth : trackWidth() / 2.0;
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

bool TimelineView::onLabelEdge(QPoint pos) const
{
    // Inside the column, so that the track's first pixels stay clickable.
    return pos.y() >= kHeaderHeight && pos.x() < m_labelWidth && pos.x() >= m_labelWidth - 5;
}

bool TimelineView::viewportEvent(QEvent* event)
{
    if (event->type() != QEvent::ToolTip || !m_session)
        return QAbstractScrollArea::viewportEvent(event);
    // The name column: a lane's full name and metadata, what a click does.
    const auto* help = static_cast<QHelpEvent*>(event);
    const Row* row = help->pos().x() < m_labelWidth ? rowAt(help->pos().y()) : nullptr;
    QString text;
    const QPoint pos = help->pos();
    if (pos.y() >= kOverviewHeight && pos.y() < kHeaderHeight && pos.x() >= m_labelWidth) {
        // The ruler: the digest's full-detail windows, and why deeper detail is missing.
        QStringList lines;
        if (const QString windows = digestWindowsAt(pos.x()); !windows.isEmpty())
            lines.append(windows);
        if (!m_rawNote.isEmpty()) lines.append(m_rawNote);
        text = lines.join(QLatin1Char('\n'));
    } else if (row && row->kind == TimelineLayout::RowKind::Lane) {
        text = m_layout.laneDescription(row->lane);
        if (m_layout.isLaneToggleable(row->lane))
            text += QLatin1Char('\n') +
                    (m_layout.shownLevels(row->lane) < m_layout.levelCount(row->lane)
                         ? tr("Click to show all levels.")
                         : tr("Click to fold to one row."));
    } else if (row) {
        text = isRankCollapsed(row->rank)
                   ? tr("%1: click to unfold.").arg(m_layout.rankTitle(row->rank))
                   : tr("%1: click to fold to one summary row.").arg(m_layout.rankTitle(row->rank));
    } else if (const Row* header = rowAt(pos.y());
               header && header->kind == TimelineLayout::RowKind::RankHeader) {
        // The band along the header: this rank's full-detail windows.
        text = digestWindowsAt(pos.x(), header->rank);
    }
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), text, viewport());
    return true;
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
