#include "bench/digest_bench_job.h"
#include "model/digest/digest.h"
#include "model/trace/kinetoreader.h"
#include "model/traceloader.h"
#include "model/tracesession.h"
#include "tests/support/syntheticsession.h"
#include "views/charts/rankbreakdownchart.h"
#include "views/timeline/rankoverview.h"
#include "views/timeline/timelinecolors.h"
#include "views/timeline/timelinelayout.h"
#include "views/timeline/timelinepainter.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"

#include <QApplication>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <climits>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

using namespace rankscope;

namespace {

// Rank 0: a GPU kernel over the whole trace and a CPU op with a nested child; rank 1: an NCCL
// kernel over the second half. Lanes: 0 = r0 GPU, 1 = r0 CPU, 2 = r1 GPU.
SessionPtr pixelSession()
{
    auto s = std::make_shared<TraceSession>();
    StringTable& st = s->events.strings;
    s->events.lanes.push_back(synthetic::makeLane(
        st, 0, LaneKind::GpuStream, 0, 7, {{0, 1'000'000, "sgemm", EventCategory::Kernel}}));
    s->events.lanes.push_back(
        synthetic::makeLane(st, 0, LaneKind::CpuThread, 100, 1,
                            {{0, 250'000, "aten::mm", EventCategory::CpuOp, 0},
                             {10'000, 200'000, "cudaLaunchKernel", EventCategory::Runtime, 1}}));
    s->events.lanes.push_back(synthetic::makeLane(
        st, 1, LaneKind::GpuStream, 1, 7,
        {{500'000, 1'000'000, "ncclDevKernel_AllReduce", EventCategory::CommKernel}}));
    return synthetic::finish(s);
}

void sendMouse(QWidget* w, QEvent::Type type, QPoint pos, Qt::MouseButtons buttons,
               Qt::KeyboardModifiers mods = Qt::NoModifier)
{
    const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
    QMouseEvent e(type, QPointF(pos), w->mapToGlobal(QPointF(pos)), button, buttons, mods);
    QApplication::sendEvent(w, &e);
}

// Shown (offscreen), so that grab() paints it at its real size.
void showView(TimelineView& view, SessionPtr session, QSize size)
{
    view.resize(size);
    view.setSession(std::move(session));
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
}

// The state column of the selected collective's table in the details, by rank.
// Per rank, one column (by its header: "state", "op", ...) of the details pane's rank table.
QMap<int, QString> collectiveColumn(const QString& detailsHtml, const QString& header)
{
    QTextDocument doc;
    doc.setHtml(detailsHtml);
    QMap<int, QString> values;
    for (QTextFrame* frame : doc.rootFrame()->childFrames()) {
        auto* table = qobject_cast<QTextTable*>(frame);
        if (!table) continue;
        const auto text = [&](int row, int column) {
            const QTextTableCell cell = table->cellAt(row, column);
            QTextCursor c = cell.firstCursorPosition();
            c.setPosition(cell.lastCursorPosition().position(), QTextCursor::KeepAnchor);
            return c.selectedText();
        };
        if (text(0, 0) != QLatin1String("rank")) continue;
        for (int column = 1; column < table->columns(); ++column)
            if (text(0, column) == header)
                for (int row = 1; row < table->rows(); ++row)
                    values.insert(text(row, 0).toInt(), text(row, column));
    }
    return values;
}

QMap<int, QString> collectiveStates(const QString& detailsHtml)
{
    return collectiveColumn(detailsHtml, QStringLiteral("state"));
}

bool isBackground(QColor c)
{
    return c == timelinecolors::kBackgroundEven || c == timelinecolors::kBackgroundOdd;
}

// A 4-rank synthetic job (rank 1 late, rank 3 hung) written to `dir` and digested to `out`; the
// digest's path, empty when either failed.
QString digestedJob(const QTemporaryDir& dir, const QTemporaryDir& out)
{
    if (bench::writeDigestJob(dir.path().toStdString(), 4, 2.0, 1, 3) <= 2) return {};
    const QString digest = out.filePath(QStringLiteral("job.rsdigest"));
    return Digest::create(dir.path(), digest).isEmpty() ? digest : QString();
}

// The args of an event as the main window's details provider lists them.
TimelineDetailRows argRows(const nlohmann::json& args)
{
    TimelineDetailRows rows;
    for (auto it = args.begin(); it != args.end(); ++it)
        rows.append(
            {QString::fromStdString(it.key()),
             QString::fromStdString(it->is_string() ? it->get<std::string>() : it->dump())});
    return rows;
}

} // namespace

class TestTimelineView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void paintsSpansWhereTheyAre()
    {
        TimelineView view;
        showView(view, pixelSession(), {800, 300});
        const QImage img = view.viewport()->grab().toImage();
        const int x90 = view.xForTime(900'000), x25 = view.xForTime(300'000);
        QCOMPARE(img.pixelColor(x90, view.yForLane(0)), view.colorForEvent({0, 0}));
        QCOMPARE(img.pixelColor(x90, view.yForLane(2)), view.colorForEvent({2, 0}));
        QCOMPARE(img.pixelColor(x25, view.yForLane(2)), view.laneBackground(2));
        QCOMPARE(img.pixelColor(x90, view.yForLane(1)), view.laneBackground(1));
        // The CPU thread of a rank with GPU streams is one row, its top level.
        QCOMPARE(view.yForLane(1, 1), -1);
        QCOMPARE(view.yForLane(2) - view.yForLane(1), TimelineView::kRowHeight +
                                                          TimelineLayout::kLaneGap +
                                                          TimelineView::kRankHeaderHeight);
        // Unfolded, the nested CPU event sits in its own row under its parent.
        view.setLaneToggled(1, true);
        const QImage unfolded = view.viewport()->grab().toImage();
        const int x15 = view.xForTime(150'000);
        QCOMPARE(unfolded.pixelColor(x15, view.yForLane(1, 1) + 5), view.colorForEvent({1, 1}));
        QCOMPARE(unfolded.pixelColor(x90, view.yForLane(1, 1)), view.laneBackground(1));
        // Communication is in the red/orange family, compute kernels are not.
        QVERIFY(view.colorForEvent({2, 0}).hsvHue() < 36);
        QVERIFY(view.colorForEvent({0, 0}).hsvHue() >= 195);
        QVERIFY(view.yForLane(0) < view.yForLane(1)); // GPU lanes first
        QVERIFY(view.yForLane(1) < view.yForLane(2)); // ranks in order

        // The overview strip shows the GPU streams' mean busy fraction over the whole trace:
        // both busy at 90 %, one of two at 30 %.
        view.setVisibleRange(0, 50'000); // moves the window marker out of the way
        const QImage ov = view.viewport()->grab().toImage();
        const QColor bar(120, 140, 180);
        const auto overviewX = [&](double frac) {
            return TimelineView::kLabelWidth + int(frac * view.trackWidth());
        };
        const int bottom = TimelineView::kOverviewHeight - 3;
        QCOMPARE(ov.pixelColor(overviewX(0.9), bottom), bar);
        QCOMPARE(ov.pixelColor(overviewX(0.9), 3), bar);
        QCOMPARE(ov.pixelColor(overviewX(0.3), bottom), bar);
        QVERIFY(ov.pixelColor(overviewX(0.3), 3) != bar);
    }

    void instantEventsStayVisibleZoomedOut_data()
    {
        QTest::addColumn<bool>("cpu");
        QTest::addRow("gpu-stream") << false;
        QTest::addRow("cpu-thread-nested") << true;
    }

    void instantEventsStayVisibleZoomedOut()
    {
        QFETCH(bool, cpu);
        // 100 k tiny events in the first 40 % of 1 ms force the pyramid; then zero-duration
        // events alone in the empty rest (on a CPU thread nested under a parent's row).
        auto s = std::make_shared<TraceSession>();
        std::vector<synthetic::Span> spans;
        const auto kind = cpu ? EventCategory::CpuOp : EventCategory::Kernel;
        const std::uint8_t depth = cpu ? 1 : 0;
        if (cpu) spans.push_back({0, 1'000'000, "parent", kind, 0});
        for (int i = 0; i < 100'000; ++i)
            spans.push_back({i * 4 + 1, i * 4 + 3, "busy", kind, depth});
        const std::int64_t instants[] = {600'000, 750'000, 900'000};
        for (std::int64_t t : instants)
            spans.push_back({t, t, "mark", EventCategory::Memcpy, depth});
        spans.push_back({999'000, 1'000'000, "tail", kind, depth});
        s->events.lanes.push_back(synthetic::makeLane(
            s->events.strings, 0, cpu ? LaneKind::CpuThread : LaneKind::GpuStream, 0, 7, spans));
        TimelineView view;
        view.resize(700, 200);
        view.setSession(synthetic::finish(s));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QImage img = view.viewport()->grab().toImage();
        QVERIFY(img.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT) +
                         QStringLiteral("/timeline_instants_%1.png").arg(cpu ? 1 : 0)));
        const int y = view.yForLane(0, depth);
        const QColor mark = view.colorForEvent({0, std::int64_t(spans.size() - 4)});
        for (std::int64_t t : instants) {
            const int x = view.xForTime(t);
            // In the instant's own hue (not a neighbour's, nor a grid line), within a pixel
            // either side of its time (the pixel boundary).
            bool shown = false;
            for (int dx = -1; dx <= 1; ++dx) {
                const QColor c = img.pixelColor(x + dx, y);
                shown |= c.hsvSaturation() > 40 && std::abs(c.hsvHue() - mark.hsvHue()) <= 12;
            }
            QVERIFY2(shown, qPrintable(QString::number(t)));
            QVERIFY(isBackground(img.pixelColor(x + 6, y)));
            QVERIFY(isBackground(img.pixelColor(x - 6, y)));
        }
    }

    void clickingAMarkerReportsIt()
    {
        TimelineView view;
        view.resize(800, 300);
        view.setSession(pixelSession());
        // On rank 1 only: 300-350 µs is before its kernel, 650-700 µs over it.
        view.setMarkers({{300'000,
                          350'000,
                          {1},
                          QColor(230, 0, 0),
                          QStringLiteral("F1 stall"),
                          QStringLiteral("F1")},
                         {650'000,
                          700'000,
                          {1},
                          QColor(230, 120, 0),
                          QStringLiteral("F2 skew"),
                          QStringLiteral("F2")}});
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy clicked(&view, &TimelineView::markerClicked);
        // The label in rank 1's header row: the first y from the top that finds F2 at its x.
        const int x2 = view.xForTime(660'000);
        int headerY = -1;
        for (int y = TimelineView::kHeaderHeight; y < view.yForLane(2) && headerY < 0; ++y)
            if (view.markerAt({x2, y}) == 1) headerY = y;
        QVERIFY(headerY > view.yForLane(1)); // below rank 0's lanes, so in rank 1's header
        QCOMPARE(view.markerAt({x2, view.yForLane(0)}), -1); // not on rank 0
        QCOMPARE(view.markerAt({view.xForTime(800'000), headerY}), -1);
        sendMouse(view.viewport(), QEvent::MouseButtonPress, {x2, headerY}, Qt::LeftButton);
        sendMouse(view.viewport(), QEvent::MouseButtonRelease, {x2, headerY}, Qt::NoButton);
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked[0][0].toInt(), 1);
        QCOMPARE(clicked[0][1].toString(), QStringLiteral("F2"));
        // Over an event the event wins; where the lane is empty the marker does.
        const QPoint onEvent(x2, view.yForLane(2));
        QCOMPARE(view.markerAt(onEvent), -1);
        sendMouse(view.viewport(), QEvent::MouseButtonPress, onEvent, Qt::LeftButton);
        sendMouse(view.viewport(), QEvent::MouseButtonRelease, onEvent, Qt::NoButton);
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(view.selected(), (TimelineEventRef{2, 0}));
        const QPoint empty(view.xForTime(320'000), view.yForLane(2));
        QCOMPARE(view.markerAt(empty), 0);
        sendMouse(view.viewport(), QEvent::MouseButtonPress, empty, Qt::LeftButton);
        sendMouse(view.viewport(), QEvent::MouseButtonRelease, empty, Qt::NoButton);
        QCOMPARE(clicked.size(), 2);
        QCOMPARE(clicked[1][1].toString(), QStringLiteral("F1"));
        QVERIFY(!view.selected().isValid());
    }

    // Two findings on one rank at one time (rank_crash_w4: rank 0's crash and its hang, 1 µs apart
    // at 1280 px): their labels in the rank's header are side by side, each readable, and a click
    // on either selects its own finding.
    void markerLabelsAtOneTimeDoNotCoverEachOther()
    {
        TimelineView view;
        const QColor red(230, 0, 0), blue(0, 60, 230);
        view.setMarkers(
            {{600'000, 601'000, {1}, red, QStringLiteral("F1 crash"), QStringLiteral("F1")},
             {599'000, 600'000, {1}, blue, QStringLiteral("F2 hang"), QStringLiteral("F2")}});
        showView(view, pixelSession(), {800, 300});
        const QImage img = view.viewport()->grab().toImage();
        QVERIFY(img.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/timeline_marker_labels.png")));
        // Rank 1's header: between rank 0's last lane and rank 1's first, where a marker is hit.
        const int lineX = view.xForTime(600'000);
        int headerY = -1;
        for (int y = view.yForLane(1) + 1; y < view.yForLane(2) && headerY < 0; ++y)
            if (view.markerAt({lineX + 3, y}) >= 0) headerY = y;
        QVERIFY(headerY > 0);
        // The x extent of each label's text: pixels of its hue, saturated (not the pale band
        // behind), off the markers' 2 px lines.
        const auto textExtent = [&](const QColor& c) {
            int first = INT_MAX, last = -1;
            for (int y = headerY; y < headerY + TimelineLayout::kRankHeaderHeight; ++y)
                for (int x = view.xForTime(599'000) + 2; x < img.width(); ++x) {
                    if (x <= lineX + 2) continue;
                    const QColor px = img.pixelColor(x, y);
                    const int dh = std::abs(px.hsvHue() - c.hsvHue());
                    if (px.hsvSaturation() > 110 && std::min(dh, 360 - dh) <= 20) {
                        first = std::min(first, x);
                        last = std::max(last, x);
                    }
                }
            return std::pair{first, last};
        };
        const auto [redFirst, redLast] = textExtent(red);
        const auto [blueFirst, blueLast] = textExtent(blue);
        QVERIFY2(redLast > redFirst && blueLast > blueFirst, "a label is not drawn");
        QVERIFY2(redLast < blueFirst || blueLast < redFirst,
                 qPrintable(QStringLiteral("F1 text at %1-%2, F2 at %3-%4")
                                .arg(redFirst)
                                .arg(redLast)
                                .arg(blueFirst)
                                .arg(blueLast)));
        // Each wide enough for its text, and a click on it is its finding's.
        QVERIFY(redLast - redFirst >=
                view.fontMetrics().horizontalAdvance(QStringLiteral("F1 crash")) / 2);
        QVERIFY(blueLast - blueFirst >=
                view.fontMetrics().horizontalAdvance(QStringLiteral("F2 hang")) / 2);
        const int textY = headerY + TimelineLayout::kRankHeaderHeight / 2;
        QCOMPARE(view.markerAt({(redFirst + redLast) / 2, textY}), 0);
        QCOMPARE(view.markerAt({(blueFirst + blueLast) / 2, textY}), 1);
    }

    // A finding at the trace's end (mismatched_collective_w4_r0's F2 at 1280 px): its label in the
    // rank's header is drawn whole, ending inside the picture, where there is room left of the
    // marker; in a picture too narrow for it, it is elided there. A click on it is its finding's.
    void markerLabelsAtTheRightEdgeFit_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("whole");
        QTest::newRow("room to the left") << 800 << true;
        QTest::newRow("narrower than the label") << 330 << false;
    }

    void markerLabelsAtTheRightEdgeFit()
    {
        QFETCH(int, width);
        QFETCH(bool, whole);
        TimelineView view;
        const QColor red(230, 0, 0);
        const QString label = QStringLiteral("F2 hang: allreduce seq 7 never completed on rank 1");
        view.setMarkers({{998'000, 1'000'000, {1}, red, label, QStringLiteral("F2")}});
        showView(view, pixelSession(), {width, 300});
        const QImage img = view.viewport()->grab().toImage();
        QVERIFY(img.save(
            QStringLiteral(RANKSCOPE_TEST_OUTPUT "/timeline_marker_label_edge_%1.png").arg(width)));
        const int markerX = view.xForTime(998'000);
        const int labelAdvance = view.fontMetrics().horizontalAdvance(label);
        QVERIFY2(markerX + labelAdvance > img.width(), "the marker leaves room for its label");
        int headerY = -1;
        for (int y = view.yForLane(1) + 1; y < view.yForLane(2) && headerY < 0; ++y)
            if (view.markerAt({markerX, y}) >= 0) headerY = y;
        QVERIFY(headerY > 0);
        // The label's text: saturated pixels of the marker's hue, off its 2 px line.
        int first = INT_MAX, last = -1;
        for (int y = headerY; y < headerY + TimelineLayout::kRankHeaderHeight; ++y)
            for (int x = 0; x < img.width(); ++x) {
                if (x >= markerX - 1 && x <= markerX + 2) continue;
                const QColor px = img.pixelColor(x, y);
                const int dh = std::abs(px.hsvHue() - red.hsvHue());
                if (px.hsvSaturation() > 110 && std::min(dh, 360 - dh) <= 20) {
                    first = std::min(first, x);
                    last = std::max(last, x);
                }
            }
        QVERIFY2(last > first, "the label is not drawn");
        QVERIFY2(last < img.width() - 2,
                 qPrintable(QStringLiteral("text ends at %1 of %2 px").arg(last).arg(img.width())));
        const int drawn = last - first + 1;
        if (whole)
            QVERIFY2(drawn >= labelAdvance * 9 / 10,
                     qPrintable(QStringLiteral("%1 of %2 px drawn").arg(drawn).arg(labelAdvance)));
        else
            QVERIFY2(drawn < labelAdvance && drawn >= (img.width() - markerX) * 2,
                     qPrintable(QStringLiteral("%1 of %2 px drawn").arg(drawn).arg(labelAdvance)));
        QCOMPARE(
            view.markerAt({(first + last) / 2, headerY + TimelineLayout::kRankHeaderHeight / 2}),
            0);
    }

    void zoomedOutUsesTheLevelOfDetail()
    {
        // 200 k tiny events in the first half of 1 ms: far more events than pixels.
        auto s = std::make_shared<TraceSession>();
        std::vector<synthetic::Span> spans;
        for (int i = 0; i < 200'000; ++i)
            spans.push_back({i * 2, i * 2 + 1, i % 2 ? "a" : "b"});
        spans.push_back({999'000, 1'000'000, "tail"});
        s->events.lanes.push_back(
            synthetic::makeLane(s->events.strings, 0, LaneKind::GpuStream, 0, 7, spans));
        TimelineView view;
        view.resize(700, 200);
        view.setSession(synthetic::finish(s));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const QImage img = view.viewport()->grab().toImage();
        const int y = view.yForLane(0);
        for (qint64 t : {10'000, 150'000, 390'000})
            QVERIFY2(!isBackground(img.pixelColor(view.xForTime(t), y)),
                     qPrintable(QString::number(t)));
        // (Times off the 200 µs grid lines.)
        QVERIFY(isBackground(img.pixelColor(view.xForTime(650'000), y)));
        QVERIFY(isBackground(img.pixelColor(view.xForTime(930'000), y)));
        // Zoomed in, the same lane draws single events with gaps between them.
        view.setVisibleRange(100'000, 100'100); // 1 ns = several pixels
        const QImage deep = view.viewport()->grab().toImage();
        QCOMPARE(deep.pixelColor(view.xForTime(100'000) + 1, y), view.colorForEvent({0, 50'000}));
        QCOMPARE(deep.pixelColor(view.xForTime(100'001) + 2, y), view.laneBackground(0));
    }

    void hitTests()
    {
        TimelineView view;
        showView(view, pixelSession(), {800, 300});
        view.setLaneToggled(1, true); // all levels of the CPU thread
        QCOMPARE(view.hitTest({view.xForTime(900'000), view.yForLane(0)}),
                 (TimelineEventRef{0, 0}));
        QCOMPARE(view.hitTest({view.xForTime(100'000), view.yForLane(1, 1)}),
                 (TimelineEventRef{1, 1}));
        QCOMPARE(view.hitTest({view.xForTime(240'000), view.yForLane(1, 0)}),
                 (TimelineEventRef{1, 0}));
        QVERIFY(!view.hitTest({view.xForTime(300'000), view.yForLane(2)}).isValid());
        QVERIFY(!view.hitTest({view.xForTime(900'000), view.yForLane(1, 1)}).isValid());
        QVERIFY(!view.hitTest({10, view.yForLane(0)}).isValid());      // the label column
        QVERIFY(!view.hitTest({view.xForTime(900'000), 5}).isValid()); // the overview
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {},
                          QPoint(view.xForTime(800'000), view.yForLane(2)));
        QCOMPARE(view.selected(), (TimelineEventRef{2, 0}));
        const QString html = view.selectionDetailsHtml();
        QVERIFY(html.contains(QStringLiteral("ncclDevKernel_AllReduce")));
        QVERIFY(html.contains(QStringLiteral("communication kernel")));
        QVERIFY(html.contains(QStringLiteral("500.000 \u00b5s"))); // duration
        auto readOn = std::make_shared<std::atomic<QThread*>>(nullptr);
        view.setDetailsProvider([readOn](const TraceSession&, const Lane& lane, std::size_t event) {
            *readOn = QThread::currentThread();
            return QList<QPair<QString, QString>>{
                {QStringLiteral("stream"), QString::number(lane.rank * 100 + int(event))}};
        });
        // Read in a worker, never on the GUI thread.
        QTRY_VERIFY(view.selectionDetailsHtml().contains(QStringLiteral("<td>100</td>")));
        QVERIFY(readOn->load() && readOn->load() != QThread::currentThread());
        // Folded, rank 0 keeps one row: its GPU stream's kernel, drawn and hit there.
        view.setRankCollapsed(0, true);
        QCOMPARE(view.yForLane(0), -1);
        const int summaryY = TimelineView::kHeaderHeight + view.layout().rankContentRange(0).first +
                             TimelineView::kRankHeaderHeight + TimelineView::kRowHeight / 2 -
                             view.verticalScrollBar()->value();
        const QImage folded = view.viewport()->grab().toImage();
        QCOMPARE(folded.pixelColor(view.xForTime(900'000), summaryY), view.colorForEvent({0, 0}));
        QCOMPARE(view.hitTest({view.xForTime(900'000), summaryY}), (TimelineEventRef{0, 0}));
    }

    void keyboardAndMouseNavigate()
    {
        TimelineView view;
        showView(view, pixelSession(), {900, 300});
        const ZoomState& z = view.zoom();
        QCOMPARE(z.visibleSpanNs(), qint64(1'000'000));
        QTest::keyClick(&view, Qt::Key_W);
        QCOMPARE(z.visibleSpanNs(), qint64(800'000));
        QCOMPARE(z.visibleStartNs(), qint64(100'000)); // about the centre
        QTest::keyClick(&view, Qt::Key_D);
        QCOMPARE(z.visibleStartNs(), qint64(180'000));
        QTest::keyClick(&view, Qt::Key_A);
        QTest::keyClick(&view, Qt::Key_A);
        QCOMPARE(z.visibleStartNs(), qint64(20'000));
        QTest::keyClick(&view, Qt::Key_S);
        QCOMPARE(z.visibleSpanNs(), qint64(1'000'000));
        QTest::keyClick(&view, Qt::Key_W);
        QTest::keyClick(&view, Qt::Key_F);
        QCOMPARE(z.visibleSpanNs(), qint64(1'000'000));
        view.select({1, 0});
        QTest::keyClick(&view, Qt::Key_F); // fit the selected event, with a margin
        QCOMPARE(z.visibleStartNs(), qint64(0));
        QCOMPARE(z.visibleEndNs(), qint64(300'000)); // -25k..275k, shifted into the trace

        // Wheel: zooms in at the cursor, the time under it stays put.
        view.setVisibleRange(0, 1'000'000);
        const QPoint at(view.xForTime(250'000), view.yForLane(0));
        const qint64 before = z.xToTime(at.x() - TimelineView::kLabelWidth);
        QWheelEvent wheel(QPointF(at), view.viewport()->mapToGlobal(QPointF(at)), {}, {0, 120},
                          Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(view.viewport(), &wheel);
        QCOMPARE(z.visibleSpanNs(), qint64(800'000));
        QVERIFY(std::abs(z.xToTime(at.x() - TimelineView::kLabelWidth) - before) <= 2);

        // Drag pans: 100 px to the left shows later times.
        const qint64 start = z.visibleStartNs();
        const double npp = z.nsPerPx();
        sendMouse(view.viewport(), QEvent::MouseButtonPress, at, Qt::LeftButton);
        sendMouse(view.viewport(), QEvent::MouseMove, at - QPoint(100, 0), Qt::LeftButton);
        sendMouse(view.viewport(), QEvent::MouseButtonRelease, at - QPoint(100, 0), Qt::NoButton);
        QVERIFY(std::abs(z.visibleStartNs() - (start + qint64(100 * npp))) <= 2);

        // Shift-drag measures.
        const int x1 = view.xForTime(300'000), x2 = view.xForTime(500'000);
        sendMouse(view.viewport(), QEvent::MouseButtonPress, {x1, 120}, Qt::LeftButton,
                  Qt::ShiftModifier);
        sendMouse(view.viewport(), QEvent::MouseMove, {x2, 120}, Qt::LeftButton, Qt::ShiftModifier);
        sendMouse(view.viewport(), QEvent::MouseButtonRelease, {x2, 120}, Qt::NoButton,
                  Qt::ShiftModifier);
        QVERIFY(z.hasSelection());
        QVERIFY(std::abs((z.selectionEndNs() - z.selectionStartNs()) - 200'000) <= 2 * npp);
        const QImage img = view.viewport()->grab().toImage();
        QCOMPARE(img.pixelColor((x1 + x2) / 2, TimelineView::kOverviewHeight + 3),
                 QColor(40, 120, 255)); // the duration label over the ruler
        QTest::keyClick(&view, Qt::Key_F);
        QVERIFY(std::abs(z.visibleSpanNs() - 200'000) <= 2 * npp);
    }

    void findHighlightsAndSteps()
    {
        auto session = synthetic::makeSession({2, 1, 1, 40, 1'000'000, 10, 1000, 5});
        TimelineView view;
        view.resize(900, 400);
        view.setSession(session);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QSignalSpy spy(&view, &TimelineView::findHitsChanged);
        view.setFindText(QStringLiteral("allreduce_sum"));
        QTRY_COMPARE(view.findHitCount(), 8); // 4 per rank, found in a worker
        QCOMPARE(spy.count(), 2);             // searching, then the hits
        const auto hits = view.findHits();
        // Hits are ordered by time.
        const auto& lanes = session->events.lanes;
        for (std::size_t i = 1; i < hits.size(); ++i)
            QVERIFY(lanes[std::size_t(hits[i - 1].lane)].startNs[std::size_t(hits[i - 1].event)] <=
                    lanes[std::size_t(hits[i].lane)].startNs[std::size_t(hits[i].event)]);
        // Every hit is outlined in the find colour.
        const QImage img = view.viewport()->grab().toImage();
        for (const TimelineEventRef& h : hits) {
            const Lane& lane = lanes[std::size_t(h.lane)];
            const int x = view.xForTime(lane.startNs[std::size_t(h.event)]);
            const int yTop = view.yForLane(h.lane) - TimelineView::kRowHeight / 2;
            bool outlined = false;
            for (int dy = -1; dy <= 2 && !outlined; ++dy) // the outline's top edge
                outlined = img.pixelColor(x + 1, yTop + dy) == timelinecolors::kFindHit;
            QVERIFY2(outlined, qPrintable(QStringLiteral("hit %1/%2").arg(h.lane).arg(h.event)));
        }
        QTest::keyClick(&view, Qt::Key_Return);
        QCOMPARE(view.currentFindHit(), 0);
        QCOMPARE(view.selected(), hits[0]);
        QTest::keyClick(&view, Qt::Key_Return);
        QCOMPARE(view.selected(), hits[1]);
        QTest::keyClick(&view, Qt::Key_Return, Qt::ShiftModifier);
        QTest::keyClick(&view, Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(view.currentFindHit(), 7); // wraps around
        view.setFindText(QStringLiteral("no such kernel"));
        QTRY_COMPARE(view.findHitCount(), 0);
    }

    // A search over 800,000 events arrives in several batches: while it runs, the count grows,
    // Shift+Enter goes to the last hit found so far and Enter there waits instead of wrapping;
    // once done, the hits are those of a scan written here, in time order, and Enter wraps.
    void findStepsWhileTheSearchRuns()
    {
        const auto session = synthetic::makeSession({2, 1, 1, 200'000, 2'000'000'000, 10, 1000, 5});
        QVERIFY(session->events.eventCount() > 8 * kFirstBatchEvents);
        TimelineView view;
        view.resize(900, 400);
        view.setSession(session);
        std::vector<int> counts;
        bool stepped = false, previousWentToLast = false, nextWaited = false;
        connect(&view, &TimelineView::findHitsChanged, this, [&](int count, int) {
            if (count == 0 || !view.isFinding() || stepped) return;
            counts.push_back(count);
            if (counts.size() < 2) return;
            stepped = true; // the handler re-enters through findHitsChanged below
            view.findPrevious();
            previousWentToLast = view.currentFindHit() == count - 1;
            view.findNext();
            nextWaited = view.currentFindHit() == count - 1 && view.isFinding();
        });
        view.setFindText(QStringLiteral("allreduce_sum"));
        QTRY_VERIFY_WITH_TIMEOUT(!view.isFinding(), 30000);
        QVERIFY2(stepped, "the search delivered fewer than two batches before its last");
        QVERIFY(counts[1] > counts[0]);
        QVERIFY(previousWentToLast);
        QVERIFY(nextWaited);

        std::vector<std::tuple<std::int64_t, int, std::int64_t>> truth; // (start, lane, event)
        const auto& lanes = session->events.lanes;
        for (std::size_t l = 0; l < lanes.size(); ++l)
            for (std::size_t i = 0; i < lanes[l].size(); ++i) {
                const QString name = QString::fromStdString(
                    std::string(session->events.strings.view(lanes[l].nameId[i])));
                if (name.contains(QStringLiteral("allreduce_sum"), Qt::CaseInsensitive))
                    truth.emplace_back(lanes[l].startNs[i], int(l), std::int64_t(i));
            }
        std::sort(truth.begin(), truth.end());
        const std::vector<TimelineEventRef> hits = view.findHits();
        QCOMPARE(hits.size(), truth.size());
        for (std::size_t i = 0; i < hits.size(); ++i) {
            const TimelineEventRef expected{std::get<1>(truth[i]), std::get<2>(truth[i])};
            QVERIFY(hits[i] == expected);
        }
        while (view.currentFindHit() != view.findHitCount() - 1)
            view.findNext();
        view.findNext();
        QCOMPARE(view.currentFindHit(), 0);
        QCOMPARE(view.selected(), hits[0]);
    }

    // The details of the collective a hang finding is about list every member of its group:
    // the rank that never issued it as "never arrived", the ones that waited as not completed;
    // a desync over different ops shows each rank's own op.
    void collectiveDetailsAgreeWithTheFindings()
    {
        for (const char* run : {"hang_timeout", "uneven_inputs"}) {
            const SessionPtr session =
                loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + QLatin1String(run));
            QVERIFY(session && !session->analysis.findings.empty());
            const Finding& top = session->analysis.findings.front();
            QVERIFY2(top.kind == FindingKind::Hang || top.kind == FindingKind::Desync,
                     top.summary.c_str());
            const CollectiveGroup* group = nullptr;
            const MatchedCollective* row = nullptr;
            for (const CollectiveGroup& g : session->analysis.groups)
                for (const MatchedCollective& c : g.collectives)
                    if (g.name == top.processGroup && c.seq == top.seq) {
                        group = &g;
                        row = &c;
                    }
            QVERIFY(group && row);
            std::int32_t present = -1;
            for (std::int32_t i : row->records)
                if (i >= 0 && session->events.collectives[std::size_t(i)].laneIndex >= 0)
                    present = i;
            QVERIFY(present >= 0);
            const CollectiveRecord& c = session->events.collectives[std::size_t(present)];
            TimelineView view;
            view.resize(1000, 400);
            view.setSession(session);
            view.select({c.laneIndex, c.eventIndex});
            const QString html = view.selectionDetailsHtml();
            const QMap<int, QString> state = collectiveStates(html);
            const QMap<int, QString> op = collectiveColumn(html, QStringLiteral("op"));
            QCOMPARE(state.size(), qsizetype(group->members.size()));
            for (std::size_t slot = 0; slot < group->members.size(); ++slot) {
                const int rank = group->members[slot];
                const std::int32_t i = row->records[slot];
                if (i < 0) {
                    QCOMPARE(state.value(rank), QStringLiteral("never arrived"));
                    continue;
                }
                const bool blamed =
                    std::find(top.ranks.begin(), top.ranks.end(), rank) != top.ranks.end();
                if (!blamed) QVERIFY2(state.value(rank) != QLatin1String("completed"), run);
                QCOMPARE(op.value(rank), QString::fromUtf8(session->events.strings.view(
                                             session->events.collectives[std::size_t(i)].op)));
            }
        }
    }

    // A rank of the job that left no file (hang_timeout, world_size=3 in the ranks' logs, without
    // any file of rank 2) has a row of its own in every collective's details, told apart from a
    // rank that recorded the group but not the collective.
    void collectiveDetailsListARankWithoutRecords()
    {
        QTemporaryDir dir;
        const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout/");
        for (const QString& name : QDir(from).entryList(QDir::Files))
            if (!name.startsWith(QLatin1String("rank2")) && name != QLatin1String("launcher.log"))
                QVERIFY(QFile::copy(from + name, dir.filePath(name)));
        const SessionPtr session = loadSession(dir.path());
        QVERIFY(session);
        const CollectiveRecord* first = nullptr;
        for (const CollectiveRecord& c : session->events.collectives)
            if (c.rank == 0 && c.laneIndex >= 0 && (!first || c.seq < first->seq)) first = &c;
        QVERIFY(first);
        TimelineView view;
        view.resize(1000, 400);
        view.setSession(session);
        view.select({first->laneIndex, first->eventIndex});
        const QString html = view.selectionDetailsHtml();
        const QMap<int, QString> state = collectiveStates(html);
        QCOMPARE(state.keys(), (QList<int>{0, 1, 2}));
        QVERIFY2(state.value(2).startsWith(QLatin1String("no record")), qPrintable(state.value(2)));
        QVERIFY2(state.value(2).contains(QLatin1String("left no file at all")),
                 qPrintable(state.value(2)));
        QVERIFY(html.contains(QStringLiteral("on 3 ranks")));
    }

    // A rank whose collective is known only from an NCCL COLL line (moved onto the traced ranks'
    // group and seq) was issued and nothing more is known: its row says so and names the line,
    // while a traced call that never started stays plainly "issued".
    void loggedCollectiveSaysWhereItCameFrom()
    {
        QTemporaryDir dir;
        QFile log(dir.filePath(QStringLiteral("rank3_nccl.log")));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write("host:3:3 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 count 1024\n");
        log.close();
        auto session = synthetic::makeSession({3, 1, 1, 50, 1'000'000, 10, 3000, 9});
        session->folder = TraceFolder::discover(dir.path());
        QCOMPARE(session->folder.sources().size(), 1);
        std::vector<CollectiveRecord>& records = session->events.collectives;
        const auto mine = std::find_if(records.begin(), records.end(),
                                       [](const auto& c) { return c.rank == 1 && c.seq == 2; });
        QVERIFY(mine != records.end());
        const TimelineEventRef ref{mine->laneIndex, mine->eventIndex};
        CollectiveRecord logged = *mine;
        logged.rank = 3;
        logged.laneIndex = -1;
        logged.eventIndex = -1;
        logged.execStartNs = logged.execEndNs = -1;
        logged.state = CollectiveRecord::State::Issued;
        logged.stateUnknown = true;
        logged.sourceIndex = 0;
        logged.sourceLine = 1;
        CollectiveRecord notStarted = logged;
        notStarted.rank = 4;
        notStarted.stateUnknown = false;
        notStarted.sourceIndex = notStarted.sourceLine = -1;
        records.push_back(logged);
        records.push_back(notStarted);
        TimelineView view;
        view.resize(1000, 400);
        view.setSession(session);
        view.select(ref);
        QCOMPARE(view.selectedCollectivePeers().size(), std::size_t(5));
        const QMap<int, QString> state = collectiveStates(view.selectionDetailsHtml());
        QCOMPARE(state.value(3),
                 QStringLiteral("issued (NCCL log, completion not shown): rank3_nccl.log:1"));
        QCOMPARE(state.value(4), QStringLiteral("issued"));
        QCOMPARE(state.value(1), QStringLiteral("completed"));
    }

    void collectiveSelectionFindsEveryRank()
    {
        auto session = synthetic::makeSession({3, 1, 1, 50, 1'000'000, 10, 3000, 9});
        TimelineView view;
        view.resize(1000, 400);
        view.setSession(session);
        const EventStore& store = session->events;
        const CollectiveRecord* mine = nullptr;
        for (const CollectiveRecord& c : store.collectives)
            if (c.rank == 1 && c.seq == 2) mine = &c;
        QVERIFY(mine);
        view.select({mine->laneIndex, mine->eventIndex});
        const auto peers = view.selectedCollectivePeers();
        QCOMPARE(peers.size(), std::size_t(3));
        for (std::size_t i = 0; i < peers.size(); ++i) {
            QCOMPARE(store.collectives[peers[i]].rank, int(i));
            QCOMPARE(store.collectives[peers[i]].seq, qint64(2));
        }
        const QString html = view.selectionDetailsHtml();
        QVERIFY(html.contains(QStringLiteral("seq 2 on 3 ranks")));
        QVERIFY(html.contains(QStringLiteral("Arrival skew")));
        view.select({mine->laneIndex, mine->eventIndex + 1}); // a compute kernel
        QVERIFY(view.selectedCollectivePeers().empty());

        // A record pointing outside the store (a reader's bug) is listed but never drawn.
        auto broken = std::make_shared<TraceSession>(*session);
        CollectiveRecord stray = *mine;
        stray.rank = 7;
        stray.laneIndex = 999;
        broken->events.collectives.push_back(stray);
        view.setSession(broken);
        view.select({mine->laneIndex, mine->eventIndex});
        QCOMPARE(view.selectedCollectivePeers().size(), std::size_t(4));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // The skew's length is labelled in the ruler, clear of the lanes' events.
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        for (std::size_t i : view.selectedCollectivePeers()) {
            const CollectiveRecord& c = broken->events.collectives[i];
            first = std::min(first, view.displayTimeNs(c.rank, c.execStartNs));
            last = std::max(last, view.displayTimeNs(c.rank, c.execStartNs));
        }
        QVERIFY(view.viewport()->grab().toImage().pixelColor(view.xForTime(first) + 8,
                                                             TimelineView::kHeaderHeight + 3) !=
                QColor(Qt::white));
        // The badge is in the ruler, beside its tick labels ("0 s", "2 s"), not over them: its
        // whole title, or the skew's length alone where the ticks leave no room for the title.
        for (int width : {1000, 760, 620}) {
            view.resize(width, 400);
            QCoreApplication::processEvents();
            const QImage img = view.viewport()->grab().toImage();
            const int badgeY = TimelineView::kOverviewHeight + 3;
            int badgeLeft = -1, badgeRight = -1;
            for (int x = 0; x < img.width(); ++x)
                if (img.pixelColor(x, badgeY) == timelinecolors::kArrivalSkew) {
                    if (badgeLeft < 0) badgeLeft = x;
                    badgeRight = x;
                }
            QVERIFY(badgeLeft >= 0);
            QVERIFY(badgeRight - badgeLeft + 1 >=
                    view.fontMetrics().horizontalAdvance(ZoomState::formatDuration(last - first)));
            const ZoomState& zoom = view.zoom();
            const std::int64_t step = ZoomState::tickStepNs(zoom.nsPerPx(), 90);
            const std::int64_t origin = zoom.traceStartNs();
            int labels = 0;
            for (std::int64_t t = origin; t <= zoom.visibleEndNs(); t += step) {
                if (t < zoom.visibleStartNs()) continue;
                const QString label = ZoomState::formatNs(t - origin, step);
                const int from = view.xForTime(t) + 3;
                const int to = from + view.fontMetrics().horizontalAdvance(label);
                if (to >= img.width()) continue;
                ++labels;
                QVERIFY2(to < badgeLeft || from > badgeRight,
                         qPrintable(QStringLiteral("%1 at %2 px").arg(label).arg(width)));
            }
            QVERIFY2(labels >= 2, qPrintable(QString::number(width)));
        }
    }

    void clockOffsetsCollapseMarkersAndBanners()
    {
        TimelineView view;
        showView(view, pixelSession(), {800, 300});
        view.setClockOffsets({{1, -400'000}}); // rank 1's kernel now covers 100k..600k
        QCOMPARE(view.zoom().traceStartNs(), qint64(0));
        QImage img = view.viewport()->grab().toImage();
        QCOMPARE(img.pixelColor(view.xForTime(300'000), view.yForLane(2)),
                 view.colorForEvent({2, 0}));
        QCOMPARE(img.pixelColor(view.xForTime(850'000), view.yForLane(2)), view.laneBackground(2));
        view.setUseClockOffsets(false);
        img = view.viewport()->grab().toImage();
        QCOMPARE(img.pixelColor(view.xForTime(300'000), view.yForLane(2)), view.laneBackground(2));
        QCOMPARE(img.pixelColor(view.xForTime(850'000), view.yForLane(2)),
                 view.colorForEvent({2, 0}));
        // Switching the clock keeps the range in view, so a stall can be compared on both.
        view.setVisibleRange(300'000, 500'000);
        QSignalSpy clockChanged(&view, &TimelineView::clockChanged);
        view.setUseClockOffsets(true);
        QCOMPARE(clockChanged.size(), 1);
        QCOMPARE(view.zoom().visibleStartNs(), qint64(300'000));
        QCOMPARE(view.zoom().visibleEndNs(), qint64(500'000));
        QCOMPARE(view.clock(), (TimelineClock{{{1, -400'000}}, true}));
        view.setVisibleRange(0, 1'000'000);

        view.setMarkers({{650'000, 700'000, {1}, QColor(230, 0, 0), QStringLiteral("stall")}});
        img = view.viewport()->grab().toImage();
        const int xm = view.xForTime(680'000);
        QVERIFY(!isBackground(img.pixelColor(xm, view.yForLane(2))));
        QVERIFY(img.pixelColor(xm, view.yForLane(2)).red() >
                img.pixelColor(xm, view.yForLane(2)).blue());
        QCOMPARE(img.pixelColor(xm, view.yForLane(1)), view.laneBackground(1)); // rank 0 untouched

        view.setRankBanner(1, QStringLiteral("rank 1: trace truncated"));
        img = view.viewport()->grab().toImage();
        const int headerY =
            view.yForLane(2) - TimelineView::kRowHeight / 2 - TimelineView::kRankHeaderHeight / 2;
        QCOMPARE(img.pixelColor(TimelineView::kLabelWidth + 6, headerY), QColor(200, 40, 40));

        const int y2 = view.yForLane(2);
        view.setRankCollapsed(0, true);
        QCOMPARE(view.yForLane(0), -1);
        QVERIFY(view.yForLane(2) < y2);
        view.showRange(300'000, 400'000, {0});
        QVERIFY(!view.isRankCollapsed(0));
        QVERIFY(view.zoom().visibleStartNs() <= 300'000 && view.zoom().visibleEndNs() >= 400'000);
        QVERIFY(view.zoom().visibleSpanNs() < 200'000);
    }

    void panelFindsAndExports()
    {
        TimelinePanel panel;
        panel.resize(900, 500);
        QVERIFY(panel.details()->toPlainText().contains(QStringLiteral("Open a trace folder")));
        panel.setSession(pixelSession());
        // Before any click the pane says what the folder holds rather than staying blank.
        QVERIFY2(panel.details()->toPlainText().contains(
                     QStringLiteral("2 ranks, 3 lanes, 4 events, 0 collective records")),
                 qPrintable(panel.details()->toPlainText()));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        panel.view()->setFocus();
        QTest::keyClick(panel.view(), Qt::Key_F, Qt::ControlModifier);
        QVERIFY(panel.findEdit()->isVisible());
        QTest::keyClicks(panel.findEdit(), QStringLiteral("aten"));
        QTRY_COMPARE(panel.view()->findHitCount(), 1);
        QTest::keyClick(panel.findEdit(), Qt::Key_Return);
        QCOMPARE(panel.view()->selected(), (TimelineEventRef{1, 0}));
        QVERIFY(panel.details()->toPlainText().contains(QStringLiteral("aten::mm")));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("view.png"));
        QVERIFY(panel.exportPng(path));
        QImage png(path);
        // The whole timeline, with the rank overview on top once it is read.
        QCOMPARE(png.width(), panel.view()->wholeTimelineSize().width());
        QVERIFY(png.height() >= panel.view()->wholeTimelineSize().height());
        QString error;
        QVERIFY(!panel.exportPng(dir.filePath(QStringLiteral("no/such/dir.png")), &error));
    }

    // A folder of logs only (setup_failure: two ranks that never got past the rendezvous) has
    // no trace to draw: Export… once wrote a picture of "Ranks (0) … No profiler trace" for it.
    // Fit, Align clocks and Export… are disabled, and the export refuses without writing a file.
    void nothingToDrawDisablesExportFitAndAlign()
    {
        const SessionPtr logsOnly =
            loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/setup_failure"));
        QVERIFY(logsOnly && logsOnly->events.eventCount() == 0);
        QCOMPARE(logsOnly->folder.ranks().size(), qsizetype(2));
        TimelinePanel panel;
        const auto controls = [&panel] {
            return QList<QWidget*>{
                panel.findChild<QWidget*>(QStringLiteral("timelineFit")),
                panel.findChild<QWidget*>(QStringLiteral("timelineExport")),
                panel.findChild<QWidget*>(QStringLiteral("timelineAlignClocks"))};
        };
        for (QWidget* control : controls()) {
            QVERIFY(control);
            QVERIFY2(!control->isEnabled(), qPrintable(control->objectName())); // no session yet
        }
        panel.setSession(logsOnly);
        for (QWidget* control : controls())
            QVERIFY2(!control->isEnabled(), qPrintable(control->objectName()));
        QTemporaryDir dir;
        for (const char* name : {"timeline.png", "timeline.svg"}) {
            const QString path = dir.filePath(QLatin1String(name));
            QString error;
            const bool written = QByteArray(name).endsWith(".svg") ? panel.exportSvg(path, &error)
                                                                   : panel.exportPng(path, &error);
            QVERIFY(!written);
            QVERIFY2(error.contains(QStringLiteral("no profiler trace")), qPrintable(error));
            QVERIFY(!QFile::exists(path));
        }
        // A folder with a trace: all three back.
        panel.setSession(pixelSession());
        for (QWidget* control : controls())
            QVERIFY2(control->isEnabled(), qPrintable(control->objectName()));
    }

    // The Timeline tab of a 1280x800 window (docks beside it, menu, tabs and status bar around
    // it): with nothing selected the pane under the lanes is its tab row, with the pane's text on
    // one line beside the tabs, and the lanes get the height. A click on an event unfolds it with
    // the event's details, Esc folds it; the keyboard reaches it by its toggle's shortcut and the
    // tabs; a height the user drags it to is kept, across sessions too.
    void detailsPaneFoldsWhileNothingIsSelected()
    {
        auto session = synthetic::makeSession({8, 2, 1, 200, 20'000'000, 8, 120'000, 5});
        TimelinePanel panel;
        panel.resize(840, 700);
        panel.setSession(session);
        panel.show();
        panel.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&panel));
        DetailsTabs* pane = panel.bottomTabs();
        TimelineView* view = panel.view();
        QTabBar* tabs = pane->tabBar();
        const int line = panel.fontMetrics().height();
        const auto laneRows = [&] {
            return (view->viewport()->height() - TimelineView::kHeaderHeight) /
                   TimelineView::kRowHeight;
        };
        QVERIFY(!pane->isExpanded());
        // The lanes: all the height but the tool row, the rank overview and the pane's tab row.
        QVERIFY2(laneRows() >= 24, qPrintable(QString::number(laneRows())));
        QVERIFY2(pane->height() <= tabs->height() + 6, qPrintable(QString::number(pane->height())));
        QVERIFY(pane->isSummaryShown());
        QVERIFY(pane->summary().contains(QStringLiteral("Click an event to see its details")));
        // The counts are in what the folded line shows, not in what it elides.
        const auto* summaryLine = pane->findChild<QWidget*>(QStringLiteral("detailsSummary"));
        QVERIFY(summaryLine);
        const QString shown = summaryLine->fontMetrics().elidedText(pane->summary(), Qt::ElideRight,
                                                                    summaryLine->width());
        QVERIFY2(shown.contains(QStringLiteral("8 ranks, 24 lanes, %1 events, %2 collective")
                                    .arg(session->events.eventCount())
                                    .arg(session->events.collectives.size())),
                 qPrintable(shown));
        // Every tab whole, the summary and the toggle beside them, not over them.
        QCOMPARE(tabs->count(), 3);
        for (int i = 0; i < tabs->count(); ++i)
            QVERIFY(tabs->rect().contains(tabs->tabRect(i)));
        QVERIFY(pane->cornerWidget()->isVisible());
        QVERIFY(pane->cornerWidget()->geometry().left() >= tabs->geometry().right());
        QVERIFY(pane->cornerWidget()->geometry().right() <= pane->width());
        // A taller window: the height goes to the lanes, the pane stays its tab row.
        const int rowsBefore = laneRows(), folded = pane->height();
        panel.resize(840, 760);
        QTRY_VERIFY(laneRows() >= rowsBefore + 3);
        QCOMPARE(pane->height(), folded);
        panel.resize(840, 700);
        QTRY_COMPARE(laneRows(), rowsBefore);

        // A click on an event of the lowest lane in view, which the unfolding pane would cover.
        QPoint at;
        int clickedLane = -1;
        for (int l = int(session->events.lanes.size()) - 1; l >= 0 && at.isNull(); --l) {
            const int y = view->yForLane(l);
            if (y < 0 || y + TimelineView::kRowHeight / 2 > view->viewport()->height()) continue;
            for (int x = TimelineView::kLabelWidth + 1; x < view->viewport()->width(); ++x)
                if (view->hitTest({x, y}).lane == l) {
                    at = {x, y};
                    clickedLane = l;
                    break;
                }
        }
        QVERIFY(!at.isNull());
        QVERIFY(at.y() > view->viewport()->height() / 2);
        const Lane& lane = session->events.lanes[std::size_t(clickedLane)];
        const TimelineEventRef hit = view->hitTest(at);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(view->selected(), hit);
        // Scrolled up into what is left of the lanes.
        const int hitY = view->yForLane(hit.lane, lane.depth[std::size_t(hit.event)]);
        QVERIFY2(hitY >= TimelineView::kHeaderHeight &&
                     hitY + TimelineView::kRowHeight / 2 <= view->viewport()->height(),
                 qPrintable(QStringLiteral("%1 of %2").arg(hitY).arg(view->viewport()->height())));
        const QString name =
            QString::fromUtf8(session->events.strings.view(lane.nameId[std::size_t(hit.event)]));
        QVERIFY(pane->isExpanded());
        QVERIFY(panel.details()->isVisible());
        QVERIFY(panel.details()->toPlainText().startsWith(name));
        QVERIFY2(panel.details()->height() >= 4 * line,
                 qPrintable(QString::number(panel.details()->height())));
        QVERIFY(!pane->isSummaryShown()); // the details say it in full
        QVERIFY(laneRows() >= 8);

        // Esc clears the selection: folded, the summary back on the tab row.
        QTest::keyClick(view, Qt::Key_Escape);
        QVERIFY(!view->selected().isValid());
        QVERIFY(!pane->isExpanded());
        QTRY_VERIFY(pane->height() <= tabs->height() + 6);
        QVERIFY(pane->summary().contains(QStringLiteral("Click an event")));
        view->verticalScrollBar()->setValue(0); // `at` on the same event again

        // From the keyboard: the toggle's shortcut, then a tab raised by Ctrl+Tab.
        // (A button's shortcut clicks it as it animates the press: a moment later.)
        QTest::keyClick(view, Qt::Key_D, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(pane->isExpanded());
        QVERIFY(panel.details()->height() >= 4 * line);
        QTest::keyClick(view, Qt::Key_D, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(!pane->isExpanded());
        pane->setFocus();
        QTest::keyClick(pane, Qt::Key_Tab, Qt::ControlModifier);
        QCOMPARE(pane->currentWidget(), panel.breakdownChart());
        QVERIFY(pane->isExpanded());
        // The chart has room for its bars, and the summary (the details' text) shows beside
        // the tabs.
        QVERIFY2(panel.breakdownChart()->height() >= 12 * line,
                 qPrintable(QString::number(panel.breakdownChart()->height())));
        QVERIFY(pane->isSummaryShown());
        // A selection made and cleared there leaves the chart shown.
        view->select(hit);
        QTest::keyClick(view, Qt::Key_Escape);
        QVERIFY(pane->isExpanded());

        // The user drags the pane's handle down a little: that height is kept for the next
        // unfolding.
        auto* splitter = qobject_cast<QSplitter*>(pane->parentWidget());
        QVERIFY(splitter);
        QSplitterHandle* handle = splitter->handle(splitter->indexOf(pane));
        const int dragged = pane->height() - 60;
        const QPoint grip = handle->rect().center();
        QTest::mousePress(handle, Qt::LeftButton, {}, grip);
        QTest::mouseMove(handle, grip + QPoint(0, 60));
        QTest::mouseRelease(handle, Qt::LeftButton, {}, grip + QPoint(0, 60));
        QCOMPARE(pane->height(), dragged);
        pane->setCurrentIndex(0);
        QTest::keyClick(view, Qt::Key_D, Qt::ControlModifier | Qt::ShiftModifier);
        QTRY_VERIFY(!pane->isExpanded());
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
        QVERIFY(pane->isExpanded());
        QCOMPARE(pane->height(), dragged);
        // ... and a new panel (the next run) restores it.
        const QByteArray state = panel.saveState();
        TimelinePanel next;
        next.resize(840, 700);
        next.restoreState(state);
        next.setSession(session);
        next.show();
        QVERIFY(QTest::qWaitForWindowExposed(&next));
        QVERIFY(!next.bottomTabs()->isExpanded());
        next.view()->select(hit);
        QCOMPARE(next.bottomTabs()->height(), dragged);
        // Dragged down onto its tab row: folded.
        QTest::mousePress(handle, Qt::LeftButton, {}, grip);
        QTest::mouseMove(handle, grip + QPoint(0, dragged));
        QTest::mouseRelease(handle, Qt::LeftButton, {}, grip + QPoint(0, dragged));
        QVERIFY(!pane->isExpanded());
        QVERIFY(pane->height() <= tabs->height() + 6);
    }

    // Exported, the whole timeline whatever is in view: zoomed into the first 2 % and brushed to
    // two ranks, the SVG still holds every rank's header and every lane's full name, and the
    // PNG is the rank overview (a row per rank) over every lane of every rank, far taller than
    // the window, with the last lane's last event (long out of view) drawn where it ends.
    void exportsEveryRankAndLane()
    {
        auto session = synthetic::makeSession({8, 2, 2, 200, 20'000'000, 8, 120'000, 5});
        TimelinePanel panel;
        panel.resize(1000, 600);
        panel.setSession(session);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QSignalSpy activity(panel.rankOverview(), &RankOverview::activityReady);
        QVERIFY(panel.rankOverview()->activity() || activity.wait(10000));
        TimelineView* view = panel.view();
        const TimelineLayout layout = view->layout(); // every rank, before brushing
        const std::int64_t t0 = view->zoom().traceStartNs(), t1 = view->zoom().traceEndNs();
        view->setVisibleRange(t0, t0 + (t1 - t0) / 50);
        view->setRankFilter({0, 1});
        QCOMPARE(int(view->layout().ranks().size()), 2);
        QTemporaryDir dir;
        QString error;
        const QString svgPath = dir.filePath(QStringLiteral("timeline.svg"));
        QVERIFY2(panel.exportSvg(svgPath, &error), qPrintable(error));
        QFile svgFile(svgPath);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(svgFile.readAll());
        for (int rank : layout.ranks())
            QVERIFY2(svg.contains(QStringLiteral("Rank %1<").arg(rank)),
                     qPrintable(QString::number(rank)));
        for (std::size_t lane = 0; lane < session->events.lanes.size(); ++lane) {
            const QString name = layout.laneName(int(lane)).toHtmlEscaped();
            QVERIFY2(svg.contains(QLatin1Char('>') + name + QLatin1Char('<')), qPrintable(name));
        }
        const QString pngPath = dir.filePath(QStringLiteral("timeline.png"));
        QVERIFY2(panel.exportPng(pngPath, &error), qPrintable(error));
        const QImage png(pngPath);
        QVERIFY(png.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/timeline_export.png")));
        QFile::remove(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/timeline_export.svg"));
        QVERIFY(QFile::copy(svgPath, QStringLiteral(RANKSCOPE_TEST_OUTPUT "/timeline_export.svg")));
        // The overview on top: its mark strip and a row per rank.
        const int overviewH = png.height() - TimelineView::kHeaderHeight - layout.contentHeight();
        QVERIFY2(overviewH >= RankOverviewLayout::kMarkStripHeight + 8,
                 qPrintable(QString::number(overviewH)));
        QVERIFY(png.height() > 2 * view->viewport()->height());
        const int labelW = view->wholeTimelineLabelWidth();
        QCOMPARE(png.width(), labelW + view->trackWidth());
        const int lastLane = layout.lanesOfRankIndex(layout.ranks().size() - 1).back();
        const int y = overviewH + TimelineView::kHeaderHeight + layout.rowTop(lastLane, 0) + 4;
        QCOMPARE(png.pixelColor(2, y), timelinecolors::kLabelColumn);
        // The lane's last top-level event, on the whole trace's axis.
        const Lane& last = session->events.lanes[std::size_t(lastLane)];
        std::int64_t endNs = 0, startNs = 0;
        for (std::size_t i = 0; i < last.size(); ++i)
            if (last.depth[i] == 0 && last.endNs[i] > endNs) {
                endNs = last.endNs[i];
                startNs = last.startNs[i];
            }
        QVERIFY(startNs > view->zoom().visibleEndNs());
        const ZoomState whole = view->wholeTimelineZoom();
        const int x = labelW + int((whole.timeToX(startNs) + whole.timeToX(endNs)) / 2);
        QVERIFY2(!isBackground(png.pixelColor(x, y + 3)),
                 qPrintable(QStringLiteral("x %1 of %2").arg(x).arg(png.width())));
    }

    // A span far wider than its label carries it at any zoom, also when its lane holds more
    // events than pixels (drawn from the level-of-detail pyramid).
    void wideBarsCarryTheirLabel()
    {
        auto s = std::make_shared<TraceSession>();
        // A marker at 0 and one at 10 s around an 8 s step from 1 s on, full of short ops.
        const std::int64_t step0 = 1'000'000'000, step1 = 9'000'000'000;
        std::vector<synthetic::Span> spans{
            {0, 1'000, "start", EventCategory::UserAnnotation, 0},
            {step0, step1, "ProfilerStep#4", EventCategory::UserAnnotation, 0}};
        for (std::int64_t i = 0; i < 40'000; ++i)
            spans.push_back({step0 + i * 200'000 + 1, step0 + i * 200'000 + 100'000, "aten::add",
                             EventCategory::CpuOp, 1});
        spans.push_back({9'999'000'000, 10'000'000'000, "end", EventCategory::UserAnnotation, 0});
        s->events.lanes.push_back(
            synthetic::makeLane(s->events.strings, 0, LaneKind::CpuThread, 1, 1, spans));
        TimelineView view;
        showView(view, synthetic::finish(s), {TimelineView::kLabelWidth + 900, 200});
        view.setVisibleRange(0, 10'000'000'000); // the step is ~700 px wide
        const int x1 = view.xForTime(step0), x2 = view.xForTime(step1);
        QVERIFY(x2 - x1 > 650 && x2 - x1 < 750);
        const QImage img = view.viewport()->grab().toImage();
        const int top = view.yForLane(0) - TimelineView::kRowHeight / 2 + 2;
        // The bar's fill, right of where its label ends.
        const QColor bar = img.pixelColor(x2 - 10, view.yForLane(0));
        QVERIFY(!isBackground(bar));
        int ink = 0;
        for (int y = top; y < top + TimelineView::kRowHeight - 4; ++y)
            for (int x = x1 + 2; x < x1 + 120; ++x)
                ink += img.pixelColor(x, y) != bar;
        QVERIFY2(ink > 20, qPrintable(QString::number(ink)));
    }

    // Dragging the name column's edge widens it; the track keeps its time range.
    void nameColumnResizes()
    {
        TimelineView view;
        showView(view, pixelSession(), {800, 300});
        const std::int64_t s = view.zoom().visibleStartNs(), e = view.zoom().visibleEndNs();
        const int y = view.yForLane(0);
        QTest::mousePress(view.viewport(), Qt::LeftButton, {}, {TimelineView::kLabelWidth - 2, y});
        sendMouse(view.viewport(), QEvent::MouseMove, {300, y}, Qt::LeftButton);
        QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, {300, y});
        QCOMPARE(view.labelWidth(), 300);
        QCOMPARE(view.xForTime(view.zoom().visibleStartNs()), 300);
        QVERIFY(std::abs(view.zoom().visibleStartNs() - s) <= 2 &&
                std::abs(view.zoom().visibleEndNs() - e) <= 2 * view.zoom().nsPerPx());
        const QImage img = view.viewport()->grab().toImage();
        QCOMPARE(img.pixelColor(250, y), timelinecolors::kLabelColumn);
        QCOMPARE(img.pixelColor(view.xForTime(900'000), y), view.colorForEvent({0, 0}));
        // A click on a lane's name (not its edge) unfolds it.
        QCOMPARE(view.layout().shownLevels(1), 1);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, {40, view.yForLane(1)});
        QCOMPARE(view.layout().shownLevels(1), 2);
    }

    void rulerLabelsAreWholeOrAbsent()
    {
        TimelineView view;
        showView(view, pixelSession(), {800, 300});
        // 200 µs ticks; the one at 800 µs falls a few pixels before the right edge.
        view.setVisibleRange(0, 810'000);
        const int w = view.viewport()->width();
        const int x = view.xForTime(800'000);
        QVERIFY(x > w - 20 && x < w - 2);
        const QImage img = view.viewport()->grab().toImage();
        const QColor rulerBg(244, 244, 248);
        // Above the tick marks, nothing right of the last tick: its label would not fit.
        for (int y = TimelineView::kOverviewHeight + 2;
             y < TimelineView::kOverviewHeight + TimelineView::kRulerHeight - 8; ++y)
            for (int px = x + 1; px < w; ++px)
                QCOMPARE(img.pixelColor(px, y), rulerBg);
        // The tick before it has its label.
        const int x6 = view.xForTime(600'000);
        bool ink = false;
        for (int px = x6 + 3; px < x6 + 30; ++px)
            ink |= img.pixelColor(px, TimelineView::kOverviewHeight + 8) != rulerBg;
        QVERIFY(ink);
    }

    void keyHintsElideAndHideWhenNarrow()
    {
        const QStringList hints{QStringLiteral("W/S zoom"), QStringLiteral("A/D pan"),
                                QStringLiteral("wheel zooms")};
        KeyHintLabel label(hints);
        const QFontMetrics fm = label.fontMetrics();
        const int full = fm.horizontalAdvance(QStringLiteral("W/S zoom · A/D pan · wheel zooms"));
        const QString two = QStringLiteral("W/S zoom · A/D pan …");
        const auto inkColumns = [&] {
            // Columns holding any pixel other than the background, as painted.
            const QImage img = label.grab().toImage();
            const QColor bg = img.pixelColor(0, 0);
            int first = -1, last = -1;
            for (int x = 0; x < img.width(); ++x)
                for (int y = 0; y < img.height(); ++y)
                    if (img.pixelColor(x, y) != bg) {
                        if (first < 0) first = x;
                        last = x;
                        break;
                    }
            return std::pair(first, last);
        };
        label.resize(full + 10, fm.height());
        QCOMPARE(label.shownText(), hints.join(QStringLiteral(" · ")));
        QVERIFY(label.sizeHint().width() >= full);
        QCOMPARE(label.minimumSizeHint().width(), 0); // the tool row may shrink it
        // Between two and three hints: two whole ones and an ellipsis, right-aligned, and no
        // ink in the columns a third hint would have clipped into on the left.
        label.resize(fm.horizontalAdvance(two) + 12, fm.height());
        QCOMPARE(label.shownText(), two);
        const auto [first, last] = inkColumns();
        QVERIFY2(first >= 10 && last < label.width(), qPrintable(QString::number(first)));
        // Narrower than the first hint: nothing at all rather than a cut word.
        label.resize(fm.horizontalAdvance(QStringLiteral("W/S zoom")) - 2, fm.height());
        QCOMPARE(label.shownText(), QString());
        QCOMPARE(inkColumns().first, -1);
        QCOMPARE(label.toolTip(), hints.join(QLatin1Char('\n')));

        // In the panel at a narrow width the row fits (the hints no longer set its minimum)
        // and the hints stay right of the buttons.
        TimelinePanel panel;
        panel.resize(560, 500);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QCOMPARE(panel.width(), 560);
        KeyHintLabel* row = panel.keyHints();
        QVERIFY(row->shownText().endsWith(QStringLiteral("…")));
        QVERIFY(row->geometry().right() < panel.width());
        for (QPushButton* button : panel.findChildren<QPushButton*>())
            if (button->isVisible()) QVERIFY(!button->geometry().intersects(row->geometry()));
        panel.resize(row->sizeHint().width() + 600, 500);
        QTRY_COMPARE(row->shownText(),
                     row->toolTip().replace(QLatin1Char('\n'), QStringLiteral(" · ")));
    }

    // A folder of logs only, or of Flight Recorder dumps only, has no trace events: the pane says
    // so and where its content is, with no ruler over nothing and no overview that would show
    // every rank idle.
    void aFolderWithoutTraceEventsSaysWhereItsContentIs_data()
    {
        QTest::addColumn<QString>("folder");
        QTest::addColumn<QString>("pointsTo");
        QTest::newRow("logs only")
            << QStringLiteral(RANKSCOPE_TEST_DATA "/traces/wrong_world_init_w3")
            << QStringLiteral("Logs tab");
        QTest::newRow("dumps only")
            << QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/dtype_json")
            << QStringLiteral("Collective by rank");
    }

    void aFolderWithoutTraceEventsSaysWhereItsContentIs()
    {
        QFETCH(QString, folder);
        QFETCH(QString, pointsTo);
        const SessionPtr session = loadSession(folder);
        QVERIFY(session && !session->folder.sources().isEmpty());
        QVERIFY(session->events.lanes.empty());
        QVERIFY(!session->logs.empty() || !session->dumps.empty());
        QVERIFY(TimelinePainter::noEventsText(*session).contains(pointsTo));
        TimelinePanel panel;
        panel.resize(840, 600);
        panel.setSession(session);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(!panel.rankOverview()->isVisible());
        // The details pane under it says the same, not to click an event.
        const auto* details = panel.findChild<QTextBrowser*>(QStringLiteral("timelineDetails"));
        QVERIFY(details);
        QVERIFY(details->toPlainText().contains(QStringLiteral("No profiler trace")));
        QVERIFY(!details->toPlainText().contains(QStringLiteral("Click an event")));
        // Text across the middle of the lanes' pane, nothing drawn along the ruler's band.
        const QImage img = panel.view()->viewport()->grab().toImage();
        QVERIFY(img.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/timeline_no_events.png")));
        const auto darkIn = [&img](int y0, int y1) {
            int dark = 0;
            for (int y = std::max(0, y0); y < std::min(img.height(), y1); ++y)
                for (int x = 0; x < img.width(); ++x)
                    dark += img.pixelColor(x, y).value() < 128 ? 1 : 0;
            return dark;
        };
        const int middle = img.height() / 2;
        QVERIFY(darkIn(middle - 30, middle + 30) > 50);
        QCOMPARE(darkIn(TimelineView::kHeaderHeight - TimelineFrame::kRulerHeight,
                        TimelineView::kHeaderHeight),
                 0);
    }

    void screenshotOfASyntheticSession()
    {
        auto session = synthetic::makeSession({4, 2, 2, 400, 20'000'000, 8, 120'000, 11});
        TimelinePanel panel;
        panel.resize(1600, 1000);
        panel.setSession(session);
        TimelineView* view = panel.view();
        view->setRankBanner(3, QStringLiteral("rank 3: trace truncated after 18.2 ms"));
        view->setMarkers(
            {{9'000'000, 9'600'000, {2, 3}, QColor(220, 60, 0), QStringLiteral("stall")}});
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const QString out = QStringLiteral(RANKSCOPE_TEST_OUTPUT);
        QVERIFY(view->renderImage().save(out + QStringLiteral("/timeline_full.png")));
        const CollectiveRecord& c = session->events.collectives[3];
        view->showRange(c.execStartNs - 200'000, c.execEndNs + 400'000, {0});
        const QImage plain = view->renderImage();
        const int x = view->xForTime(c.execStartNs + (c.execEndNs - c.execStartNs) / 2);
        const int y = view->yForLane(c.laneIndex) + 5;
        QCOMPARE(plain.pixelColor(x, y), view->colorForEvent({c.laneIndex, c.eventIndex}));
        view->select({c.laneIndex, c.eventIndex});
        view->setFindText(QStringLiteral("sgemm"));
        QTRY_VERIFY(view->findHitCount() > 0);
        const QImage zoomed = view->renderImage();
        QVERIFY(zoomed.save(out + QStringLiteral("/timeline_collective.png")));
        QCOMPARE(view->selectedCollectivePeers().size(), std::size_t(4));
        QVERIFY(panel.grab().save(out + QStringLiteral("/timeline_panel.png")));
        // The selection and its peers are drawn over the plain frame.
        QVERIFY(zoomed != plain);
    }
    // A digest zoomed past its resolution outside its stored windows: the rank's events over the
    // view are read back from the original trace and drawn; with the folder gone, the view says
    // so once and stays at the digest's resolution. Inside a stored window nothing is read.
    void digestDetailReadFromTheOriginalTrace()
    {
        QTemporaryDir dir, out;
        const QString digest = digestedJob(dir, out);
        QVERIFY(!digest.isEmpty());
        LoadOptions noLods;
        noLods.buildLaneLods = false;
        const SessionPtr fromFolder = loadSession(dir.path(), {}, {}, noLods);
        const SessionPtr fromDigest = loadSession(digest);
        QVERIFY(!fromDigest->digestWindows.empty());

        // 2 ms early in rank 2's trace, where no finding is.
        const int rank = 2;
        std::int64_t first = std::numeric_limits<std::int64_t>::max();
        for (const Lane& lane : fromFolder->events.lanes)
            if (lane.rank == rank && lane.size() > 0) first = std::min(first, lane.startNs.front());
        const std::int64_t a = first + 8'000'000, b = a + 2'000'000;
        for (const Digest::Window& w : fromDigest->digestWindows)
            QVERIFY(w.rank != rank || w.endNs < a || w.startNs > b);

        using Key =
            std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int, std::string>;
        const auto eventsOf = [&](const EventStore& store, std::int64_t lo, std::int64_t hi) {
            std::multiset<Key> keys;
            for (const Lane& lane : store.lanes) {
                if (lane.rank != rank) continue;
                for (std::size_t i = 0; i < lane.size(); ++i)
                    if (lane.startNs[i] <= hi && lane.endNs[i] >= lo)
                        keys.insert({lane.pid, lane.tid, lane.startNs[i], lane.endNs[i],
                                     lane.depth[i],
                                     std::string(store.strings.view(lane.nameId[i]))});
            }
            return keys;
        };
        // The digest alone lacks most of the range's events.
        QVERIFY(eventsOf(fromDigest->events, a, b).size() * 2 <
                eventsOf(fromFolder->events, a, b).size());

        TimelineView view;
        showView(view, fromDigest, {1000, 500});
        view.setRankFilter({rank});
        view.setVisibleRange(a, b);
        const QImage reduced = view.viewport()->grab().toImage();
        QTRY_VERIFY_WITH_TIMEOUT(view.rawDetail(rank) != nullptr, 30000);
        std::int64_t ra = 0, rb = 0;
        const EventStore* raw = view.rawDetail(rank, &ra, &rb);
        QVERIFY(ra <= a && rb >= b);
        const std::multiset<Key> expected = eventsOf(fromFolder->events, ra, rb);
        QVERIFY(expected.size() > 100);
        QCOMPARE(eventsOf(*raw, std::numeric_limits<std::int64_t>::min(),
                          std::numeric_limits<std::int64_t>::max()),
                 expected);
        QVERIFY(view.viewport()->grab().toImage() != reduced); // drawn
        QCOMPARE(view.rawDetailNote(), QString());

        // Zoomed out past the resolution again: the detail is let go.
        view.setVisibleRange(fromDigest->events.lanes.front().startNs.front(),
                             fromDigest->events.lanes.front().endNs.back());
        view.viewport()->grab();
        QTRY_VERIFY_WITH_TIMEOUT(view.rawDetail(rank) == nullptr, 30000);

        // Inside a stored window every event is in the digest: nothing is read.
        const std::vector<Digest::Window>& stored = fromDigest->digestWindows;
        const auto found = std::find_if(stored.begin(), stored.end(),
                                        [](const Digest::Window& w) { return w.finding >= 0; });
        QVERIFY(found != stored.end());
        const Digest::Window& w = *found;
        view.setRankFilter({w.rank});
        view.setVisibleRange(w.startNs + (w.endNs - w.startNs) / 4,
                             w.startNs + (w.endNs - w.startNs) / 4 + 1'000'000);
        view.viewport()->grab();
        QTest::qWait(400);
        QTRY_VERIFY(!view.isReadingRawDetail());
        QVERIFY(view.rawDetail(w.rank) == nullptr);
        // The window is marked on the ruler, with its finding named.
        const int x = view.xForTime(w.startNs + (w.endNs - w.startNs) / 4 + 500'000);
        const QString tip = view.digestWindowsAt(x);
        const std::string id = fromDigest->analysis.findings[std::size_t(w.finding)].id;
        QVERIFY2(tip.contains(QStringLiteral("finding %1 on rank %2")
                                  .arg(QString::fromStdString(id))
                                  .arg(w.rank)),
                 qPrintable(tip));
        const QImage marked = view.viewport()->grab().toImage();
        QVERIFY(marked.pixelColor(x, TimelineView::kOverviewHeight + 1) != QColor(244, 244, 248));
        // Where rank 2 has no window (the range above), nothing of it is named.
        view.setVisibleRange(a, b);
        QCOMPARE(view.digestWindowsAt(view.xForTime((a + b) / 2), rank), QString());

        // The folder renamed: the message, once, naming the file; no detail.
        const QString moved = dir.path() + QStringLiteral("_moved");
        QVERIFY(QDir().rename(dir.path(), moved));
        TimelineView gone;
        QSignalSpy said(&gone, &TimelineView::rawDetailUnavailable);
        showView(gone, fromDigest, {1000, 500});
        gone.setRankFilter({rank});
        gone.setVisibleRange(a, b);
        gone.viewport()->grab();
        QTRY_COMPARE_WITH_TIMEOUT(said.count(), 1, 30000);
        QVERIFY2(said.first().first().toString().contains(QStringLiteral("rank2.pt.trace.json")),
                 qPrintable(said.first().first().toString()));
        QCOMPARE(gone.rawDetailNote(), said.first().first().toString());
        gone.setVisibleRange(a + 100'000, b + 100'000);
        gone.viewport()->grab();
        QTest::qWait(400);
        QTRY_VERIFY(!gone.isReadingRawDetail());
        QCOMPARE(said.count(), 1);
        QVERIFY(gone.rawDetail(rank) == nullptr);
        QVERIFY(QDir().rename(moved, dir.path()));
    }
    // The events read back from the original trace below a digest's resolution are hit, selected
    // and detailed like a folder's (name, times, args as the raw JSON has them); F fits one,
    // Escape drops it; a newer read keeps the selection on the same event while it holds it, and
    // drops it cleanly when it does not (or when the detail is let go).
    void digestDetailEventsSelectable()
    {
        QTemporaryDir dir, out;
        const QString digest = digestedJob(dir, out);
        QVERIFY(!digest.isEmpty());
        const SessionPtr fromDigest = loadSession(digest);
        const int rank = 2;

        // The truth: rank 2's compute kernels (GPU stream 7) straight from its JSON, where Kineto
        // times are microseconds after baseTimeNanoseconds.
        QFile file(dir.filePath(QStringLiteral("rank2.pt.trace.json")));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const nlohmann::json trace = nlohmann::json::parse(file.readAll().toStdString());
        const std::int64_t base = trace.at("baseTimeNanoseconds").get<std::int64_t>();
        struct Truth {
            std::int64_t startNs, endNs;
            std::string name;
            nlohmann::json args;
        };
        std::vector<Truth> kernels;
        for (const nlohmann::json& e : trace.at("traceEvents"))
            if (e.value("ph", "") == "X" && e.value("cat", "") == "kernel" &&
                e.value("tid", 0) == 7) {
                const auto ns = [](double us) { return std::int64_t(std::llround(us * 1000)); };
                const std::int64_t start = base + ns(e.at("ts").get<double>());
                kernels.push_back({start, start + ns(e.at("dur").get<double>()),
                                   e.at("name").get<std::string>(), e.at("args")});
            }
        QVERIFY(kernels.size() > 1000);
        // The digest's stream 7 of rank 2, and a kernel 8.3 ms in that it did not keep (no finding
        // window is there: the rank is neither late nor hung).
        int lane = -1;
        for (std::size_t l = 0; l < fromDigest->events.lanes.size(); ++l)
            if (const Lane& d = fromDigest->events.lanes[l];
                d.rank == rank && d.kind == LaneKind::GpuStream && d.tid == 7)
                lane = int(l);
        QVERIFY(lane >= 0);
        const Lane& kept = fromDigest->events.lanes[std::size_t(lane)];
        const auto target = std::find_if(kernels.begin(), kernels.end(), [&](const Truth& k) {
            return k.startNs >= kernels.front().startNs + 8'300'000 &&
                   std::find(kept.startNs.begin(), kept.startNs.end(), k.startNs) ==
                       kept.startNs.end();
        });
        QVERIFY(target != kernels.end());
        for (const Digest::Window& w : fromDigest->digestWindows)
            QVERIFY(w.rank != rank || w.endNs < target->startNs - 2'000'000 ||
                    w.startNs > target->endNs + 2'000'000);

        TimelineView view;
        view.setDetailsProvider([](const TraceSession& session, const Lane& l, std::size_t i) {
            return argRows(
                readEventDetails(session.folder.sources()[l.sourceIndex], l.sourceOffset[i])
                    .at("args"));
        });
        showView(view, fromDigest, {1000, 500});
        view.setRankFilter({rank});
        const std::int64_t mid = (target->startNs + target->endNs) / 2;
        view.setVisibleRange(mid - 100'000, mid + 100'000);
        view.viewport()->grab();
        QTRY_VERIFY_WITH_TIMEOUT(view.rawDetail(rank) != nullptr, 30000);
        const QPoint at(view.xForTime(mid), view.yForLane(lane));
        QVERIFY(view.hitTest(at).raw);

        // A click selects it; the details are the raw JSON's.
        QSignalSpy changed(&view, &TimelineView::selectionChanged);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(changed.count(), 1);
        const TimelineEventRef picked = view.selected();
        QVERIFY(picked.raw);
        QCOMPARE(picked.lane, lane);
        const auto esc = [](const std::string& v) {
            return QString::fromStdString(v).toHtmlEscaped();
        };
        const auto showsTruth = [&](const QString& html) {
            return html.contains(QStringLiteral("<h3>%1</h3>").arg(esc(target->name))) &&
                   html.contains(QStringLiteral(" (raw %1 ns)").arg(target->startNs)) &&
                   html.contains(ZoomState::formatNs(target->endNs - target->startNs, 1));
        };
        QVERIFY2(showsTruth(view.selectionDetailsHtml()), qPrintable(view.selectionDetailsHtml()));
        QTRY_VERIFY(view.selectionDetailsHtml().contains(QStringLiteral("correlation")));
        for (const auto& [key, value] : argRows(target->args))
            QVERIFY2(view.selectionDetailsHtml().contains(
                         QStringLiteral("<td><b>%1</b></td><td>%2</td>")
                             .arg(key.toHtmlEscaped(), value.toHtmlEscaped())),
                     qPrintable(key));
        QCOMPARE(view.colorForEvent(picked), view.viewport()->grab().toImage().pixelColor(
                                                 view.xForTime(mid), view.yForLane(lane) - 3));

        // F fits it (the read covers that view: no new read), Escape drops it.
        QTest::keyClick(&view, Qt::Key_F);
        QVERIFY(view.zoom().visibleStartNs() <= target->startNs &&
                view.zoom().visibleEndNs() >= target->endNs &&
                view.zoom().visibleSpanNs() < 2 * (target->endNs - target->startNs));
        QCOMPARE(view.selected(), picked);
        QTest::keyClick(&view, Qt::Key_Escape);
        QVERIFY(!view.selected().isValid());
        view.setVisibleRange(mid - 100'000, mid + 100'000);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(view.selected(), picked);

        // Find: the read's hits are outlined; from the selection, Enter and Shift+Enter step
        // through them in time order (the next kernel on the stream is the next "cutlass").
        view.select({});
        const QImage unfound = view.viewport()->grab().toImage();
        view.setFindText(QStringLiteral("cutlass"));
        QVERIFY(view.viewport()->grab().toImage() != unfound);
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, at);
        QTest::keyClick(&view, Qt::Key_Return);
        QVERIFY(view.selected().raw);
        QVERIFY(view.selectionDetailsHtml().contains(
            QStringLiteral(" (raw %1 ns)").arg(std::next(target)->startNs)));
        QTest::keyClick(&view, Qt::Key_Return, Qt::ShiftModifier);
        QCOMPARE(view.selected(), picked);
        view.setFindText({});

        // Scrolled on: the newer read still holds the event, and the selection stays on it.
        std::int64_t ra = 0, rb = 0;
        view.rawDetail(rank, &ra, &rb);
        changed.clear();
        view.setVisibleRange(mid + 50'000, mid + 250'000);
        view.viewport()->grab();
        QTRY_VERIFY_WITH_TIMEOUT(view.rawDetail(rank, &ra) && ra > mid - 150'000, 30000);
        QVERIFY(ra < target->startNs);
        QCOMPARE(changed.count(), 0);
        QVERIFY(view.selected().raw);
        QVERIFY(showsTruth(view.selectionDetailsHtml()));
        // Zoomed to where it is not: the newer read drops it, and nothing refers to the old one.
        view.setVisibleRange(mid + 1'000'000, mid + 1'200'000);
        view.viewport()->grab();
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 30000);
        QVERIFY(!view.selected().isValid());
        QVERIFY(view.rawDetail(rank, &ra) && ra > target->endNs);
        QVERIFY(view.selectionDetailsHtml().contains(QStringLiteral("Click an event")));
        view.viewport()->grab();
        // Zoomed out past the resolution: the detail is let go, and its selection with it.
        const auto next = std::find_if(
            target, kernels.end(), [&](const Truth& k) { return k.startNs >= mid + 1'050'000; });
        QVERIFY(next != kernels.end());
        const QPoint later(view.xForTime((next->startNs + next->endNs) / 2), view.yForLane(lane));
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, later);
        QVERIFY(view.selected().raw);
        view.setVisibleRange(fromDigest->events.lanes.front().startNs.front(),
                             fromDigest->events.lanes.front().endNs.back());
        view.viewport()->grab();
        QTRY_VERIFY_WITH_TIMEOUT(view.rawDetail(rank) == nullptr, 30000);
        QVERIFY(!view.selected().isValid());
        QCOMPARE(changed.count(), 3); // the click, then the drop
        view.viewport()->grab();
    }
};

QTEST_MAIN(TestTimelineView)
#include "tst_timelineview.moc"
