#pragma once

#include "model/find/eventsearch.h"
#include "model/tracesession.h"
#include "model/zoomstate.h"
#include "views/timeline/timelinelayout.h"

#include <QColor>
#include <QCoreApplication>
#include <QHash>
#include <QList>
#include <QString>
#include <optional>
#include <utility>
#include <vector>

class QFontMetrics;
class QImage;
class QPainter;

namespace rankscope {

struct TimelineRectSink;

// A finding drawn over the timeline. Times are on the common clock (raw + the rank's offset);
// an empty `ranks` means every rank.
struct TimelineMarker {
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    QList<int> ranks;
    QColor color;
    QString label;
    QString id = {}; // what it stands for (a finding id), reported by markerClicked
};

// Full detail of one lane of a digest over [startNs, endNs] (the rank's own clock), read back
// from the original trace (Digest::readRawWindow): drawn in place of the digest's reduced events
// whenever the view lies within that range. `colors` by the id of `strings`.
struct TimelineRawLane {
    const Lane* lane = nullptr;
    const StringTable* strings = nullptr;
    const std::vector<QRgb>* colors = nullptr;
    std::int64_t startNs = 0, endNs = 0;
    // The find's hits in the read (null: no find), and `lane`'s index among the read's lanes.
    const EventSearchResult* findHits = nullptr;
    int index = -1;
};

// Everything one picture of the detail timeline shows: the view paints one per frame, an export
// one over every lane.
struct TimelineFrame {
    static constexpr int kOverviewHeight = 28;
    static constexpr int kRulerHeight = 22;
    static constexpr int kHeaderHeight = kOverviewHeight + kRulerHeight;

    const TraceSession* session = nullptr;
    const TimelineLayout* layout = nullptr;
    ZoomState zoom; // widthPx() is the track width
    TimelineClock clock;
    int labelWidth = 180;
    int scrollY = 0; // content y at the top of the lanes area
    QList<TimelineMarker> markers;
    QHash<int, QString> banners;
    const EventSearchResult* findHits = nullptr;
    QHash<int, TimelineRawLane> rawLanes; // by lane index

    // The shift of `rank`'s raw times (clock() holds no offsets on raw timestamps).
    std::int64_t offsetOf(int rank) const { return clock.offsetNs.value(rank, 0); }
    // The original trace's events drawn for `lane`: its entry of rawLanes when that covers the
    // whole view, else nullptr (the store's events are drawn).
    const TimelineRawLane* rawLaneShown(int lane) const;
    int xForTime(std::int64_t displayNs) const;
    // Picture y of content y.
    int viewY(int contentY) const { return kHeaderHeight + contentY - scrollY; }
};

// Draws a TimelineFrame with a QPainter: the lanes (events, or level-of-detail columns when
// there are more events than pixels), rank headers and banners, the findings' marks, the label
// column, the whole-trace busy strip and the ruler. Holds what is derived from a session once
// (colours by name, the strip's columns).
class TimelinePainter {
    Q_DECLARE_TR_FUNCTIONS(TimelinePainter)

public:
    void setSession(const TraceSession* session);
    QRgb nameColor(StringId id) const { return m_nameColors[std::size_t(id)]; }
    static QColor laneBackground(const TimelineLayout& layout, int lane);
    // What the pane says for a session with no trace events (only logs or dumps): why it is
    // empty and where the folder's content is shown instead.
    static QString noEventsText(const TraceSession& session);
    // The colour of each name of `strings` as the painter gives it (the category of its first
    // event in `store` picks the hue family).
    static std::vector<QRgb> nameColors(const EventStore& store);
    // Ruler band (y range) marking a digest's full-detail windows.
    static constexpr int kWindowBandHeight = 4;

    // Paints `frame` into the `size` picture of `p`. When `direct` is the image `p` paints on,
    // opaque rects are written into its scanlines instead of through `p` (a zoomed-out frame is a
    // rect per pixel column and row).
    void paint(QPainter& p, QSize size, const TimelineFrame& frame, QImage* direct = nullptr);

    // Picture x range of marker `m` over `rank`'s group, clipped to the track of a `width` px
    // picture.
    static std::pair<int, int> markerXRange(const TimelineFrame& frame, const TimelineMarker& m,
                                            int rank, int width);
    // The markers' labels in `rank`'s header row, left to right: each at its marker, or just
    // after the label before it where that one reaches there (two findings at one time), so no
    // label covers another. A label past the picture's right edge moves left until it ends
    // there (or where the next one starts), no further than the track's left edge; what still
    // does not fit is elided, and a label with no room for a character is left out. `x1`..`x2`
    // is the label's box (text and a margin each side), `text` what is drawn in it.
    struct MarkerLabel {
        int marker = -1; // index into frame.markers
        int x1 = 0;
        int x2 = 0;
        QString text;
    };
    static std::vector<MarkerLabel> markerLabels(const TimelineFrame& frame, int rank, int width,
                                                 const QFontMetrics& fm);

    // The ruler's ticks at their picture x, each with the label drawn right of its mark (empty
    // where the label would be cut by the right edge).
    struct RulerTick {
        int x = 0;
        QString label;
    };
    static std::vector<RulerTick> rulerTicks(const TimelineFrame& frame, int width,
                                             const QFontMetrics& fm);
    // Picture x range [first, second) a tick's label takes on the ruler.
    static std::pair<int, int> rulerLabelSpan(const RulerTick& tick, const QFontMetrics& fm);
    // The x nearest `wanted` where a box `boxW` wide lies in [left, right) over none of `taken`
    // ([from, to) ranges); tried at `wanted` and beside each taken range. Empty: nowhere.
    static std::optional<int> nearestFreeX(int wanted, int boxW, int left, int right,
                                           const std::vector<std::pair<int, int>>& taken);

private:
    void paintLane(QPainter& p, const TimelineRectSink& sink, const TimelineFrame& frame, int lane,
                   int firstRow, int lastRow, int laneTop);
    // The lane's name in the label column, with its fold handle and folded level count.
    void paintLaneName(QPainter& p, const TimelineLayout& layout, int lane, int laneTop,
                       int labelW);
    void paintOverview(QPainter& p, const TimelineFrame& frame, int width);
    void paintRuler(QPainter& p, const TimelineFrame& frame, int width);
    // A digest's full-detail windows: a band on the ruler, one under each rank's header.
    void paintDigestWindows(QPainter& p, const TimelineFrame& frame, int width, int height);

    const TraceSession* m_session = nullptr;
    std::vector<QRgb> m_nameColors;
    // Busy fraction per pixel of the overview strip, recomputed when its key changes.
    std::vector<double> m_overviewBusy;
    struct OverviewKey {
        int width = -1;
        std::int64_t startNs = 0, endNs = 0;
        TimelineClock clock;
        bool operator==(const OverviewKey&) const = default;
    };
    OverviewKey m_overviewKey;
};

} // namespace rankscope
