#pragma once

#include "model/find/eventsearch.h"
#include "model/tracesession.h"
#include "model/zoomstate.h"
#include "views/timeline/timelinelayout.h"
#include "views/timeline/timelinepainter.h"

#include <QAbstractScrollArea>
#include <QColor>
#include <QFutureWatcher>
#include <QHash>
#include <QImage>
#include <QList>
#include <QPair>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace rankscope {

// Extra key/value details (e.g. the event's args, read back from its source) for the details
// pane; the main window wires the reader's implementation. Called in a worker thread with the
// lane that holds the event (the store's, or a digest's detail read back from the original
// trace) and its index there: reading a .gz trace back can take long.
using TimelineDetailRows = QList<QPair<QString, QString>>;
using TimelineDetailsProvider =
    std::function<TimelineDetailRows(const TraceSession&, const Lane&, std::size_t event)>;

// Every rank of a session on one zoomable timeline: the input (mouse, keys, scrolling), the
// selection and find. Which rows exist is TimelineLayout's; drawing them TimelinePainter's.
class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    static constexpr int kOverviewHeight = TimelineFrame::kOverviewHeight;
    static constexpr int kRulerHeight = TimelineFrame::kRulerHeight;
    static constexpr int kHeaderHeight = TimelineFrame::kHeaderHeight;
    static constexpr int kLabelWidth = 180; // the name column's width until it is dragged
    static constexpr int kMinLabelWidth = 80;
    static constexpr int kMaxFitLabelWidth = 300; // a new session's names fit up to this
    static constexpr int kMaxExportLabelWidth = 600;
    // A PNG of the whole timeline is held in memory first; above this an SVG is the way.
    static constexpr qint64 kMaxExportPngBytes = qint64(1) << 30;
    static constexpr int kRankHeaderHeight = TimelineLayout::kRankHeaderHeight;
    static constexpr int kRowHeight = TimelineLayout::kRowHeight;

    explicit TimelineView(QWidget* parent = nullptr);
    ~TimelineView() override;

    void setSession(SessionPtr session);
    SessionPtr session() const { return m_session; }

    // offsetNs[rank] is added to that rank's raw timestamps to put it on the common clock.
    void setClockOffsets(const QHash<int, qint64>& offsetNs);
    QHash<int, qint64> clockOffsets() const { return m_offsetNs; }
    void setUseClockOffsets(bool use); // false: raw timestamps
    bool useClockOffsets() const { return m_useOffsets; }
    // The clock shown: the offsets when they are used, none for raw timestamps.
    TimelineClock clock() const;
    std::int64_t displayTimeNs(int rank, std::int64_t rawNs) const;

    void setMarkers(const QList<TimelineMarker>& markers);
    QList<TimelineMarker> markers() const { return m_markers; }
    // Shows [t0, t1] of the common clock with a margin and scrolls to the first of `ranks`.
    void showRange(std::int64_t startNs, std::int64_t endNs, const QList<int>& ranks = {});
    void setRankBanner(int rank, const QString& text); // empty text removes it
    void setRankCollapsed(int rank, bool collapsed);
    // Where the folder mixes jobs: shows only `job`'s lanes, its time range as the whole trace
    // (-1: every job on one axis). The rank overview's job selector sets it.
    void setShownJob(int job);
    int shownJob() const { return m_layout.laneJobs().shown; }
    // Shows only these ranks' groups (the ranks brushed on the rank overview); empty: all.
    void setRankFilter(const QList<int>& ranks);
    QList<int> rankFilter() const { return m_rankFilter.values(); }
    bool isRankCollapsed(int rank) const { return m_collapsed.contains(rank); }
    const TimelineLayout& layout() const { return m_layout; }
    // Shows `lane` the other way from its default (TimelineLayout); a click on its name does.
    void setLaneToggled(int lane, bool toggled);
    // The name column's width (dragging its edge changes it); the track starts there.
    int labelWidth() const { return m_labelWidth; }
    void setLabelWidth(int px);
    void setDetailsProvider(TimelineDetailsProvider provider);

    ZoomState& zoom() { return m_zoom; }
    const ZoomState& zoom() const { return m_zoom; }
    void setVisibleRange(std::int64_t startNs, std::int64_t endNs);

    // Geometry in viewport coordinates.
    int trackWidth() const;
    int xForTime(std::int64_t displayNs) const;
    // Vertical centre of `depth`'s row of `lane`; -1 when the lane is collapsed or unknown.
    int yForLane(int lane, int depth = 0) const;
    TimelineEventRef hitTest(QPoint viewportPos) const;
    QColor colorForEvent(TimelineEventRef ref) const;
    QColor laneBackground(int lane) const;

    void select(TimelineEventRef ref);
    TimelineEventRef selected() const { return m_selected; }
    // Selects `ref` and scrolls and pans so that it is on screen.
    void revealEvent(TimelineEventRef ref);
    // Outlines `rank`'s group and scrolls to it (expanding it); -1 clears. Selecting an event
    // clears it.
    void selectRank(int rank);
    int selectedRank() const { return m_selectedRank; }
    // Index into markers() of the marker under `viewportPos`: its label in the rank header, or
    // its span where no event is; -1 when none.
    int markerAt(QPoint viewportPos) const;
    // Indices into events.collectives of the same collective (group + seq) on every rank, when
    // the selection is the execution or issue of one; empty otherwise.
    std::vector<std::size_t> selectedCollectivePeers() const { return m_peers; }
    // The selection's details; the provider's rows read "reading…" until detailsRead().
    QString selectionDetailsHtml() const;

    // Finds the events named like `text` in a worker (EventSearch); the hits arrive in batches,
    // earliest first, each announced by findHitsChanged; the previous ones stay shown until the
    // first batch. Next and previous step through the hits found so far. Where the folder mixes
    // jobs and one is shown, only its lanes are searched (showing another job searches again).
    void setFindText(const QString& text);
    // A find is waiting for the typing to pause or running (more hits may come).
    bool isFinding() const { return m_search->isBusy(); }
    int findHitCount() const { return int(m_search->result().hitCount()); }
    int currentFindHit() const { return m_currentHit; }
    std::vector<TimelineEventRef> findHits() const;
    void findNext();
    void findPrevious();

    // A digest's detail below its resolution. When the view is zoomed past the resolution of a
    // rank on screen (an event as long as the shortest the digest kept would be over a pixel
    // wide, at least below kRawDetailNsPerPx) outside the rank's stored windows, the rank's
    // events over the view (widened by half a view each side) are read again from the original
    // trace in a worker (Digest::readRawWindow) and drawn in place of the digest's; the next zoom
    // or scroll supersedes a read in flight. At most kMaxRawDetailRanks ranks at once. Their
    // events are hit, selected (a raw TimelineEventRef) and detailed like the store's, and the
    // find outlines its hits among them; from a selected one, find next / previous step through
    // its read's hits first, then go on with the trace's (findHits()). A newer
    // read of the rank keeps the selection on the same event (by its offset in the source) when
    // it holds it, and drops it otherwise, as letting the detail go does.
    static constexpr double kRawDetailNsPerPx = 10'000;
    static constexpr int kMaxRawDetailRanks = 8;
    // The events read for `rank` and the range [startNs, endNs] (the rank's clock) they cover;
    // nullptr when the digest's are drawn.
    const EventStore* rawDetail(int rank, std::int64_t* startNs = nullptr,
                                std::int64_t* endNs = nullptr) const;
    bool isReadingRawDetail() const { return m_rawWatcher.isRunning(); }
    // Why the original trace could not be read (said once per session), empty if it could.
    QString rawDetailNote() const { return m_rawNote; }
    // The digest's full-detail windows under `viewportX` (of `rank` only, when given), as the
    // ruler's tooltip names them; empty when none.
    QString digestWindowsAt(int viewportX, int rank = -1) const;

    // The current view as an image (what the user sees, overlays included).
    QImage renderImage();
    // The whole timeline: every rank (brushed or not) and lane over the whole trace, with every
    // lane's name in full, the track as wide as on screen; `above` (the rank overview on the
    // same time axis) on top when given. Its size, and the picture written as PNG or SVG (false,
    // with the reason in `error`, when it cannot be written).
    QSize wholeTimelineSize(const QImage& above = {}) const;
    // The time axis and label column of the whole-timeline picture, for what goes `above`.
    ZoomState wholeTimelineZoom() const;
    int wholeTimelineLabelWidth() const;
    bool exportPng(const QString& path, QString* error = nullptr, const QImage& above = {});
    bool exportSvg(const QString& path, QString* error = nullptr, const QImage& above = {});

Q_SIGNALS:
    void selectionChanged(rankscope::TimelineEventRef ref);
    void rangeChanged(qint64 startNs, qint64 endNs);
    void findHitsChanged(int count, int current);
    void findRequested();
    void markerClicked(int index, const QString& id);
    // The offsets or their use changed: times shown elsewhere must follow clock().
    void clockChanged();
    // The provider's rows for the selection arrived from the worker.
    void detailsRead();
    void labelWidthChanged(int px);
    // The original trace of a digest could not be read again: the view stays at the digest's
    // resolution. Emitted once per session.
    void rawDetailUnavailable(const QString& why);

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void leaveEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    bool viewportEvent(QEvent* event) override;

private:
    using Row = TimelineLayout::Row;
    void relayout();
    bool onLabelEdge(QPoint viewportPos) const;
    int widestLaneName() const; // px
    void fitLabelWidth();
    void updateTraceRange();
    void updateScrollBar();
    void contentChanged();
    // Selects and reveals find hit m_currentHit.
    void showCurrentHit();
    // The lanes find searches, as EventSearch takes them: those the layout shows when ranks are
    // brushed or one job of several is shown (empty: every lane).
    std::vector<char> findLanes() const;
    // Searches again for the find text in findLanes() (they changed).
    void findInShownLanes();
    // Find hit `hit` is in a lane the layout shows (its rank not hidden by the brush).
    bool isHitShown(int hit) const;
    void rangeMaybeChanged(std::int64_t oldStart, std::int64_t oldEnd);
    int scrollY() const;
    const Row* rowAt(int viewportY) const;
    std::int64_t offsetOf(int rank) const;
    // What the viewport shows, for the painter.
    TimelineFrame frame() const;
    // Every rank's rows, whatever is brushed, for the whole-timeline picture.
    TimelineLayout wholeTimelineLayout() const;
    TimelineFrame wholeTimelineFrame(const TimelineLayout& layout) const;
    QSize wholeTimelineSize(const TimelineLayout& layout, const QImage& above) const;
    QRectF eventRect(TimelineEventRef ref) const; // viewport coordinates, min 1 px wide
    void renderOverlay(QPainter& p);
    void ensureVisible(TimelineEventRef ref);
    void fitSelectionOrAll();

    SessionPtr m_session;
    ZoomState m_zoom;
    QHash<int, qint64> m_offsetNs;
    bool m_useOffsets = true;
    QList<TimelineMarker> m_markers;
    QHash<int, QString> m_banners;
    QSet<int> m_collapsed;
    QSet<int> m_rankFilter;
    QSet<int> m_toggledLanes;
    int m_labelWidth = kLabelWidth;
    TimelineDetailsProvider m_detailsProvider;
    // The provider's rows for the selection, read in a worker (none until they arrive).
    void readSelectionDetails();
    QFutureWatcher<TimelineDetailRows> m_detailsWatcher;
    std::optional<TimelineDetailRows> m_detailRows;

    TimelineLayout m_layout;
    TimelinePainter m_painter;

    // The lane that holds `ref`'s event: the store's, or for a raw ref the lane of the rank's
    // detail read back (lane null when that is gone), with its names, their colours and the store
    // that owns it (null for the session's).
    struct EventLane {
        const Lane* lane = nullptr;
        const StringTable* strings = nullptr;
        std::shared_ptr<const EventStore> owner;
        const std::vector<QRgb>* colors = nullptr; // null: the painter's
    };
    EventLane eventLane(TimelineEventRef ref) const;
    // After `rank`'s detail was read again or let go: the selected (and hovered) event of it
    // follows to the new read, or is dropped.
    void rawDetailReplaced(int rank);

    // A digest's detail read back from the original traces (see rawDetail()).
    struct RawAsk {
        int rank = -1;
        std::int64_t startNs = 0, endNs = 0;
    };
    struct RawRead {
        RawAsk ask;
        std::shared_ptr<const EventStore> events;
        QString error;
    };
    struct RawDetail {
        RawAsk range;
        std::shared_ptr<const EventStore> events;
        std::vector<int> laneOf; // per lane of `events`, the session's lane (-1: none)
        std::vector<QRgb> colors;
        std::optional<EventSearchResult> findHits; // of the find's text in `events`
    };
    // The find's hits in every read (a read is a view's worth of one rank: searched here).
    void findInRawDetail();
    // From a raw selection, the next (or previous) find hit of its read; false when there is
    // none that way, or the selection is not raw.
    bool stepRawHit(bool forward);
    void requestRawDetail();
    void rawDetailRead();
    QTimer* m_rawTimer = nullptr;
    QFutureWatcher<std::vector<RawRead>> m_rawWatcher;
    std::vector<RawAsk> m_rawPending;
    std::shared_ptr<std::atomic<quint64>> m_rawGeneration =
        std::make_shared<std::atomic<quint64>>(0);
    QHash<int, RawDetail> m_raw; // by rank
    QSet<int> m_rawUnavailable;
    QString m_rawNote;

    QHash<qint64, std::size_t> m_collectiveAt; // (lane << 40 | event) -> collective index
    TimelineEventRef m_selected;
    // Of a raw selection: where the event is in its source, to find it in a newer read.
    struct RawIdentity {
        std::int64_t startNs = 0, endNs = 0, sourceOffset = -1;
        int depth = 0;
        bool operator==(const RawIdentity&) const = default;
    };
    RawIdentity m_selectedRaw;
    int m_selectedRank = -1;
    std::vector<std::size_t> m_peers;
    TimelineEventRef m_hover;

    QString m_findText;
    EventSearch* m_search = nullptr;
    int m_currentHit = -1;

    // Interaction state.
    enum class Drag { None, Pan, Measure, Overview, ResizeLabels };
    Drag m_drag = Drag::None;
    QPoint m_pressPos;
    QPoint m_lastPos;
    std::int64_t m_measureStartNs = 0;
    int m_mouseX = -1;
    int m_mouseY = -1;

    // The frame without overlays, redrawn only when its key changes.
    QImage m_base;
    struct CacheKey {
        std::int64_t startNs = 0, endNs = 0;
        QSize size;
        int scrollY = 0;
        quint64 version = 0;
        bool operator==(const CacheKey&) const = default;
    };
    CacheKey m_baseKey;
    quint64 m_version = 1;
};

} // namespace rankscope
