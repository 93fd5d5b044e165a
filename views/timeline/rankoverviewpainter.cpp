#include "views/timeline/rankoverviewpainter.h"

#include "model/store/parallelfor.h"
#include "views/timeline/timelinecolors.h"
#include "views/timeline/timelinepainter.h"

#include <QFontMetrics>
#include <QPainter>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>

namespace rankscope {

namespace colors = timelinecolors;

namespace {

const QColor kStripBackground{248, 248, 251};
const QColor kRowGap{255, 255, 255};

std::array<QRgb, kRankStateCount> statePalette()
{
    std::array<QRgb, kRankStateCount> p{};
    for (int s = 0; s < kRankStateCount; ++s)
        p[std::size_t(s)] = colors::rankStateColor(RankState(s)).rgb();
    return p;
}

} // namespace

RankState RankOverviewPainter::stateAt(int index, int x) const
{
    if (index < 0 || x < 0 || x >= m_width ||
        std::size_t(index + 1) * std::size_t(m_width) > m_states.size())
        return RankState::Idle;
    return m_states[std::size_t(index) * std::size_t(m_width) + std::size_t(x)];
}

void RankOverviewPainter::paint(QImage& image, const RankOverviewLayout& layout,
                                const RankOverviewFrame& frame, const QFont& font)
{
    image.fill(kStripBackground);
    {
        QPainter p(&image);
        p.fillRect(0, 0, layout.trackLeft(), image.height(), colors::kLabelColumn);
    }
    if (frame.activity) {
        paintStates(image, layout, frame);
        paintGutter(image, layout, frame);
    }
    paintMarks(image, layout, frame, font);
}

void RankOverviewPainter::paintStates(QImage& image, const RankOverviewLayout& layout,
                                      const RankOverviewFrame& frame)
{
    const RankActivity& activity = *frame.activity;
    const std::vector<int>& ranks = layout.ranks();
    const int width = std::clamp(frame.zoom.widthPx(), 0, image.width() - layout.trackLeft());
    m_width = width;
    m_states.assign(ranks.size() * std::size_t(width), RankState::Idle);
    if (width <= 0) return;
    // A job goes on until its last rank's last event, on the common clock of the frame.
    std::map<int, std::int64_t> jobEnd;
    for (const RankActivity::Row& row : activity.rows()) {
        std::int64_t& end = jobEnd[row.job];
        end = std::max(end, frame.clock.toDisplay(row.rank, row.lastNs));
    }
    const double npp = frame.zoom.nsPerPx();
    // Rows are independent: rasterised on every core (a 1,024-rank frame is ~2 M pixels).
    const std::size_t chunk = 64;
    parallelFor((ranks.size() + chunk - 1) / chunk, [&](std::size_t block, std::size_t) {
        for (std::size_t i = block * chunk; i < std::min(ranks.size(), (block + 1) * chunk); ++i) {
            const int row = activity.rowOf(ranks[i]);
            if (row < 0) continue;
            const RankActivity::Row& r = activity.rows()[std::size_t(row)];
            const std::int64_t shift = frame.clock.toDisplay(r.rank, 0);
            // Crashes are the analysed job's findings: keyed by its ranks.
            const bool crashed = std::size_t(ranks[i]) < frame.crashed.size() &&
                                 frame.crashed[std::size_t(ranks[i])];
            activity.rasterise(std::size_t(row), frame.zoom.visibleStartNs() - shift, npp, width,
                               jobEnd.at(r.job) - shift, crashed,
                               &m_states[i * std::size_t(width)]);
        }
    });

    const std::array<QRgb, kRankStateCount> palette = statePalette();
    const int k = layout.ranksPerRow();
    std::vector<QRgb> line(static_cast<std::size_t>(width));
    // Several ranks a pixel row: the state that row holds more often than the job as a whole
    // does at that time, so that the one rank that differs (a hung rank among waiting ones,
    // a straggler among idle ones) is not outvoted by its neighbours.
    std::vector<std::array<int, kRankStateCount>> column;
    if (k > 1) {
        column.assign(std::size_t(width), {});
        for (std::size_t i = 0; i < ranks.size(); ++i)
            for (int x = 0; x < width; ++x)
                ++column[std::size_t(x)][std::size_t(m_states[i * std::size_t(width) + x])];
    }
    const double n = double(ranks.size());
    for (int row = 0; row < layout.rowCount(); ++row) {
        const auto [first, count] = layout.ranksOfRow(row);
        if (count == 1) {
            const RankState* s = &m_states[std::size_t(first) * std::size_t(width)];
            for (int x = 0; x < width; ++x)
                line[std::size_t(x)] = palette[std::size_t(s[x])];
        } else {
            for (int x = 0; x < width; ++x) {
                std::array<int, kRankStateCount> mine{};
                for (int j = first; j < first + count; ++j)
                    ++mine[std::size_t(m_states[std::size_t(j) * std::size_t(width) + x])];
                int best = -1;
                double bestScore = 0;
                for (int s = 0; s < kRankStateCount; ++s) {
                    if (mine[std::size_t(s)] == 0) continue;
                    const double score = double(mine[std::size_t(s)]) / count -
                                         double(column[std::size_t(x)][std::size_t(s)]) / n;
                    if (best < 0 || score > bestScore) {
                        best = s;
                        bestScore = score;
                    }
                }
                line[std::size_t(x)] = palette[std::size_t(best)];
            }
        }
        const int top = layout.rowTop(row);
        const int rowH = layout.rowHeight(row);
        const int fillH = layout.rowFillHeight(row);
        for (int y = top; y < top + rowH && y < image.height(); ++y) {
            auto* scan = reinterpret_cast<QRgb*>(image.scanLine(y)) + layout.trackLeft();
            if (y < top + fillH)
                std::copy(line.begin(), line.end(), scan);
            else
                std::fill(scan, scan + width, kRowGap.rgb());
        }
    }
}

std::int64_t RankOverviewPainter::excessLatenessNs(const RankActivity& activity, int key)
{
    const int row = activity.rowOf(key);
    if (row < 0) return -1;
    const RankActivity::Row& r = activity.rows()[std::size_t(row)];
    if (r.medianLatenessNs < 0) return -1;
    return std::max<std::int64_t>(0, r.medianLatenessNs - activity.typicalLatenessNs(r.job));
}

void RankOverviewPainter::paintGutter(QImage& image, const RankOverviewLayout& layout,
                                      const RankOverviewFrame& frame)
{
    const int x = layout.gutterLeft();
    if (x < 0) return;
    const std::vector<int>& ranks = layout.ranks();
    QPainter p(&image);
    for (int row = 0; row < layout.rowCount(); ++row) {
        const auto [first, count] = layout.ranksOfRow(row);
        LateRow late{row, -1, -1};
        for (int j = first; j < first + count; ++j) {
            const int key = ranks[std::size_t(j)];
            if (const std::int64_t ns = excessLatenessNs(*frame.activity, key); ns > late.excessNs)
                late = {row, key, ns};
        }
        if (late.key < 0) continue; // no collective shared: the label column shows through
        const int step = colors::latenessStep(late.excessNs);
        p.fillRect(QRect(x, layout.rowTop(row), RankOverviewLayout::kGutterWidth,
                         layout.rowFillHeight(row)),
                   colors::latenessStepColor(step));
        if (step >= kLabelledLatenessStep) m_lateRows.push_back(late);
    }
    std::sort(m_lateRows.begin(), m_lateRows.end(),
              [](const LateRow& a, const LateRow& b) { return a.excessNs > b.excessNs; });
    if (m_lateRows.size() > kMaxLateLabels) m_lateRows.resize(kMaxLateLabels);
}

void RankOverviewPainter::paintMarks(QImage& image, const RankOverviewLayout& layout,
                                     const RankOverviewFrame& frame, const QFont& font)
{
    QPainter p(&image);
    QFont small = font;
    small.setPixelSize(9);
    p.setFont(small);
    const QFontMetrics fm(small);
    const int left = layout.trackLeft();
    const int right = left + std::max(0, frame.zoom.widthPx());
    const int strip = RankOverviewLayout::kMarkStripHeight;
    const int rowsBottom = layout.rowsBottom();
    const auto rowH = [&](int row) { return layout.rowHeight(row); };
    const auto clampX = [&](int x) { return std::clamp(x, left, right); };

    // Rank numbers in the label column, as many as fit without overlapping, left of the
    // findings' tabs.
    p.setPen(QColor(70, 70, 80));
    p.drawText(QRect(4, 0, layout.numbersRight() - 4, strip), Qt::AlignVCenter | Qt::AlignLeft,
               QObject::tr("Ranks (%1)").arg(layout.ranks().size()));
    // The gutter's heading: "late" over the column.
    p.drawText(QRect(layout.gutterLeft() - 6, 0, RankOverviewLayout::kGutterWidth + 12, strip),
               Qt::AlignCenter, QObject::tr("late"));
    // The late rows' markers: a wedge left of the gutter in the row's lateness colour.
    const int gutter = layout.gutterLeft();
    for (const LateRow& late : m_lateRows) {
        const int y = layout.rowTop(late.row) + rowH(late.row) / 2;
        p.setBrush(colors::latenessStepColor(colors::latenessStep(late.excessNs)));
        p.setPen(Qt::NoPen);
        const QPoint wedge[] = {{gutter - 7, y - 4}, {gutter - 1, y}, {gutter - 7, y + 4}};
        p.drawPolygon(wedge, 3);
    }
    p.setBrush(Qt::NoBrush);
    // The numbers of the late rows first (their latest rank's, in bold), then of the emphasised
    // rows, then of every `every`-th plain row's where they have room.
    struct Number {
        int row = -1;
        int key = -1; // the rank named; -1: the row's first
        bool late = false;
    };
    std::vector<Number> numbered;
    for (const LateRow& late : m_lateRows)
        numbered.push_back({late.row, late.key, true});
    for (int row = 0; row < layout.rowCount(); ++row)
        if (layout.isEmphasised(row)) numbered.push_back({row});
    const int every = std::max(1, (fm.height() + layout.rowHeight() - 1) / layout.rowHeight());
    for (int row = 0; row < layout.rowCount(); row += every)
        if (!layout.isEmphasised(row)) numbered.push_back({row});
    std::vector<std::pair<int, int>> taken; // [top, bottom) of the numbers drawn
    QFont bold = small;
    bold.setBold(true);
    for (const Number& n : numbered) {
        const int row = n.row;
        const int y = layout.rowTop(row) + rowH(row) / 2;
        const int top = y - fm.height() / 2, bottom = top + fm.height();
        if (std::any_of(taken.begin(), taken.end(),
                        [&](const auto& t) { return top < t.second && t.first < bottom; }))
            continue;
        taken.emplace_back(top, bottom);
        const auto [first, count] = layout.ranksOfRow(row);
        const std::vector<int>& ranks = layout.ranks();
        const int key = n.key >= 0 ? n.key : ranks[std::size_t(first)];
        QString text = QString::number(LaneJobs::rankOfKey(key));
        if (frame.labelJobs) {
            const int job = key >= LaneJobs::kJobKeyStride ? key / LaneJobs::kJobKeyStride - 1
                                                           : frame.analysedJob;
            text = QStringLiteral("j%1·%2").arg(job + 1).arg(text);
        }
        if (count > 1 && n.key < 0) text += QStringLiteral("…");
        p.setFont(n.late ? bold : small);
        p.setPen(n.late ? colors::latenessStepColor(colors::kLatenessSteps - 1)
                        : QColor(70, 70, 80));
        p.drawText(QRect(4, y - fm.height() / 2, layout.numbersRight() - 4, fm.height()),
                   Qt::AlignVCenter | Qt::AlignRight, text);
    }
    p.setFont(small);
    // Brushed ranks: a tab at the left edge; the rows not brushed are washed out.
    if (!frame.selected.empty()) {
        const auto isSelected = [&](int row) {
            const auto [first, count] = layout.ranksOfRow(row);
            for (int j = first; j < first + count; ++j)
                if (std::binary_search(frame.selected.begin(), frame.selected.end(),
                                       layout.ranks()[std::size_t(j)]))
                    return true;
            return false;
        };
        for (int row = 0; row < layout.rowCount();) {
            const bool on = isSelected(row);
            int end = row + 1;
            while (end < layout.rowCount() && isSelected(end) == on)
                ++end;
            const int top = layout.rowTop(row), h = layout.rowTop(end) - top;
            if (on)
                p.fillRect(QRect(0, top, 3, h), colors::kSelection);
            else
                p.fillRect(QRect(left, top, right - left, h), QColor(255, 255, 255, 150));
            row = end;
        }
    }
    if (frame.highlightedRank >= 0) {
        const int row = layout.rowOfRank(frame.highlightedRank);
        if (row >= 0) {
            p.fillRect(QRect(left - 6, layout.rowTop(row), 4, std::max(rowH(row), 2)),
                       colors::kSelection);
        }
    }

    // Findings: a bar in the strip over their time range with the id, and on each blamed
    // rank's row the edges of the range and a tab in the label column.
    p.setClipRect(QRect(0, 0, image.width(), image.height()));
    // The strip's labels so far, [from, to) in x: a label that would overlap one of them is
    // left out (the markers come most important first), its bar and edges stay. They are drawn
    // once every bar is, so a later finding's bar does not cover an earlier one's label.
    std::vector<std::pair<int, int>> labelled;
    std::vector<std::pair<const TimelineMarker*, QRect>> labels; // the text's box, its bar's x
    for (const TimelineMarker& m : frame.markers) {
        const bool allRanks = m.ranks.isEmpty();
        const int refRank = allRanks ? -1 : m.ranks.first();
        const qint64 refShift = frame.markerShiftNs.value(refRank, 0);
        const int x1 = clampX(layout.xForTime(frame.zoom, m.startNs + refShift));
        const int x2 = clampX(std::max(x1 + 2, layout.xForTime(frame.zoom, m.endNs + refShift)));
        if (x2 > left && x1 < right) {
            p.fillRect(QRect(x1, 1, std::max(2, x2 - x1), strip - 2), m.color);
            const int room = right - x1 - 2;
            const int textW = fm.horizontalAdvance(m.label);
            const bool free = std::none_of(labelled.begin(), labelled.end(), [&](const auto& l) {
                return x1 + 2 < l.second && l.first < x1 + 2 + textW + 4;
            });
            if (room > textW && free) {
                labelled.emplace_back(x1 + 2, x1 + 2 + textW + 4);
                labels.emplace_back(&m, QRect(x1, 1, std::max(2, x2 - x1), strip - 2));
            }
        }
        const auto edges = [&](int top, int bottom, qint64 shift) {
            const int a = layout.xForTime(frame.zoom, m.startNs + shift);
            const int b = std::max(a + 1, layout.xForTime(frame.zoom, m.endNs + shift));
            if (a >= left && a < right) p.fillRect(QRect(a, top, 1, bottom - top), m.color);
            if (b >= left && b < right) p.fillRect(QRect(b, top, 1, bottom - top), m.color);
        };
        if (allRanks) {
            edges(strip, rowsBottom, 0);
            continue;
        }
        for (int rank : m.ranks) {
            const int row = layout.rowOfRank(rank);
            if (row < 0) continue;
            const int top = layout.rowTop(row);
            p.fillRect(QRect(left - 12, top, 5, std::max(rowH(row), 2)), m.color);
            edges(top, top + rowH(row), frame.markerShiftNs.value(rank, 0));
        }
    }
    for (const auto& [m, bar] : labels) {
        const int textW = fm.horizontalAdvance(m->label);
        if (bar.width() < textW + 4) {
            // Wider than its bar: on a tag of the bar's colour, over whatever is beside it.
            p.fillRect(QRect(bar.left(), bar.top(), textW + 4, bar.height()), m->color);
        }
        p.setPen(colors::textColorOn(m->color));
        p.drawText(QRect(bar.left() + 2, 0, right - bar.left() - 2, strip),
                   Qt::AlignVCenter | Qt::AlignLeft, m->label);
    }

    // The selected collective's arrival wavefront: a tick where each member arrived.
    if (!frame.arrivals.empty()) {
        std::int64_t firstNs = frame.arrivals.front().second, lastNs = firstNs;
        for (const auto& [rank, t] : frame.arrivals) {
            firstNs = std::min(firstNs, t);
            lastNs = std::max(lastNs, t);
            const int row = layout.rowOfRank(rank);
            const int x = layout.xForTime(frame.zoom, t);
            if (row < 0 || x < left - 1 || x > right) continue;
            p.fillRect(QRect(x - 1, layout.rowTop(row), 3, std::max(rowH(row), 1)),
                       colors::kArrivalSkew);
        }
        const int a = clampX(layout.xForTime(frame.zoom, firstNs));
        const int b = clampX(layout.xForTime(frame.zoom, lastNs));
        p.fillRect(QRect(a, strip - 3, std::max(1, b - a + 1), 3), colors::kArrivalSkew);
        const QString text =
            QObject::tr("arrival skew %1").arg(ZoomState::formatDuration(lastNs - firstNs));
        // A badge after the last arrival, or as near it as the findings' labels leave room
        // for (drawn over one, both were unreadable); left out where none does (the ruler's
        // badge and the details say it too).
        const int w = fm.horizontalAdvance(text) + 6;
        const int wanted = std::clamp(b + 4, left, std::max(left, right - w));
        const std::optional<int> tx =
            TimelinePainter::nearestFreeX(wanted, w, left, right, labelled);
        if (tx) {
            p.fillRect(QRect(*tx, 0, w, strip - 3), colors::kArrivalSkew);
            p.setPen(colors::textColorOn(colors::kArrivalSkew));
            p.drawText(QRect(*tx, 0, w, strip - 2), Qt::AlignCenter, text);
        }
    }
    p.fillRect(QRect(left - 1, strip, 1, rowsBottom - strip), QColor(200, 200, 210));
}

} // namespace rankscope
