#include "views/timeline/timelinepainter.h"

#include "views/counttext.h"
#include "views/timeline/timelinecolors.h"

#include <QFontMetrics>
#include <QImage>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace rankscope {

namespace colors = timelinecolors;

// Opaque axis-aligned rects without antialiasing are plain scanline fills: writing them into
// the frame directly costs a fraction of a QPainter::fillRect call each (and makes grouping them
// by colour moot), which matters when a zoomed-out frame is one rect per pixel column and row.
// Without an image (an SVG export) they go through the painter.
struct TimelineRectSink {
    uchar* bits = nullptr;
    qsizetype bytesPerLine = 0;
    QPainter* painter = nullptr;
    QRect clip;

    void fill(const QRect& r0, QRgb c) const
    {
        const QRect r = r0.intersected(clip);
        if (r.isEmpty()) return;
        if (!bits) {
            painter->fillRect(r, QColor(c));
            return;
        }
        for (int y = r.top(); y <= r.bottom(); ++y) {
            auto* line = reinterpret_cast<QRgb*>(bits + y * bytesPerLine);
            std::fill(line + r.left(), line + r.left() + r.width(), c);
        }
    }
};

namespace {

constexpr int kRulerLabelMax = 120;    // px: wider than any tick label ("999.999 ms")
constexpr int kRulerLabelGap = 3;      // px from a tick's mark to its label
constexpr int kMarkerLabelMargins = 8; // px: 4 each side of a finding label's text

QString qstr(std::string_view v)
{
    return QString::fromUtf8(v.data(), qsizetype(v.size()));
}

// One row's pending rectangle: sub-pixel neighbours of one colour become one rect, and events
// entirely under the previous run's pixels are skipped.
struct RowRun {
    int y = 0, h = 0;
    double x1 = 0, x2 = -1, nextFreeX = -1e18;
    QRgb color = 0;
    bool open = false;
};

void flush(RowRun& run, const TimelineRectSink& out)
{
    if (!run.open) return;
    const int l = int(std::floor(run.x1));
    const int r = std::max(l + 1, int(std::ceil(run.x2)));
    out.fill(QRect(l, run.y, r - l, run.h), run.color);
    run.open = false;
}

void extendOrFlush(RowRun& run, double x1, double x2, QRgb color, const TimelineRectSink& out)
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

int TimelineFrame::xForTime(std::int64_t displayNs) const
{
    return labelWidth + int(std::floor(zoom.timeToX(displayNs)));
}

const TimelineRawLane* TimelineFrame::rawLaneShown(int lane) const
{
    const auto raw = rawLanes.constFind(lane);
    if (raw == rawLanes.cend() || !raw->lane) return nullptr;
    const std::int64_t off = offsetOf(session->events.lanes[std::size_t(lane)].rank);
    const bool covers =
        raw->startNs <= zoom.visibleStartNs() - off && raw->endNs >= zoom.visibleEndNs() - off;
    return covers ? &*raw : nullptr;
}

void TimelinePainter::setSession(const TraceSession* session)
{
    m_session = session;
    m_overviewKey = {};
    // Done once here so that level-of-detail columns (which only know a name) get the same
    // colour as the events.
    m_nameColors = session ? nameColors(session->events) : std::vector<QRgb>{};
}

std::vector<QRgb> TimelinePainter::nameColors(const EventStore& store)
{
    std::vector<QRgb> out(store.strings.size(), 0);
    for (const Lane& lane : store.lanes)
        for (std::size_t i = 0; i < lane.size(); ++i) {
            QRgb& c = out[std::size_t(lane.nameId[i])];
            if (c == 0)
                c = colors::eventColor(store.strings.view(lane.nameId[i]), lane.category[i]).rgb();
        }
    return out;
}

QColor TimelinePainter::laneBackground(const TimelineLayout& layout, int lane)
{
    return layout.laneOrdinal(lane) % 2 ? colors::kBackgroundOdd : colors::kBackgroundEven;
}

QString TimelinePainter::noEventsText(const TraceSession& session)
{
    QStringList lines{tr("No profiler trace in this folder, so no timeline to draw.")};
    if (!session.dumps.empty())
        lines << (session.dumps.size() == 1
                      ? tr("Its Flight Recorder dump records the collectives: \"Collective by "
                           "rank\" below shows them, rank by rank.")
                      : tr("Its %1 Flight Recorder dumps record the collectives: \"Collective by "
                           "rank\" below shows them, rank by rank.")
                            .arg(session.dumps.size()));
    if (!session.logs.empty()) lines << tr("Its logs are on the Logs tab.");
    return lines.join(QLatin1Char('\n'));
}

std::pair<int, int> TimelinePainter::markerXRange(const TimelineFrame& frame,
                                                  const TimelineMarker& m, int rank, int width)
{
    const std::int64_t shift = frame.clock.aligned ? 0 : -frame.offsetOf(rank);
    const int x1 = std::max(frame.labelWidth, frame.xForTime(m.startNs + shift));
    const int x2 = std::min(width, std::max(frame.xForTime(m.endNs + shift), x1 + 2));
    return {x1, x2};
}

std::vector<TimelinePainter::MarkerLabel> TimelinePainter::markerLabels(const TimelineFrame& frame,
                                                                        int rank, int width,
                                                                        const QFontMetrics& fm)
{
    std::vector<MarkerLabel> labels;
    for (int i = 0; i < int(frame.markers.size()); ++i) {
        const TimelineMarker& m = frame.markers[i];
        if (!m.ranks.isEmpty() && !m.ranks.contains(rank)) continue;
        const auto [x1, x2] = markerXRange(frame, m, rank, width);
        if (x2 <= frame.labelWidth || x1 >= width) continue;
        labels.push_back(
            {i, x1, x1 + kMarkerLabelMargins + fm.horizontalAdvance(m.label), m.label});
    }
    std::stable_sort(labels.begin(), labels.end(),
                     [](const MarkerLabel& a, const MarkerLabel& b) { return a.x1 < b.x1; });
    int free = 0;
    for (MarkerLabel& l : labels) {
        const int shift = std::max(0, free - l.x1);
        l.x1 += shift;
        l.x2 += shift;
        free = l.x2;
    }
    int end = width;
    for (auto l = labels.rbegin(); l != labels.rend(); ++l) {
        const int shift = std::clamp(l->x2 - end, 0, std::max(0, l->x1 - frame.labelWidth));
        l->x1 -= shift;
        l->x2 -= shift;
        if (l->x2 > end) {
            l->text = fm.elidedText(l->text, Qt::ElideRight,
                                    std::max(0, end - l->x1 - kMarkerLabelMargins));
            l->x2 = l->text.isEmpty() ? l->x1
                                      : l->x1 + kMarkerLabelMargins + fm.horizontalAdvance(l->text);
        }
        end = std::min(end, l->x1);
    }
    std::erase_if(labels, [](const MarkerLabel& l) { return l.text.isEmpty(); });
    return labels;
}

void TimelinePainter::paint(QPainter& p, QSize size, const TimelineFrame& frame, QImage* direct)
{
    p.setRenderHint(QPainter::Antialiasing, false);
    const int w = size.width(), h = size.height();
    const int headerH = TimelineFrame::kHeaderHeight;
    const int labelW = frame.labelWidth;
    p.fillRect(0, headerH, w, h - headerH, colors::kBackgroundEven);
    if (!m_session || !frame.layout) {
        p.fillRect(0, 0, w, headerH, colors::kLabelColumn);
        p.drawText(QRect(0, 0, w, h), Qt::AlignCenter, tr("No trace loaded"));
        return;
    }
    if (m_session->events.lanes.empty()) {
        // No ruler over nothing: say why the pane is empty and where the folder's content is.
        p.fillRect(0, 0, w, headerH, colors::kLabelColumn);
        p.setPen(QColor(60, 60, 70));
        p.drawText(QRect(24, 0, std::max(0, w - 48), h), Qt::AlignCenter | Qt::TextWordWrap,
                   noEventsText(*m_session));
        return;
    }
    const TimelineLayout& layout = *frame.layout;
    const std::vector<TimelineLayout::Row>& rows = layout.rows();
    const int sy = frame.scrollY;
    const int contentBottom = sy + h - headerH;
    TimelineRectSink sink;
    sink.painter = &p;
    sink.clip = QRect(labelW, headerH, w - labelW, h - headerH);
    if (direct) {
        sink.bits = direct->bits();
        sink.bytesPerLine = direct->bytesPerLine();
    }
    p.setClipRect(0, headerH, w, h - headerH);
    const QFontMetrics fm = p.fontMetrics();
    const std::int64_t step = ZoomState::tickStepNs(frame.zoom.nsPerPx(), 90);
    // Rows are sorted by y: binary-search the first one on screen, then walk lane by lane.
    for (auto it = rows.begin() + std::ptrdiff_t(layout.firstRowEndingBelow(sy));
         it != rows.end() && it->y < contentBottom;) {
        const int yv = frame.viewY(it->y);
        const int rowH = TimelineLayout::kRowHeight;
        if (it->kind == TimelineLayout::RowKind::RankSummary) {
            // A folded rank: what its lanes' top levels hold, in one row.
            const std::vector<int> lanes = layout.summaryLanes(it->rank);
            p.fillRect(labelW, yv, w - labelW, rowH, colors::kBackgroundEven);
            for (int lane : lanes)
                paintLane(p, sink, frame, lane, 0, 0, yv);
            p.fillRect(0, yv, labelW, rowH, colors::kLabelColumn);
            p.setPen(QColor(90, 90, 100));
            const bool gpu =
                !lanes.empty() &&
                m_session->events.lanes[std::size_t(lanes.front())].kind == LaneKind::GpuStream;
            const qsizetype n = qsizetype(lanes.size());
            const QString text =
                gpu ? countText(n, tr("%1 GPU stream, top level"), tr("%1 GPU streams, top level"))
                    : countText(n, tr("%1 thread, top level"), tr("%1 threads, top level"));
            p.drawText(QRect(16, yv, labelW - 20, rowH), Qt::AlignVCenter,
                       fm.elidedText(text, Qt::ElideRight, labelW - 20));
            ++it;
            continue;
        }
        if (it->kind == TimelineLayout::RowKind::RankHeader) {
            const int rank = it->rank;
            p.fillRect(0, yv, w, it->height, colors::kRankHeader);
            p.setPen(QColor(40, 40, 60));
            const bool collapsed = layout.isRankCollapsed(rank);
            const auto& ranks = layout.ranks();
            const std::size_t r =
                std::size_t(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
            QString title = (collapsed ? QStringLiteral("\u25b8 ") : QStringLiteral("\u25be ")) +
                            layout.rankTitle(rank);
            if (collapsed)
                title += tr("  (%1)").arg(
                    countText(layout.lanesOfRankIndex(r).size(), tr("%1 lane"), tr("%1 lanes")));
            p.drawText(QRect(6, yv, labelW - 8, it->height), Qt::AlignVCenter, title);
            const QString banner = frame.banners.value(rank);
            if (!banner.isEmpty()) {
                const QRect br(labelW + 4, yv + 2,
                               std::min(w - labelW - 8, fm.horizontalAdvance(banner) + 16),
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
        while (jt != rows.end() && jt->lane == lane && jt->y < contentBottom) {
            lastRow = jt->depth;
            ++jt;
        }
        const int laneTop = yv - firstRow * rowH;
        const int laneHeight = layout.shownLevels(lane) * rowH;
        p.fillRect(labelW, laneTop, w - labelW, laneHeight, laneBackground(layout, lane));
        // Grid lines behind the events, one per ruler tick.
        p.setPen(QColor(232, 232, 238));
        const ZoomState& z = frame.zoom;
        const std::int64_t firstTick =
            (z.visibleStartNs() - z.traceStartNs()) / step * step + z.traceStartNs();
        for (std::int64_t t = firstTick; t <= z.visibleEndNs(); t += step)
            if (t >= z.visibleStartNs())
                p.drawLine(frame.xForTime(t), laneTop, frame.xForTime(t), laneTop + laneHeight - 1);
        paintLane(p, sink, frame, lane, firstRow, lastRow, laneTop);
        paintLaneName(p, layout, lane, laneTop, labelW);
        it = jt;
    }
    // Findings, over their ranks' groups; their labels over all of them.
    for (const TimelineMarker& m : frame.markers) {
        for (int rank : layout.ranks()) {
            if (!m.ranks.isEmpty() && !m.ranks.contains(rank)) continue;
            const auto [x1, x2] = markerXRange(frame, m, rank, w);
            if (x2 <= labelW || x1 >= w) continue;
            const auto [top, bottom] = layout.rankContentRange(rank);
            const int yt = frame.viewY(top), yb = frame.viewY(bottom);
            QColor fill = m.color;
            fill.setAlpha(60);
            p.fillRect(QRect(x1, yt, x2 - x1, yb - yt), fill);
            p.fillRect(QRect(x1, yt, 2, yb - yt), m.color);
        }
    }
    for (int rank : layout.ranks()) {
        if (frame.markers.isEmpty()) break;
        const int yt = frame.viewY(layout.rankContentRange(rank).first);
        for (const MarkerLabel& l : markerLabels(frame, rank, w, fm)) {
            const TimelineMarker& m = frame.markers[l.marker];
            p.setPen(m.color.darker(150));
            p.drawText(
                QRect(l.x1 + 4, yt, std::max(0, w - l.x1 - 4), TimelineLayout::kRankHeaderHeight),
                Qt::AlignVCenter, l.text);
        }
    }
    p.setClipping(false);
    p.fillRect(labelW - 1, headerH, 1, h - headerH, QColor(200, 200, 210));
    paintOverview(p, frame, w);
    paintRuler(p, frame, w);
    paintDigestWindows(p, frame, w, h);
}

void TimelinePainter::paintDigestWindows(QPainter& p, const TimelineFrame& frame, int w, int h)
{
    if (!frame.layout || m_session->digestWindows.empty()) return;
    const TimelineLayout& layout = *frame.layout;
    const int labelW = frame.labelWidth;
    const int headerH = TimelineFrame::kHeaderHeight;
    const QColor band(60, 160, 90);
    const std::vector<int>& ranks = layout.ranks();
    for (const Digest::Window& win : m_session->digestWindows) {
        const std::int64_t off = frame.offsetOf(win.rank);
        const int x1 = std::max(labelW, frame.xForTime(win.startNs + off));
        const int x2 = std::min(w, std::max(x1 + 2, frame.xForTime(win.endNs + off)));
        if (x2 <= labelW || x1 >= w) continue;
        p.setClipping(false);
        p.fillRect(QRect(x1, TimelineFrame::kOverviewHeight, x2 - x1, kWindowBandHeight), band);
        if (std::find(ranks.begin(), ranks.end(), win.rank) == ranks.end()) continue;
        // Along the bottom of the rank's header.
        const int y = frame.viewY(layout.rankContentRange(win.rank).first) +
                      TimelineLayout::kRankHeaderHeight - kWindowBandHeight;
        p.setClipRect(labelW, headerH, w - labelW, std::max(0, h - headerH));
        p.fillRect(QRect(x1, y, x2 - x1, kWindowBandHeight), band);
    }
    p.setClipping(false);
}

void TimelinePainter::paintLane(QPainter& p, const TimelineRectSink& rects,
                                const TimelineFrame& frame, int laneIndex, int firstRow,
                                int lastRow, int laneTop)
{
    const Lane* shown = &m_session->events.lanes[std::size_t(laneIndex)];
    const ZoomState& zoom = frame.zoom;
    const std::int64_t off = frame.offsetOf(shown->rank);
    const std::int64_t t0 = zoom.visibleStartNs() - off, t1 = zoom.visibleEndNs() - off;
    // The original trace's events where they were read for the whole view, the digest's else.
    const TimelineRawLane* raw = frame.rawLaneShown(laneIndex);
    const bool full = raw != nullptr;
    if (full) shown = raw->lane;
    const Lane& lane = *shown;
    const StringTable& strings = full ? *raw->strings : m_session->events.strings;
    const auto colorOf = [&](StringId id) {
        return full ? (*raw->colors)[std::size_t(id)] : nameColor(id);
    };
    if (lane.size() == 0) return;
    const int labelW = frame.labelWidth;
    const int rowH = TimelineLayout::kRowHeight;
    const double npp = zoom.nsPerPx();
    const int width = zoom.widthPx();
    const QRgb bg = laneBackground(*frame.layout, laneIndex).rgb();
    std::vector<RowRun> runs(std::size_t(lastRow - firstRow + 1));
    for (int d = firstRow; d <= lastRow; ++d) {
        runs[std::size_t(d - firstRow)].y = laneTop + d * rowH + 1;
        runs[std::size_t(d - firstRow)].h = rowH - 2;
    }
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
    const bool haveLod = !full && std::size_t(laneIndex) < m_session->laneLods.size() &&
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
            // Columns wholly inside events of one name read as one bar: labelled as an event of
            // that width would be, so a long span keeps its name however many events are in view.
            int barStart = -1;
            StringId barName = 0;
            const auto endBar = [&](int x) {
                if (barStart >= 0 && x - barStart > 30)
                    labels.push_back({QRect(labelW + barStart + 3, run.y, x - barStart - 5, run.h),
                                      barName, nameColor(barName)});
                barStart = -1;
            };
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
                    endBar(x);
                    continue;
                }
                // A pixel where an event starts is at least half shaded, so that instant and
                // sub-pixel events stay visible however far out the view is.
                const double shade = std::max(std::min(1.0, busy / npp), starts ? 0.5 : 0.0);
                const bool full = shade >= 0.999;
                if (!full || barStart < 0 || dom != barName) {
                    endBar(x);
                    if (full) {
                        barStart = x;
                        barName = dom;
                    }
                }
                const QRgb c = colors::shadedColumn(nameColor(dom), bg, float(shade));
                extendOrFlush(run, labelW + x, labelW + x + 1, c, rects);
            }
            endBar(width);
            flush(run, rects);
        }
    } else {
        const double maxX = labelW + width + 1.0;
        for (std::size_t i = first; i < last; ++i) {
            const int d = lane.depth[i];
            if (d < firstRow || d > lastRow) continue;
            RowRun& run = runs[std::size_t(d - firstRow)];
            double x1 = labelW + double(lane.startNs[i] - t0) / npp;
            double x2 = std::max(x1 + 1.0, labelW + double(lane.endNs[i] - t0) / npp);
            if (x2 <= run.nextFreeX) continue;
            x1 = std::max({x1, run.nextFreeX, double(labelW) - 1});
            x2 = std::min(x2, maxX);
            run.nextFreeX = x2;
            const QRgb c = colorOf(lane.nameId[i]);
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
        const QFontMetrics fm = p.fontMetrics();
        for (const Label& l : labels) {
            const QRect r = l.rect.intersected(QRect(labelW, l.rect.y(), width, l.rect.height()));
            if (r.width() < fm.averageCharWidth() * 3) continue;
            const QString text =
                fm.elidedText(qstr(strings.view(l.name)), Qt::ElideRight, r.width());
            if (text.isEmpty() || fm.horizontalAdvance(text) > r.width()) continue;
            p.setPen(colors::textColorOn(QColor(l.color)));
            p.drawText(r, Qt::AlignVCenter | Qt::AlignLeft, text);
        }
    }
    // Find hits: an outline per hit, at most one per pixel and row.
    const EventSearchResult* found = full ? raw->findHits : frame.findHits;
    const std::vector<std::int64_t> hits =
        found ? found->laneHits(full ? raw->index : laneIndex, std::int64_t(first),
                                std::int64_t(last))
              : std::vector<std::int64_t>{};
    if (!hits.empty()) {
        std::vector<int> lastX(runs.size(), -1);
        p.setPen(QPen(colors::kFindHit, 2));
        for (const std::int64_t h : hits) {
            const auto i = std::size_t(h);
            const int d = lane.depth[i];
            if (d < firstRow || d > lastRow) continue;
            const int x1 = labelW + int(std::floor(double(lane.startNs[i] - t0) / npp));
            if (x1 <= lastX[std::size_t(d - firstRow)]) continue;
            const int x2 =
                std::max(x1 + 3, labelW + int(std::ceil(double(lane.endNs[i] - t0) / npp)));
            lastX[std::size_t(d - firstRow)] = x2;
            p.drawRect(QRect(x1 - 1, laneTop + d * rowH, x2 - x1 + 1, rowH - 1));
        }
    }
}

void TimelinePainter::paintOverview(QPainter& p, const TimelineFrame& frame, int w)
{
    const int labelW = frame.labelWidth;
    const int overviewH = TimelineFrame::kOverviewHeight;
    const ZoomState& zoom = frame.zoom;
    const int tw = zoom.widthPx();
    p.fillRect(0, 0, w, overviewH, QColor(250, 250, 252));
    p.fillRect(0, 0, labelW, TimelineFrame::kHeaderHeight, colors::kLabelColumn);
    p.setPen(QColor(90, 90, 100));
    p.drawText(QRect(6, 0, labelW - 8, overviewH), Qt::AlignVCenter, tr("Overview"));
    // Busy fraction of the GPU streams' top rows (of the CPU threads' when there is no GPU
    // lane) across the whole trace, from the pyramids.
    const double span = double(zoom.traceEndNs() - zoom.traceStartNs());
    const double npp = span / tw;
    const OverviewKey key{tw, zoom.traceStartNs(), zoom.traceEndNs(), frame.clock};
    if (!(key == m_overviewKey)) {
        m_overviewKey = key;
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
            const std::int64_t origin = row.originNs + frame.offsetOf(store.lanes[l].rank);
            for (std::size_t b = 0; b < row.levels[std::size_t(level)].size(); ++b) {
                const float v = row.levels[std::size_t(level)][b].busy;
                if (v <= 0) continue;
                // Spread the bucket over the pixels it covers (it can be wider than one).
                const double b0 = double(origin - zoom.traceStartNs()) + double(b) * bw;
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
        const int bh = int(std::round((overviewH - 4) * m_overviewBusy[std::size_t(x)]));
        if (bh > 0) p.fillRect(labelW + x, overviewH - 2 - bh, 1, bh, QColor(120, 140, 180));
    }
    const int x1 = labelW + int((zoom.visibleStartNs() - zoom.traceStartNs()) / npp);
    const int x2 = labelW + int(std::ceil((zoom.visibleEndNs() - zoom.traceStartNs()) / npp));
    p.fillRect(QRect(x1, 0, std::max(2, x2 - x1), overviewH), QColor(60, 90, 200, 50));
    p.setPen(QColor(60, 90, 200));
    p.drawRect(QRect(x1, 0, std::max(2, x2 - x1) - 1, overviewH - 1));
}

void TimelinePainter::paintRuler(QPainter& p, const TimelineFrame& frame, int w)
{
    const int labelW = frame.labelWidth;
    const int rulerH = TimelineFrame::kRulerHeight;
    const int y0 = TimelineFrame::kOverviewHeight;
    p.fillRect(labelW, y0, w - labelW, rulerH, QColor(244, 244, 248));
    p.fillRect(0, y0 + rulerH - 1, w, 1, QColor(190, 190, 200));
    p.setPen(QColor(90, 90, 100));
    p.drawText(QRect(6, y0, labelW - 8, rulerH), Qt::AlignVCenter,
               tr("Time, %1").arg(frame.clock.name()));
    p.setPen(QColor(60, 60, 70));
    for (const RulerTick& tick : rulerTicks(frame, w, p.fontMetrics())) {
        p.drawLine(tick.x, y0 + rulerH - 7, tick.x, y0 + rulerH - 1);
        p.drawText(QRect(tick.x + kRulerLabelGap, y0, kRulerLabelMax, rulerH - 4),
                   Qt::AlignVCenter | Qt::AlignLeft, tick.label);
    }
}

std::vector<TimelinePainter::RulerTick> TimelinePainter::rulerTicks(const TimelineFrame& frame,
                                                                    int w, const QFontMetrics& fm)
{
    const ZoomState& zoom = frame.zoom;
    const std::int64_t step = ZoomState::tickStepNs(zoom.nsPerPx(), 90);
    const std::int64_t origin = zoom.traceStartNs();
    const std::int64_t firstTick = (zoom.visibleStartNs() - origin) / step * step + origin;
    std::vector<RulerTick> ticks;
    for (std::int64_t t = firstTick; t <= zoom.visibleEndNs(); t += step) {
        if (t < zoom.visibleStartNs()) continue;
        const int x = frame.xForTime(t);
        // A tick near the right edge keeps its mark but not a label cut in half. Measured only
        // there: a text width per tick cost 3-4 ms a frame (bench/timeline_bench).
        QString label = ZoomState::formatNs(t - origin, step);
        if (x + kRulerLabelGap + kRulerLabelMax > w &&
            x + kRulerLabelGap + fm.horizontalAdvance(label) > w)
            label.clear();
        ticks.push_back({x, std::move(label)});
    }
    return ticks;
}

std::pair<int, int> TimelinePainter::rulerLabelSpan(const RulerTick& tick, const QFontMetrics& fm)
{
    return {tick.x + kRulerLabelGap, tick.x + kRulerLabelGap + fm.horizontalAdvance(tick.label)};
}

std::optional<int> TimelinePainter::nearestFreeX(int wanted, int boxW, int left, int right,
                                                 const std::vector<std::pair<int, int>>& taken)
{
    std::vector<int> candidates{wanted};
    for (const auto& [from, to] : taken)
        candidates.insert(candidates.end(), {to, from - boxW});
    std::optional<int> best;
    for (int x : candidates) {
        const bool free = x >= left && x + boxW <= right &&
                          std::none_of(taken.begin(), taken.end(), [&](const auto& t) {
                              return x < t.second && t.first < x + boxW;
                          });
        if (free && (!best || std::abs(x - wanted) < std::abs(*best - wanted))) best = x;
    }
    return best;
}

} // namespace rankscope

namespace rankscope {

void TimelinePainter::paintLaneName(QPainter& p, const TimelineLayout& layout, int lane,
                                    int laneTop, int labelW)
{
    const int rowH = TimelineLayout::kRowHeight;
    p.fillRect(0, laneTop, labelW, layout.shownLevels(lane) * rowH, colors::kLabelColumn);
    const QFontMetrics fm = p.fontMetrics();
    int right = labelW - 4;
    // How many levels are folded away, and the handle that shows them (or folds the lane).
    const int hidden = layout.levelCount(lane) - layout.shownLevels(lane);
    if (hidden > 0) {
        const QString more = QStringLiteral("+%1").arg(hidden);
        const int mw = fm.horizontalAdvance(more);
        p.setPen(QColor(120, 120, 130));
        p.drawText(QRect(right - mw, laneTop, mw, rowH), Qt::AlignVCenter | Qt::AlignRight, more);
        right -= mw + 4;
    }
    if (layout.isLaneToggleable(lane)) {
        p.setPen(QColor(90, 90, 100));
        p.drawText(QRect(4, laneTop, 12, rowH), Qt::AlignVCenter,
                   hidden > 0 ? QStringLiteral("\u25b8") : QStringLiteral("\u25be"));
    }
    p.setPen(QColor(30, 30, 30));
    p.drawText(QRect(16, laneTop, std::max(0, right - 16), rowH), Qt::AlignVCenter,
               fm.elidedText(layout.laneName(lane), Qt::ElideMiddle, std::max(0, right - 16)));
}

} // namespace rankscope
