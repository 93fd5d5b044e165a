// The rank overview: its layout without a widget, and its pixels offscreen, checked against rows
// and times worked out from the synthetic jobs' parameters.
#include "tests/support/gzip.h"
#include "tests/support/syntheticjob.h"
#include "tests/support/syntheticsession.h"
#include "views/timeline/rankoverview.h"
#include "views/timeline/rankoverviewlayout.h"
#include "views/timeline/timelinecolors.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QHelpEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>
#include <QVBoxLayout>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

using namespace rankscope;

namespace {

constexpr int kStrip = RankOverviewLayout::kMarkStripHeight;
constexpr std::int64_t kComputeNs = 1'000'000;
constexpr std::int64_t kHangNs = 10'000'000'000;

QColor stateColor(RankState s)
{
    return timelinecolors::rankStateColor(s);
}

// The job as the readers would leave it, with each record pointing at its execution event (the
// builder leaves eventIndex unset), so that a click on one selects the collective.
SessionPtr sessionOf(test::SyntheticJob& job)
{
    auto s = std::make_shared<TraceSession>();
    s->events = std::move(job.finish());
    for (CollectiveRecord& c : s->events.collectives) {
        const Lane& lane = s->events.lanes[std::size_t(c.laneIndex)];
        const auto it = std::lower_bound(lane.startNs.begin(), lane.startNs.end(), c.execStartNs);
        c.eventIndex = it - lane.startNs.begin();
    }
    return synthetic::finish(s);
}

// `steps` healthy steps of one all_reduce each, then, when `hung` >= 0, a step whose
// all_reduce that rank never reaches (the others sit in it kHangNs). Returns the time the
// others arrive at the hung collective.
std::int64_t runJob(test::SyntheticJob& job, int steps, int hung)
{
    const int n = job.worldSize();
    for (int s = 0; s < steps; ++s)
        job.step(test::uniform(n, kComputeNs), {"all_reduce"});
    const std::int64_t arrive = job.nowNs() + kComputeNs;
    if (hung >= 0) job.step(test::uniform(n, kComputeNs), {"all_reduce"}, 200'000, {hung}, kHangNs);
    return arrive;
}

Finding finding(const char* id, FindingKind kind, std::vector<int> ranks, std::int64_t startNs,
                std::int64_t endNs)
{
    Finding f;
    f.id = id;
    f.kind = kind;
    f.severity = Severity::Error;
    f.ranks = std::move(ranks);
    f.startNs = startNs;
    f.endNs = endNs;
    return f;
}

// The latest event end of `rank`'s lanes in the store (-1 when it has none).
std::int64_t lastEndOf(const EventStore& store, int rank)
{
    std::int64_t end = -1;
    for (const Lane& lane : store.lanes)
        if (lane.rank == rank)
            for (std::size_t i = 0; i < lane.size(); ++i)
                end = std::max(end, lane.endNs[i]);
    return end;
}

void sendMouse(QWidget* w, QEvent::Type type, QPoint pos, Qt::MouseButtons buttons,
               Qt::KeyboardModifiers modifiers = Qt::NoModifier)
{
    const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
    QMouseEvent e(type, QPointF(pos), w->mapToGlobal(QPointF(pos)), button, buttons, modifiers);
    QApplication::sendEvent(w, &e);
}

void click(QWidget* w, QPoint pos, Qt::KeyboardModifiers modifiers = Qt::NoModifier)
{
    sendMouse(w, QEvent::MouseButtonPress, pos, Qt::LeftButton, modifiers);
    sendMouse(w, QEvent::MouseButtonRelease, pos, Qt::NoButton, modifiers);
}

// The Timeline tab at 1280 x 800 showing `session`, once the overview's activity is in.
bool showAt1280x800(TimelinePanel& panel, const SessionPtr& session)
{
    panel.resize(1280, 800);
    QSignalSpy ready(panel.rankOverview(), &RankOverview::activityReady);
    panel.setSession(session);
    panel.show();
    if (!QTest::qWaitForWindowExposed(&panel) || !(!ready.isEmpty() || ready.wait(30000)))
        return false;
    QApplication::processEvents();
    return true;
}

// The ranks whose lanes the view lays out, from the store's lanes (a lane is laid out when it
// has a y), sorted.
QList<int> ranksWithLanes(const TimelineView& view)
{
    QList<int> ranks;
    const std::vector<Lane>& lanes = view.session()->events.lanes;
    for (std::size_t l = 0; l < lanes.size(); ++l)
        if (view.yForLane(int(l)) >= 0 && !ranks.contains(lanes[l].rank)) ranks << lanes[l].rank;
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

// x of display time `t` in the overview: the view's track mapping, shifted to the overview.
int xOf(const RankOverviewCanvas& canvas, const TimelineView& view, std::int64_t t)
{
    const ZoomState& z = view.zoom();
    return canvas.trackLeft() +
           int(double(t - z.visibleStartNs()) * z.widthPx() / double(z.visibleSpanNs()));
}

} // namespace

class TestRankOverview : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void layoutRowsAndHitTesting_data();
    void layoutRowsAndHitTesting();
    void layoutFollowsTheOrder();
    void fittedHeightLeavesNoRowEmpty_data();
    void fittedHeightLeavesNoRowEmpty();
    void rowsTileWithoutGapOrOverlap();
    void crashedRankDrawnOnceTheDiagnosisArrives();
    void hungRankStandsOut_data();
    void hungRankStandsOut();
    void eightRanksAt1280x800();
    void laterFindingsBarLeavesTheLabelBeforeIt();
    void brushingRanksFiltersTheLanes();
    void mixedJobsEachOnItsOwnTimeScale();
    void thousandRanksAt1280x800();
    void stragglerAndHungRankAtFirstPaint();
    void findLooksInTheShownJobOnly();
    void findLooksInTheBrushedRanksOnly();
};

void TestRankOverview::layoutRowsAndHitTesting_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("rowHeight");
    QTest::addColumn<int>("perRow");
    QTest::addRow("8 ranks, room for 12 px") << 8 << kStrip + 100 << 12 << 1;
    QTest::addRow("8 ranks, 18 px at most") << 8 << kStrip + 400 << 18 << 1;
    QTest::addRow("8 ranks, 20 px") << 8 << kStrip + 20 << 2 << 1;
    QTest::addRow("1024 ranks, 1 px each") << 1024 << kStrip + 1024 << 1 << 1;
    QTest::addRow("1024 ranks in 256 px") << 1024 << kStrip + 256 << 1 << 4;
    QTest::addRow("1024 ranks in 300 px") << 1024 << kStrip + 300 << 1 << 4;
}

void TestRankOverview::layoutRowsAndHitTesting()
{
    QFETCH(int, ranks);
    QFETCH(int, height);
    QFETCH(int, rowHeight);
    QFETCH(int, perRow);
    std::vector<int> order(static_cast<std::size_t>(ranks));
    std::iota(order.begin(), order.end(), 0);
    RankOverviewLayout layout;
    layout.setRanks(order);
    layout.setHeight(height);
    QCOMPARE(layout.rowHeight(), rowHeight);
    QCOMPARE(layout.ranksPerRow(), perRow);
    QVERIFY(layout.rowsBottom() <= height);
    QCOMPARE(layout.rowCount(), (ranks + perRow - 1) / perRow);
    for (int r = 0; r < ranks; ++r) {
        const int top = kStrip + (r / perRow) * rowHeight;
        QCOMPARE(layout.yForRank(r), top + rowHeight / 2);
        QCOMPARE(layout.rankAt(top), r / perRow * perRow);
        QCOMPARE(layout.rankAt(top + rowHeight - 1), r / perRow * perRow);
    }
    // The preferred height for this many ranks within `height` lays out the same rows, with
    // nothing left under them.
    RankOverviewLayout fitted;
    fitted.setRanks(order);
    fitted.setHeight(RankOverviewLayout::preferredHeight(ranks, height));
    QCOMPARE(fitted.rowHeight(), rowHeight);
    QCOMPARE(fitted.ranksPerRow(), perRow);
    QCOMPARE(fitted.rowsBottom(), RankOverviewLayout::preferredHeight(ranks, height));
    QCOMPARE(layout.rankAt(kStrip - 1), -1);
    QCOMPARE(layout.rankAt(kStrip + layout.rowCount() * rowHeight), -1);
    QCOMPARE(layout.yForRank(ranks), -1);
}

void TestRankOverview::layoutFollowsTheOrder()
{
    RankOverviewLayout layout;
    layout.setRanks({5, 0, 7, 1});
    layout.setHeight(kStrip + 32);
    QCOMPARE(layout.rankAt(kStrip), 5);
    QCOMPARE(layout.rankAt(kStrip + 8 * 2), 7);
    QCOMPARE(layout.yForRank(1), kStrip + 3 * 8 + 4);
    QCOMPARE(layout.ranksInRows(2, 1), (std::vector<int>{0, 7}));
    QCOMPARE(layout.ranksInRows(-5, 0), (std::vector<int>{5}));
    QCOMPARE(layout.ranksInRows(3, 99), (std::vector<int>{1}));
    ZoomState zoom;
    zoom.setTraceRange(1000, 2000);
    zoom.setWidthPx(100);
    layout.setTrackLeft(50);
    QCOMPARE(layout.xForTime(zoom, 1500), 100);
    QCOMPARE(layout.timeForX(zoom, 100), std::int64_t(1500));
}

void TestRankOverview::fittedHeightLeavesNoRowEmpty_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<int>("maxPx");
    QTest::addColumn<QList<int>>("marked");
    QTest::addRow("1024 ranks in 256 px, two marked") << 1024 << kStrip + 256 << QList{300, 700};
    QTest::addRow("1024 ranks in 308 px, one marked") << 1024 << kStrip + 308 << QList{700};
    QTest::addRow("1024 ranks in 100 px, two marked") << 1024 << kStrip + 100 << QList{0, 1023};
    QTest::addRow("200 ranks in 300 px, three marked") << 200 << kStrip + 300 << QList{5, 6, 150};
    QTest::addRow("8 ranks, none marked") << 8 << kStrip + 100 << QList<int>{};
}

// The height the overview is given for its ranks and the findings' emphasised ranks: the rows,
// laid out at that height, end at its bottom (no empty pixel row under them), every rank has a
// row, each marked rank one of its own at least kMinEmphasisHeight tall where rows are thin.
void TestRankOverview::fittedHeightLeavesNoRowEmpty()
{
    QFETCH(int, ranks);
    QFETCH(int, maxPx);
    QFETCH(QList<int>, marked);
    std::vector<int> order(static_cast<std::size_t>(ranks));
    std::iota(order.begin(), order.end(), 0);
    RankOverviewLayout layout;
    layout.setRanks(order);
    layout.setEmphasised({marked.begin(), marked.end()});
    const int fitted = layout.fittedHeight(maxPx);
    QVERIFY(fitted <= maxPx);
    layout.setHeight(fitted);
    QCOMPARE(layout.rowsBottom(), fitted);
    QCOMPARE(layout.rankAt(fitted - 1), layout.ranksOfRow(layout.rowCount() - 1).first);
    int covered = 0;
    for (int row = 0; row < layout.rowCount(); ++row)
        covered += layout.ranksOfRow(row).second;
    QCOMPARE(covered, ranks);
    for (int r : marked) {
        const int row = layout.rowOfRank(r);
        QCOMPARE(layout.ranksOfRow(row).second, 1);
        QVERIFY(layout.rowHeight(row) >= RankOverviewLayout::kMinEmphasisHeight);
    }
}

// For many rank counts, heights and emphasised sets: the rows start under the marks strip and each
// begins where the one above ends (no pixel row between them, none shared), they hold every rank
// once in order, end within the height, and y maps back to the row holding it. Their states fill
// them whole except in uniform rows at least kGapMinRowHeight tall, which keep a 1-px gap; never
// in a fisheye, where a gap under the emphasised rows alone read as a white line across them.
void TestRankOverview::rowsTileWithoutGapOrOverlap()
{
    for (const int ranks : {1, 2, 3, 7, 8, 31, 100, 255, 256, 257, 700, 1000, 1024, 4096})
        for (int height = kStrip + 1; height <= kStrip + 1100; height += height < 200 ? 7 : 61)
            for (const std::vector<int>& marked : std::vector<std::vector<int>>{
                     {}, {ranks / 2}, {0, ranks - 1}, {1, ranks / 3, (2 * ranks) / 3}}) {
                std::vector<int> order(static_cast<std::size_t>(ranks));
                std::iota(order.begin(), order.end(), 0);
                RankOverviewLayout layout;
                layout.setRanks(order);
                layout.setEmphasised(marked);
                layout.setHeight(height);
                const QByteArray where = QByteArray::number(ranks) + " ranks in " +
                                         QByteArray::number(height) + " px, " +
                                         QByteArray::number(qsizetype(marked.size())) + " marked";
                bool anyEmphasised = false;
                int next = 0;
                for (int row = 0; row < layout.rowCount(); ++row) {
                    QVERIFY2(layout.rowHeight(row) >= 1, where);
                    QVERIFY2(layout.rowTop(row + 1) == layout.rowTop(row) + layout.rowHeight(row),
                             where);
                    const auto [first, count] = layout.ranksOfRow(row);
                    QVERIFY2(first == next && count >= 1, where);
                    next = first + count;
                    anyEmphasised = anyEmphasised || layout.isEmphasised(row);
                }
                QVERIFY2(next == ranks, where);
                QVERIFY2(layout.rowTop(0) == kStrip && layout.rowsBottom() <= height, where);
                for (int row = 0; row < layout.rowCount(); ++row) {
                    const bool gapped = !anyEmphasised && layout.rowHeight(row) >=
                                                              RankOverviewLayout::kGapMinRowHeight;
                    QVERIFY2(layout.rowFillHeight(row) == layout.rowHeight(row) - (gapped ? 1 : 0),
                             where);
                    for (int y = layout.rowTop(row); y < layout.rowTop(row + 1); ++y)
                        QVERIFY2(layout.rowAt(y) == row, where);
                }
                QVERIFY2(layout.rowAt(kStrip - 1) == -1 && layout.rowAt(layout.rowsBottom()) == -1,
                         where);
                for (int r = 0; r < ranks; r += std::max(1, ranks / 50)) {
                    const int row = layout.rowOfRank(r);
                    QVERIFY2(layout.rowAt(layout.yForRank(r)) == row, where);
                }
            }
}

// 8 ranks, rank 5 hung: the others' traces end while it runs on. A finding says rank 2
// crashed: its row after its last event is "stopped" until the diagnosis is handed over, then
// "crashed"; rank 1's stays "stopped". The overview draws what it was handed, not what the
// session's own findings say (it does not scan them while painting).
void TestRankOverview::crashedRankDrawnOnceTheDiagnosisArrives()
{
    constexpr int kRanks = 8, kHung = 5, kCrashed = 2, kOther = 1;
    test::SyntheticJob job(kRanks, true, true);
    runJob(job, 3, kHung);
    auto read = std::const_pointer_cast<TraceSession>(sessionOf(job));
    const std::int64_t jobEnd = lastEndOf(read->events, kHung);
    const std::int64_t stopped = lastEndOf(read->events, kCrashed);
    QVERIFY(lastEndOf(read->events, kOther) == stopped && stopped < jobEnd);
    // The session's own findings already name the crash: never handed over, they are not drawn.
    read->analysis.findings.push_back(finding("F9", FindingKind::Crash, {kCrashed}, -1, -1));
    const SessionPtr session = read;

    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    RankOverviewCanvas* canvas = panel.rankOverview()->canvas();
    const RankOverviewLayout& layout = canvas->layout();
    const int x = xOf(*canvas, *panel.view(), stopped + (jobEnd - stopped) / 2);
    QImage image = canvas->grab().toImage();
    QCOMPARE(image.pixelColor(x, layout.yForRank(kCrashed)), stateColor(RankState::Stopped));
    QCOMPARE(image.pixelColor(x, layout.yForRank(kOther)), stateColor(RankState::Stopped));

    AnalysisResult diagnosis;
    diagnosis.findings.push_back(finding("F1", FindingKind::Crash, {kCrashed}, -1, -1));
    panel.setDiagnosis(diagnosis);
    QApplication::processEvents();
    image = canvas->grab().toImage();
    image.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_crashed.png"));
    QCOMPARE(image.pixelColor(x, layout.yForRank(kCrashed)), stateColor(RankState::Crashed));
    QCOMPARE(image.pixelColor(x, layout.yForRank(kOther)), stateColor(RankState::Stopped));
    QCOMPARE(canvas->stateAt(kCrashed, x), RankState::Crashed);
}

void TestRankOverview::hungRankStandsOut_data()
{
    QTest::addColumn<int>("canvasHeight");
    QTest::addColumn<int>("perRow");
    QTest::addRow("1 px a rank") << kStrip + 1024 << 1;
    QTest::addRow("4 ranks a pixel row") << kStrip + 256 << 4;
}

// 1,024 ranks; rank 700 never reaches the last all_reduce. In the middle of the hang every row
// is "waiting" but the hung rank's, which runs its own code (its step span is open, its GPU
// idle); after the others' traces end, they are "stopped" and the hung rank still in host code
// (its step goes on 4 s more).
void TestRankOverview::hungRankStandsOut()
{
    QFETCH(int, canvasHeight);
    QFETCH(int, perRow);
    constexpr int kRanks = 1024, kHung = 700;
    test::SyntheticJob job(kRanks, true, true);
    job.setMembersInRecords(false);
    const std::int64_t arrive = runJob(job, 3, kHung);
    const SessionPtr session = sessionOf(job);

    QWidget window;
    auto* box = new QVBoxLayout(&window);
    box->setContentsMargins(0, 0, 0, 0);
    auto* view = new TimelineView;
    auto* overview = new RankOverview(view);
    overview->canvas()->setFixedHeight(canvasHeight);
    box->addWidget(overview);
    box->addWidget(view, 1);
    window.resize(1400, canvasHeight + 400);
    QSignalSpy ready(overview, &RankOverview::activityReady);
    view->setSession(session);
    overview->setSession(session);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(!ready.isEmpty() || ready.wait(60000));
    RankOverviewCanvas* canvas = overview->canvas();
    QCOMPARE(canvas->layout().ranksPerRow(), perRow);
    const QImage image = canvas->grab().toImage();
    image.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_hang_%1.png").arg(perRow));

    const auto rowsNotIn = [&](int x, QColor expected) {
        QList<int> rows;
        for (int row = 0; row < kRanks / perRow; ++row)
            if (image.pixelColor(x, kStrip + row) != expected) rows << row;
        return rows;
    };
    const int hungRow = kHung / perRow;
    const int during = xOf(*canvas, *view, arrive + kHangNs / 2);
    QCOMPARE(rowsNotIn(during, stateColor(RankState::Waiting)), QList<int>{hungRow});
    QCOMPARE(image.pixelColor(during, kStrip + hungRow), stateColor(RankState::HostBusy));
    const int after = xOf(*canvas, *view, arrive + kHangNs + 2'000'000'000);
    QCOMPARE(rowsNotIn(after, stateColor(RankState::Stopped)), QList<int>{hungRow});
    QCOMPARE(image.pixelColor(after, kStrip + hungRow), stateColor(RankState::HostBusy));
}

// The Timeline tab at 1280 x 800 with 8 ranks, rank 5 late at every collective: every rank has
// a full-height row; sorting by lateness puts rank 5 first; a drag zooms the view; a selected
// collective shows each rank's arrival.
void TestRankOverview::eightRanksAt1280x800()
{
    constexpr int kRanks = 8, kLate = 5;
    constexpr std::int64_t kDelayNs = 400'000;
    test::SyntheticJob job(kRanks, true, true);
    job.setArrivalDelay(kLate, kDelayNs);
    const std::int64_t start = job.nowNs();
    runJob(job, 6, -1);
    const SessionPtr session = sessionOf(job);

    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    RankOverview* overview = panel.rankOverview();
    RankOverviewCanvas* canvas = overview->canvas();
    TimelineView* view = panel.view();
    const RankOverviewLayout& layout = canvas->layout();
    QVERIFY(canvas->isVisible());
    QCOMPARE(layout.ranksPerRow(), 1);
    QCOMPARE(layout.rowHeight(), RankOverviewLayout::kMaxRowHeight);
    QVERIFY(layout.rowsBottom() <= canvas->height());
    QImage image = canvas->grab().toImage();
    panel.grab().save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_8ranks_1280x800.png"));
    // Halfway through the first step's compute, every rank computes.
    const int x = xOf(*canvas, *view, start + kComputeNs / 2);
    for (int r = 0; r < kRanks; ++r)
        QCOMPARE(image.pixelColor(x, layout.yForRank(r)), stateColor(RankState::Computing));

    overview->setOrder(RankOverview::Order::Lateness);
    QCOMPARE(layout.ranks().front(), kLate);
    QCOMPARE(overview->orderBox()->currentIndex(), 1);
    overview->orderBox()->setCurrentIndex(0);
    QCOMPARE(layout.ranks().front(), 0);

    // A drag from x to x + 200 shows that time range in the view.
    const std::int64_t t1 = layout.timeForX(view->zoom(), x);
    const std::int64_t t2 = layout.timeForX(view->zoom(), x + 200);
    sendMouse(canvas, QEvent::MouseButtonPress, {x, kStrip + 2}, Qt::LeftButton);
    sendMouse(canvas, QEvent::MouseMove, {x + 100, kStrip + 20}, Qt::LeftButton);
    sendMouse(canvas, QEvent::MouseButtonRelease, {x + 200, kStrip + 20}, Qt::NoButton);
    QCOMPARE(view->zoom().visibleStartNs(), t1);
    QCOMPARE(view->zoom().visibleEndNs(), t2);

    // The first all_reduce selected on rank 0: a tick at each rank's arrival, where it entered
    // the call (the builder issues it 30 us before it runs), rank 5's kDelayNs after the
    // others (every rank computes kComputeNs first).
    constexpr std::int64_t kIssueLeadNs = 30'000;
    const CollectiveRecord& c0 = session->events.collectives.front();
    QCOMPARE(c0.rank, 0);
    view->setVisibleRange(start + kComputeNs - 200'000, start + kComputeNs + 800'000);
    view->select({c0.laneIndex, c0.eventIndex});
    QCOMPARE(view->selectedCollectivePeers().size(), std::size_t(kRanks));
    QApplication::processEvents();
    image = canvas->grab().toImage();
    image.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_wavefront.png"));
    for (int r = 0; r < kRanks; ++r) {
        const std::int64_t arrival =
            start + kComputeNs - kIssueLeadNs + (r == kLate ? kDelayNs : 0);
        QCOMPARE(image.pixelColor(xOf(*canvas, *view, arrival), layout.yForRank(r)),
                 timelinecolors::kArrivalSkew);
    }

    // A finding labelled in the strip where the skew's badge would go, just after the last
    // arrival: the badge goes beside the label, not over it.
    const std::int64_t lastArrival = start + kComputeNs - kIssueLeadNs + kDelayNs;
    const std::int64_t markStartNs = lastArrival - 100'000;
    const QString label = QStringLiteral("F1 hang");
    view->setMarkers({{markStartNs, lastArrival + 600'000, {}, QColor(200, 30, 30), label}});
    canvas->invalidate();
    QApplication::processEvents();
    image = canvas->grab().toImage();
    QFont small = canvas->font();
    small.setPixelSize(9); // the strip's labels' font
    const int labelFrom = xOf(*canvas, *view, markStartNs) + 2;
    const int labelTo = labelFrom + QFontMetrics(small).horizontalAdvance(label);
    // The badge's columns: its fill is the only skew colour on the strip's top pixel row.
    int badgeFrom = -1, badgeTo = -1;
    for (int px = 0; px < image.width(); ++px)
        if (image.pixelColor(px, 0) == timelinecolors::kArrivalSkew) {
            if (badgeFrom < 0) badgeFrom = px;
            badgeTo = px;
        }
    QVERIFY2(badgeFrom >= 0, "no skew badge in the strip");
    QVERIFY2(badgeTo < labelFrom || badgeFrom >= labelTo,
             qPrintable(QStringLiteral("badge %1-%2, label %3-%4")
                            .arg(badgeFrom)
                            .arg(badgeTo)
                            .arg(labelFrom)
                            .arg(labelTo)));
}

// hook_exception_w6 at 1280x800: rank 4's crash (F1, an instant) and its hang (F2, from the same
// time to the end) share the strip. F1 comes first and keeps its label; F2's bar, drawn after
// it, once covered that label, so the strip named neither.
void TestRankOverview::laterFindingsBarLeavesTheLabelBeforeIt()
{
    test::SyntheticJob job(4, true, true);
    const std::int64_t start = job.nowNs();
    runJob(job, 6, -1);
    const SessionPtr session = sessionOf(job);
    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    RankOverviewCanvas* canvas = panel.rankOverview()->canvas();
    TimelineView* view = panel.view();
    const std::int64_t atNs = start + (job.nowNs() - start) / 3;
    const QColor crash(200, 30, 30), hang(240, 170, 40);
    const QString label = QStringLiteral("F1 crash");
    view->setMarkers(
        {{atNs, atNs, {2}, crash, label, QStringLiteral("F1")},
         {atNs, job.nowNs(), {2}, hang, QStringLiteral("F2 hang"), QStringLiteral("F2")}});
    canvas->invalidate();
    QApplication::processEvents();
    const QImage image = canvas->grab().toImage();
    image.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_crash_and_hang.png"));
    QFont small = canvas->font();
    small.setPixelSize(9); // the strip's labels' font
    const int labelFrom = xOf(*canvas, *view, atNs) + 2;
    const int labelTo = labelFrom + QFontMetrics(small).horizontalAdvance(label);
    // Where F1's text is, the strip is not all bars: the text is drawn, in neither bar's colour.
    const auto near = [](const QColor& a, const QColor& b) {
        return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) +
                   std::abs(a.blue() - b.blue()) <
               60;
    };
    int text = 0;
    for (int y = 1; y < kStrip - 1; ++y)
        for (int x = labelFrom; x < labelTo; ++x)
            text +=
                near(image.pixelColor(x, y), hang) || near(image.pixelColor(x, y), crash) ? 0 : 1;
    QVERIFY2(text >= 10, qPrintable(QString::number(text)));
}

// Ranks brushed on the overview are exactly the ranks whose lanes the detail view lays out:
// a click, Shift+click, Ctrl+click, a drag down the rank numbers, and Esc to show all again.
void TestRankOverview::brushingRanksFiltersTheLanes()
{
    constexpr int kRanks = 8;
    test::SyntheticJob job(kRanks, true, true);
    runJob(job, 3, -1);
    const SessionPtr session = sessionOf(job);
    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    RankOverview* overview = panel.rankOverview();
    RankOverviewCanvas* canvas = overview->canvas();
    TimelineView* view = panel.view();
    const RankOverviewLayout& layout = canvas->layout();
    const QList<int> all{0, 1, 2, 3, 4, 5, 6, 7};
    QCOMPARE(ranksWithLanes(*view), all);
    const int x = layout.trackLeft() + 100;

    click(canvas, {x, layout.yForRank(3)});
    QCOMPARE(ranksWithLanes(*view), QList<int>{3});
    QVERIFY(overview->showAllButton()->isVisible());
    click(canvas, {x, layout.yForRank(6)}, Qt::ShiftModifier);
    QCOMPARE(ranksWithLanes(*view), (QList<int>{3, 4, 5, 6}));
    click(canvas, {x, layout.yForRank(4)}, Qt::ControlModifier);
    QCOMPARE(ranksWithLanes(*view), (QList<int>{3, 5, 6}));
    click(canvas, {x, layout.yForRank(0)}, Qt::ControlModifier);
    QCOMPARE(ranksWithLanes(*view), (QList<int>{0, 3, 5, 6}));
    QApplication::processEvents(); // the header's button laid out
    panel.grab().save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_brushed.png"));

    // A drag down the rank numbers from rank 1 to rank 2; the view's time range stays.
    const std::int64_t start = view->zoom().visibleStartNs(), end = view->zoom().visibleEndNs();
    const int numbers = layout.trackLeft() / 2;
    sendMouse(canvas, QEvent::MouseButtonPress, {numbers, layout.yForRank(1)}, Qt::LeftButton);
    sendMouse(canvas, QEvent::MouseMove, {numbers, layout.yForRank(2)}, Qt::LeftButton);
    sendMouse(canvas, QEvent::MouseButtonRelease, {numbers, layout.yForRank(2)}, Qt::NoButton);
    QCOMPARE(ranksWithLanes(*view), (QList<int>{1, 2}));
    QCOMPARE(view->zoom().visibleStartNs(), start);
    QCOMPARE(view->zoom().visibleEndNs(), end);

    // Sorted by lateness, the brush keeps its ranks.
    overview->setOrder(RankOverview::Order::Lateness);
    QCOMPARE(ranksWithLanes(*view), (QList<int>{1, 2}));
    overview->setOrder(RankOverview::Order::Rank);

    canvas->setFocus();
    QTest::keyClick(canvas, Qt::Key_Escape);
    QCOMPARE(ranksWithLanes(*view), all);
    QVERIFY(!overview->showAllButton()->isVisible());
    click(canvas, {x, layout.yForRank(2)});
    QCOMPARE(ranksWithLanes(*view), QList<int>{2});
    overview->showAllButton()->click();
    QCOMPARE(ranksWithLanes(*view), all);
}

// tests/data/mixed_jobs: two files of a 128-rank job (ranks 0, 1) and one of a 2-rank job
// (rank 0) a year later. Truth from the raw JSON: each file's world size, rank and first and
// last microsecond (of any event with a time). Each job shown alone spans its own files' time
// (seconds, not a year), its ranks are the overview's rows and its files' lanes the only ones laid
// out; every job at once is a row per job and rank (rank 0 twice).
void TestRankOverview::mixedJobsEachOnItsOwnTimeScale()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/mixed_jobs");
    struct RawFile {
        int world = 0, rank = -1;
        double firstNs = 0, lastNs = 0; // epoch ns
    };
    std::map<QString, RawFile> raw;
    std::map<int, std::pair<double, double>> spanOfWorld; // world size -> [first, last]
    std::map<int, QList<int>> ranksOfWorld;
    for (const QString& name : QDir(dir).entryList({QStringLiteral("*.json.gz")})) {
        const auto doc = nlohmann::json::parse(inflate(dir + QLatin1Char('/') + name));
        RawFile f;
        f.world = doc.at("distributedInfo").at("world_size").get<int>();
        f.rank = doc.at("distributedInfo").at("rank").get<int>();
        const double base = doc.value("baseTimeNanoseconds", 0.0);
        f.firstNs = std::numeric_limits<double>::max();
        for (const auto& e : doc.at("traceEvents"))
            if (e.contains("ts") && e["ts"].is_number()) { // instants and flows too
                const double ts = e["ts"].get<double>() * 1000 + base;
                f.firstNs = std::min(f.firstNs, ts);
                f.lastNs = std::max(f.lastNs, ts + e.value("dur", 0.0) * 1000);
            }
        raw[name] = f;
        auto [it, fresh] = spanOfWorld.try_emplace(f.world, f.firstNs, f.lastNs);
        it->second = {std::min(it->second.first, f.firstNs), std::max(it->second.second, f.lastNs)};
        ranksOfWorld[f.world] << f.rank;
    }
    QCOMPARE(spanOfWorld.size(), std::size_t(2)); // two jobs
    for (auto& [world, ranks] : ranksOfWorld)
        std::sort(ranks.begin(), ranks.end());

    const SessionPtr session = readSession(dir);
    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    TimelineView* view = panel.view();
    RankOverviewCanvas* canvas = panel.rankOverview()->canvas();
    QComboBox* jobs = panel.jobBox();
    QVERIFY(jobs->isVisible());
    QCOMPARE(jobs->count(), 3); // every job, job 1, job 2
    // Job j + 1 of the box: which raw job it is, by its world size in the item's text.
    const auto worldOfItem = [&](int item) {
        for (const auto& [world, span] : spanOfWorld)
            if (jobs->itemText(item).contains(QStringLiteral(" of %1").arg(world))) return world;
        return -1;
    };
    // The analysed job (the most ranks) is shown first.
    QCOMPARE(worldOfItem(jobs->currentIndex()), 128);
    for (int item = 1; item <= 2; ++item) {
        jobs->setCurrentIndex(item);
        QApplication::processEvents();
        const int world = worldOfItem(item);
        QVERIFY(world > 0);
        const auto [first, last] = spanOfWorld[world];
        // The whole trace is the job's own span (to a microsecond), seconds where both jobs
        // together are a year.
        const double span = double(view->zoom().traceEndNs() - view->zoom().traceStartNs());
        QVERIFY2(std::abs(span - (last - first)) <= 1000,
                 qPrintable(QStringLiteral("%1 vs %2").arg(span).arg(last - first)));
        QCOMPARE(view->zoom().visibleSpanNs(),
                 view->zoom().traceEndNs() - view->zoom().traceStartNs());
        QList<int> rows;
        for (int key : canvas->layout().ranks())
            rows << LaneJobs::rankOfKey(key);
        QCOMPARE(rows, ranksOfWorld[world]);
        // Only its files' lanes are laid out.
        const std::vector<Lane>& lanes = session->events.lanes;
        int shown = 0;
        for (std::size_t l = 0; l < lanes.size(); ++l) {
            const QString file =
                session->folder.sources()[lanes[l].sourceIndex].relativePath.section(
                    QLatin1Char('/'), -1);
            const bool mine = raw.count(file) && raw[file].world == world;
            QCOMPARE(view->yForLane(int(l)) >= 0 || view->layout().firstRowOfLane(int(l)) >= 0,
                     mine);
            shown += mine;
        }
        QVERIFY(shown > 0);
        panel.grab().save(
            QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_mixed_job%1.png").arg(item));
    }
    // Every job on one axis: a row per job and rank, rank 0 twice, over more than 300 days.
    jobs->setCurrentIndex(0);
    QApplication::processEvents();
    QVERIFY(view->zoom().traceEndNs() - view->zoom().traceStartNs() > 300 * 86'400'000'000'000);
    QList<int> rows;
    for (int key : canvas->layout().ranks())
        rows << LaneJobs::rankOfKey(key);
    std::sort(rows.begin(), rows.end());
    QCOMPARE(rows, (QList<int>{0, 0, 1}));
}

// 1,024 ranks on the Timeline tab at 1280 x 800, where the overview has about a hundred pixel
// rows: rank 300 reaches every all_reduce 400 ms late, rank 700 never reaches the last. Once the
// diagnosis arrives with findings on those ranks, their rows are emphasised (at least
// kMinEmphasisHeight), the overview is sized again so that no pixel row is left empty under the
// rows, and the column in the middle of the hang is "waiting" everywhere but in the hung rank's
// row (its own code), the column in the middle of the straggler's delay "waiting" everywhere but
// in the straggler's row.
void TestRankOverview::thousandRanksAt1280x800()
{
    constexpr int kRanks = 1024, kLate = 300, kHung = 700;
    constexpr std::int64_t kStepNs = 1'000'000'000, kDelayNs = 400'000'000;
    test::SyntheticJob job(kRanks, true, true);
    job.setMembersInRecords(false);
    job.setArrivalDelay(kLate, kDelayNs);
    const std::int64_t start = job.nowNs();
    for (int s = 0; s < 4; ++s)
        job.step(test::uniform(kRanks, kStepNs), {"all_reduce"});
    const std::int64_t hangStep = job.nowNs();
    job.step(test::uniform(kRanks, kStepNs), {"all_reduce"}, 200'000, {kHung}, kHangNs);
    const SessionPtr session = sessionOf(job);

    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    AnalysisResult diagnosis;
    diagnosis.findings = {
        finding("F1", FindingKind::Hang, {kHung}, hangStep, hangStep + kStepNs + kHangNs),
        finding("F2", FindingKind::Straggler, {kLate}, start, hangStep)};
    panel.setDiagnosis(diagnosis);
    QApplication::processEvents();
    RankOverviewCanvas* canvas = panel.rankOverview()->canvas();
    TimelineView* view = panel.view();
    QCOMPARE(view->markers().size(), 2);
    const QImage image = canvas->grab().toImage();
    panel.grab().save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_1024_1280x800.png"));
    const RankOverviewLayout& layout = canvas->layout();
    QVERIFY(layout.ranksPerRow() > 1); // the other ranks share pixel rows
    QCOMPARE(layout.rowsBottom(), canvas->height());
    const auto rowSpan = [&](int rank) {
        const int row = layout.rowOfRank(rank);
        return std::pair(layout.rowTop(row), layout.rowTop(row) + layout.rowHeight(row));
    };
    for (int rank : {kHung, kLate})
        QVERIFY(layout.rowHeight(layout.rowOfRank(rank)) >= RankOverviewLayout::kMinEmphasisHeight);
    // The pixel rows at `x` that are not "waiting": every pixel row of `rank`'s row, in
    // `state` (no gap line under the emphasised row), and no other.
    const auto onlyRowDiffers = [&](int x, int rank, RankState state) {
        const auto [top, bottom] = rowSpan(rank);
        int count = 0;
        for (int y = kStrip; y < layout.rowsBottom(); ++y) {
            const QColor c = image.pixelColor(x, y);
            if (c == stateColor(RankState::Waiting)) continue;
            if (y < top || y >= bottom || c != stateColor(state)) return false;
            ++count;
        }
        return count == bottom - top;
    };
    // The others arrive kStepNs into a step and wait for the straggler kDelayNs.
    QVERIFY(onlyRowDiffers(xOf(*canvas, *view, start + kStepNs + kDelayNs / 2), kLate,
                           RankState::HostBusy));
    const std::int64_t arrive = hangStep + kStepNs + kDelayNs;
    QVERIFY(onlyRowDiffers(xOf(*canvas, *view, arrive + kHangNs / 2), kHung, RankState::HostBusy));

    panel.resize(1920, 1080);
    QApplication::processEvents();
    panel.grab().save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_1024_1920x1080.png"));
}

// 1,024 ranks, 20 steps of 10 all_reduces; rank 300 reaches every one kDelayNs (3 ms) late, every
// arrival jittered by up to 0.2 ms; rank 700 never reaches the last all_reduce (the others wait
// 10 s). At first paint (no diagnosis: nothing emphasised, several ranks a pixel row) the
// straggler's lateness is under a pixel on its row, but the lateness gutter shows it: its pixel
// row is the one of the 1-10 ms step, every other row in the "under 0.1 ms" step (truth from the
// job's parameters: 3 ms +- 0.2 ms beyond the typical rank, the others within 0.2 ms). In the
// middle of the hang the one row that is not "waiting" is the hung rank's.
void TestRankOverview::stragglerAndHungRankAtFirstPaint()
{
    constexpr int kRanks = 1024, kLate = 300, kHung = 700;
    constexpr std::int64_t kDelayNs = 3'000'000, kJitterNs = 200'000;
    test::SyntheticJob job(kRanks, true, true);
    job.setMembersInRecords(false);
    job.setArrivalDelay(kLate, kDelayNs);
    job.setArrivalJitter(kJitterNs, 11);
    for (int s = 0; s < 20; ++s)
        job.step(test::uniform(kRanks, kComputeNs), std::vector<std::string>(10, "all_reduce"),
                 300'000);
    const std::int64_t hangStep = job.nowNs();
    job.step(test::uniform(kRanks, kComputeNs), {"all_reduce"}, 300'000, {kHung}, kHangNs);
    const SessionPtr session = sessionOf(job);

    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    RankOverviewCanvas* canvas = panel.rankOverview()->canvas();
    TimelineView* view = panel.view();
    const QImage image = canvas->grab().toImage();
    image.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/rankoverview_straggler_first_paint.png"));
    const RankOverviewLayout& layout = canvas->layout();
    QVERIFY(layout.emphasised().empty());
    QVERIFY(layout.ranksPerRow() > 1);
    // The premise: the straggler's delay is under a pixel of the whole trace.
    QVERIFY(double(kDelayNs) < view->zoom().nsPerPx());

    const int gutterX = layout.gutterLeft() + RankOverviewLayout::kGutterWidth / 2;
    const QColor late = timelinecolors::latenessStepColor(2);   // 1-10 ms
    const QColor onTime = timelinecolors::latenessStepColor(0); // under 0.1 ms
    const int lateRow = layout.rowOfRank(kLate);
    QList<int> lateRows, otherRows;
    for (int y = kStrip; y < layout.rowsBottom(); ++y) {
        const QColor c = image.pixelColor(gutterX, y);
        if (c == late)
            lateRows << layout.rowAt(y);
        else if (c != onTime)
            otherRows << layout.rowAt(y);
    }
    QCOMPARE(lateRows, QList<int>(layout.rowHeight(lateRow), lateRow));
    QCOMPARE(otherRows, QList<int>{});
    // A wedge in its colour points at the row from the numbers' side; the row's tooltip names
    // the straggler among the ranks sharing it.
    QCOMPARE(image.pixelColor(layout.gutterLeft() - 3, layout.yForRank(kLate)), late);
    const QPoint tipAt(gutterX, layout.yForRank(kLate));
    QHelpEvent tip(QEvent::ToolTip, tipAt, canvas->mapToGlobal(tipAt));
    QApplication::sendEvent(canvas, &tip);
    QVERIFY2(QToolTip::text().contains(QStringLiteral("The latest of them, rank %1,").arg(kLate)),
             qPrintable(QToolTip::text()));

    // In the middle of the hang: every pixel row waits but the hung rank's.
    const std::int64_t arrive = hangStep + kComputeNs;
    const int x = xOf(*canvas, *view, arrive + kHangNs / 2);
    QList<int> notWaiting;
    for (int y = kStrip; y < layout.rowsBottom(); ++y)
        if (image.pixelColor(x, y) != stateColor(RankState::Waiting)) notWaiting << layout.rowAt(y);
    const int hungRow = layout.rowOfRank(kHung);
    QCOMPARE(notWaiting, QList<int>(layout.rowHeight(hungRow), hungRow));
    QCOMPARE(image.pixelColor(x, layout.yForRank(kHung)), stateColor(RankState::HostBusy));
}

// tests/data/mixed_jobs with one job shown: find looks in that job's lanes only. Truth: every
// store event whose name holds the text, in the lanes of the files whose raw JSON states the
// job's world size. Each hit stepped to is on screen (in a laid-out lane, inside the view's time
// range); showing the other job finds that job's events.
void TestRankOverview::findLooksInTheShownJobOnly()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/mixed_jobs");
    std::map<QString, int> worldOfFile;
    for (const QString& name : QDir(dir).entryList({QStringLiteral("*.json.gz")}))
        worldOfFile[name] = nlohmann::json::parse(inflate(dir + QLatin1Char('/') + name))
                                .at("distributedInfo")
                                .at("world_size")
                                .get<int>();
    const SessionPtr session = readSession(dir);
    const std::vector<Lane>& lanes = session->events.lanes;
    const auto worldOfLane = [&](std::size_t l) {
        const QString file = session->folder.sources()[lanes[l].sourceIndex].relativePath.section(
            QLatin1Char('/'), -1);
        return worldOfFile.count(file) ? worldOfFile[file] : -1;
    };
    const QString text = QStringLiteral("cudalaunchkernel");
    std::map<int, std::set<std::pair<int, std::int64_t>>> expected; // world -> (lane, event)
    for (std::size_t l = 0; l < lanes.size(); ++l)
        for (std::size_t i = 0; i < lanes[l].size(); ++i) {
            const std::string_view name = session->events.strings.view(lanes[l].nameId[i]);
            if (QString::fromUtf8(name.data(), qsizetype(name.size()))
                    .contains(text, Qt::CaseInsensitive))
                expected[worldOfLane(l)].insert({int(l), std::int64_t(i)});
        }
    QVERIFY(!expected[128].empty() && !expected[2].empty());

    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    TimelineView* view = panel.view();
    QComboBox* jobs = panel.jobBox();
    for (int item = 1; item <= 2; ++item) {
        jobs->setCurrentIndex(item);
        const int world = jobs->itemText(item).contains(QStringLiteral(" of 128")) ? 128 : 2;
        if (item == 1) {
            panel.showFindBar();
            panel.findEdit()->setText(text);
        }
        QTRY_VERIFY_WITH_TIMEOUT(!view->isFinding(), 30000);
        std::set<std::pair<int, std::int64_t>> found;
        for (const TimelineEventRef& hit : view->findHits())
            found.insert({hit.lane, hit.event});
        QCOMPARE(found, expected[world]);
        // The status says where find looked.
        const QString where = QStringLiteral(" in job %1 ").arg(item);
        bool said = false;
        for (const QLabel* label : panel.findChildren<QLabel*>())
            said = said || label->text().contains(where);
        QVERIFY(said);
        // The first, second and last hits are on screen when stepped to.
        for (const bool next : {true, true, false, false}) {
            next ? view->findNext() : view->findPrevious();
            const TimelineEventRef ref = view->selected();
            QCOMPARE(worldOfLane(std::size_t(ref.lane)), world);
            QVERIFY(view->yForLane(ref.lane) >= 0 || view->layout().firstRowOfLane(ref.lane) >= 0);
            const Lane& lane = lanes[std::size_t(ref.lane)];
            const std::int64_t t =
                view->displayTimeNs(lane.rank, lane.startNs[std::size_t(ref.event)]);
            QVERIFY(t >= view->zoom().visibleStartNs() && t <= view->zoom().visibleEndNs());
        }
        QCOMPARE(view->currentFindHit(), view->findHitCount() - 1);
    }
}

// With ranks brushed on the overview, find offers hits in their lanes only: the hits equal a
// naive scan of the brushed ranks' lanes (event names holding the text in any case), searched
// again when the brush changes while find is open; every hit stepped to is in a laid-out lane of
// a brushed rank. The brush cleared, every rank's hits come back.
void TestRankOverview::findLooksInTheBrushedRanksOnly()
{
    constexpr int kRanks = 8;
    test::SyntheticJob job(kRanks, true, true);
    runJob(job, 3, -1);
    const SessionPtr session = sessionOf(job);
    const std::vector<Lane>& lanes = session->events.lanes;
    const QString text = QStringLiteral("MM"); // aten::mm and volta_sgemm
    using Hits = std::set<std::pair<int, std::int64_t>>;
    const auto naiveScan = [&](const QList<int>& ranks) {
        Hits hits;
        for (std::size_t l = 0; l < lanes.size(); ++l) {
            if (!ranks.isEmpty() && !ranks.contains(lanes[l].rank)) continue;
            for (std::size_t i = 0; i < lanes[l].size(); ++i) {
                const std::string_view name = session->events.strings.view(lanes[l].nameId[i]);
                if (QString::fromUtf8(name.data(), qsizetype(name.size()))
                        .contains(text, Qt::CaseInsensitive))
                    hits.insert({int(l), std::int64_t(i)});
            }
        }
        return hits;
    };

    TimelinePanel panel;
    QVERIFY(showAt1280x800(panel, session));
    RankOverviewCanvas* canvas = panel.rankOverview()->canvas();
    TimelineView* view = panel.view();
    const RankOverviewLayout& layout = canvas->layout();
    const auto found = [&] {
        Hits hits;
        for (const TimelineEventRef& hit : view->findHits())
            hits.insert({hit.lane, hit.event});
        return hits;
    };
    panel.showFindBar();
    panel.findEdit()->setText(text);
    QTRY_VERIFY_WITH_TIMEOUT(!view->isFinding(), 30000);
    const Hits all = naiveScan({});
    QCOMPARE(found(), all);

    const int x = layout.trackLeft() + 100;
    click(canvas, {x, layout.yForRank(3)});
    click(canvas, {x, layout.yForRank(6)}, Qt::ControlModifier);
    QCOMPARE(ranksWithLanes(*view), (QList<int>{3, 6}));
    // Before the new search delivers, the earlier hits stay, and find steps over the hidden
    // ranks' in both directions.
    QCOMPARE(found(), all);
    for (int i = 0; i < 2 * int(kRanks); ++i) {
        i % 2 ? view->findNext() : view->findPrevious();
        QVERIFY((QList<int>{3, 6}).contains(lanes[std::size_t(view->selected().lane)].rank));
    }
    QTRY_VERIFY_WITH_TIMEOUT(!view->isFinding(), 30000);
    const Hits brushed = naiveScan({3, 6});
    QVERIFY(!brushed.empty() && brushed.size() < all.size());
    QCOMPARE(found(), brushed);
    for (int i = 0; i < view->findHitCount(); ++i) {
        view->findNext();
        const TimelineEventRef ref = view->selected();
        QVERIFY((QList<int>{3, 6}).contains(lanes[std::size_t(ref.lane)].rank));
        QVERIFY(view->yForLane(ref.lane) >= 0 || view->layout().firstRowOfLane(ref.lane) >= 0);
    }
    bool said = false;
    for (const QLabel* label : panel.findChildren<QLabel*>())
        said = said || label->text().contains(QStringLiteral("ranks brushed on the overview (2)"));
    QVERIFY(said);

    canvas->setFocus();
    QTest::keyClick(canvas, Qt::Key_Escape);
    QTRY_VERIFY_WITH_TIMEOUT(!view->isFinding(), 30000);
    QCOMPARE(found(), all);
}

QTEST_MAIN(TestRankOverview)
#include "tst_rankoverview.moc"
