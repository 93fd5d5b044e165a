#include "model/analysis/collectivematcher.h"
#include "model/analysis/timebreakdown.h"
#include "tests/support/syntheticsession.h"
#include "views/charts/chartdata.h"
#include "views/charts/chartstyle.h"
#include "views/charts/collectivechart.h"
#include "views/charts/rankbreakdownchart.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QStackedBarSeries>
#include <QTabWidget>
#include <QTextBrowser>
#include <QValueAxis>
#include <QtTest>
#include <limits>
#include <map>

using namespace rankscope;

namespace {

// Four ranks, a GPU stream (kernels, memcpy, an all-reduce every 5th event (40 per rank)) and a CPU
// thread each, with the analysis' breakdown and collective matching run on it.
std::shared_ptr<TraceSession> analysedSession(int ranks = 4)
{
    synthetic::Spec spec;
    spec.ranks = ranks;
    spec.gpuLanesPerRank = 1;
    spec.cpuLanesPerRank = 1;
    spec.eventsPerLane = 200;
    spec.spanNs = 20'000'000;
    spec.collectiveEvery = 5;
    auto s = synthetic::makeSession(spec);
    s->analysis.breakdown = TimeBreakdown::compute(s->events);
    std::vector<int> world;
    for (int r = 0; r < ranks; ++r)
        world.push_back(r);
    s->analysis.groups = CollectiveMatcher::match(s->events, world);
    return s;
}

std::shared_ptr<TraceSession> cpuOnlySession()
{
    auto s = std::make_shared<TraceSession>();
    for (int r = 0; r < 2; ++r)
        s->events.lanes.push_back(
            synthetic::makeLane(s->events.strings, r, LaneKind::CpuThread, 100 + r, 1,
                                {{0, 400'000, "aten::mm", EventCategory::CpuOp},
                                 {600'000, 900'000, "c10d::allreduce_", EventCategory::CpuOp}}));
    synthetic::finish(s);
    s->analysis.breakdown = TimeBreakdown::compute(s->events);
    return s;
}

std::pair<std::int64_t, std::int64_t> enterExit(const CollectiveRecord& c)
{
    return {c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs,
            c.execEndNs >= 0 ? c.execEndNs : c.issueEndNs};
}

void clickAt(QChartView* view, QPoint pos)
{
    QVERIFY(!pos.isNull());
    QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, pos);
}

// The bar's colour in the chart as painted (8 bits a channel): one of its sets' colours, or
// their highlighted variants.
enum class BarLook { Plain, Highlighted, Neither };
BarLook barLook(QChartView* view, QAbstractBarSeries* series, QPoint centre)
{
    const QColor c = view->viewport()->grab().toImage().pixelColor(centre);
    for (QBarSet* set : series->barSets()) {
        if (c.rgb() == set->color().rgb()) return BarLook::Plain;
        if (c.rgb() == highlightedBarColor(set->color(), view->palette()).rgb())
            return BarLook::Highlighted;
    }
    return BarLook::Neither;
}

const TimelineClock kRaw{{}, false};

} // namespace

class TestCharts : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void breakdownSeriesAreTheAnalysisNumbers()
    {
        const auto s = analysedSession();
        RankBreakdownChart chart;
        chart.setSession(s);
        QStackedBarSeries* series = chart.series();
        QVERIFY(series);
        const QList<QBarSet*> sets = series->barSets();
        QCOMPARE(sets.size(), qsizetype(RankBreakdownChart::SetCount));
        const auto& bd = s->analysis.breakdown;
        QCOMPARE(std::size_t(sets[0]->count()), bd.size());
        const double unit = chart.bars().unit.nsPerUnit;
        QCOMPARE(chart.bars().unit.name, QStringLiteral("ms")); // 20 ms windows
        for (std::size_t i = 0; i < bd.size(); ++i) {
            const int k = int(i);
            QVERIFY(bd[i].computeNs > 0 && bd[i].commNs > 0 && bd[i].memNs > 0);
            QCOMPARE(sets[RankBreakdownChart::ComputeSet]->at(k), double(bd[i].computeNs) / unit);
            QCOMPARE(sets[RankBreakdownChart::CommSet]->at(k), double(bd[i].commNs) / unit);
            QCOMPARE(sets[RankBreakdownChart::MemSet]->at(k), double(bd[i].memNs) / unit);
            QCOMPARE(sets[RankBreakdownChart::IdleSet]->at(k), double(bd[i].idleNs) / unit);
        }
        auto* axis = qobject_cast<QBarCategoryAxis*>(chart.chart()->axes(Qt::Horizontal)[0]);
        QVERIFY(axis);
        QCOMPARE(axis->categories(), (QStringList{QStringLiteral("0"), QStringLiteral("1"),
                                                  QStringLiteral("2"), QStringLiteral("3")}));
        QVERIFY(chart.note()->text().contains(QStringLiteral("GPU stream time")));
        // Round ticks without trailing zeros ("3000", not "3000.0"), room above the tallest.
        auto* values = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical)[0]);
        QVERIFY(values);
        QCOMPARE(values->labelFormat(), QStringLiteral("%g"));
        QCOMPARE(values->min(), 0.0);
        QVERIFY(values->max() >= double(bd[0].windowNs()) / unit);
    }

    void emptyStatesSayWhy_data()
    {
        QTest::addColumn<SessionPtr>("session");
        QTest::addColumn<QString>("noteContains");
        QTest::addColumn<bool>("chartShown");
        QTest::addRow("no-folder")
            << SessionPtr() << QStringLiteral("Open a trace folder") << false;
        QTest::addRow("no-events") << SessionPtr(std::make_shared<TraceSession>())
                                   << QStringLiteral("No trace events") << false;
        auto unanalysed = analysedSession();
        unanalysed->analysis = {};
        QTest::addRow("no-analysis")
            << SessionPtr(unanalysed) << QStringLiteral("No analysis") << false;
        QTest::addRow("cpu-only") << SessionPtr(cpuOnlySession()) << QStringLiteral("no GPU lanes")
                                  << true;
    }

    void emptyStatesSayWhy()
    {
        QFETCH(SessionPtr, session);
        QFETCH(QString, noteContains);
        QFETCH(bool, chartShown);
        RankBreakdownChart chart;
        chart.setSession(session);
        chart.show();
        QVERIFY2(chart.note()->text().contains(noteContains), qPrintable(chart.note()->text()));
        QCOMPARE(chart.chartView()->isVisible(), chartShown);
        QCOMPARE(chart.series() != nullptr, chartShown);
    }

    void aRankWithNothingMeasuredIsNamed()
    {
        auto s = std::make_shared<TraceSession>();
        s->events.lanes.push_back(
            synthetic::makeLane(s->events.strings, 0, LaneKind::CpuThread, 100, 1,
                                {{0, 400'000, "aten::mm", EventCategory::CpuOp}}));
        s->events.lanes.push_back(
            synthetic::makeLane(s->events.strings, 1, LaneKind::CpuThread, 101, 1,
                                {{0, 900'000, "ProfilerStep#2", EventCategory::UserAnnotation}}));
        synthetic::finish(s);
        s->analysis.breakdown = TimeBreakdown::compute(s->events);
        RankBreakdownChart chart;
        chart.setSession(s);
        auto* axis = qobject_cast<QBarCategoryAxis*>(chart.chart()->axes(Qt::Horizontal)[0]);
        QCOMPARE(axis->categories(),
                 (QStringList{QStringLiteral("0"), QStringLiteral("1 (none)")}));
        QVERIFY2(chart.note()->text().contains(QStringLiteral("Rank 1: no compute")),
                 qPrintable(chart.note()->text()));
    }

    void collectiveEmptyStatesSayWhy()
    {
        CollectiveChart chart;
        QVERIFY(chart.note()->text().contains(QStringLiteral("Open a trace folder")));
        chart.setSession(cpuOnlySession());
        QVERIFY(chart.note()->text().contains(QStringLiteral("No collectives")));
        auto unmatched = analysedSession();
        unmatched->analysis.groups.clear();
        chart.setSession(unmatched);
        QVERIFY(chart.note()->text().contains(QStringLiteral("No analysis")));
        QVERIFY(!chart.series());
        QVERIFY(!chart.choice()->isEnabled());
    }

    void collectiveBarsAreArrivalAndDuration()
    {
        const auto s = analysedSession();
        const auto slowest = ChartData::slowestCollectives(*s, 5, {});
        QCOMPARE(slowest.size(), std::size_t(5));
        for (std::size_t i = 1; i < slowest.size(); ++i)
            QVERIFY(slowest[i - 1].spanNs >= slowest[i].spanNs);
        // No matched collective outside the list is slower than the last one in it.
        const auto all = ChartData::slowestCollectives(*s, 1000, {});
        QCOMPARE(all.size(), s->analysis.groups[0].collectives.size());
        QCOMPARE(all[4].spanNs, slowest[4].spanNs);

        const CollectiveBars& b = slowest[0];
        QCOMPARE(b.ranks, (QList<int>{0, 1, 2, 3}));
        std::int64_t first = INT64_MAX, lastEnter = -1, lastExit = -1;
        int lastRank = -1;
        for (int rec : b.records) {
            QVERIFY(rec >= 0);
            const auto [enter, exit] = enterExit(s->events.collectives[std::size_t(rec)]);
            first = std::min(first, enter);
            lastExit = std::max(lastExit, exit);
            if (enter > lastEnter) {
                lastEnter = enter;
                lastRank = s->events.collectives[std::size_t(rec)].rank;
            }
        }
        QCOMPARE(b.spanNs, lastExit - first);
        QCOMPARE(b.lastArrivingRank, lastRank);
        for (qsizetype i = 0; i < b.ranks.size(); ++i) {
            const CollectiveRecord& c = s->events.collectives[std::size_t(b.records[i])];
            QCOMPARE(c.rank, b.ranks[i]);
            const auto [enter, exit] = enterExit(c);
            QCOMPARE(b.arrival[i], double(enter - first) / b.unit.nsPerUnit);
            QCOMPARE(b.duration[i], double(exit - enter) / b.unit.nsPerUnit);
        }

        CollectiveChart chart;
        chart.setSession(s);
        QCOMPARE(chart.choice()->count(), CollectiveChart::kSlowestCount);
        QVERIFY(chart.series());
        const QList<QBarSet*> sets = chart.series()->barSets();
        for (qsizetype i = 0; i < b.ranks.size(); ++i) {
            QCOMPARE(sets[CollectiveChart::ArrivalSet]->at(i), b.arrival[i]);
            QCOMPARE(sets[CollectiveChart::DurationSet]->at(i), b.duration[i]);
        }
    }

    void aRankWithoutARecordIsNamedAsTheOneNotArrived()
    {
        auto s = analysedSession();
        MatchedCollective& m = s->analysis.groups[0].collectives[3];
        m.records[2] = -1; // rank 2 never issued it
        CollectiveChart chart;
        chart.setSession(s);
        const auto found = ChartData::findCollective(s->analysis, std::size_t(m.records[0]));
        QVERIFY(found);
        QVERIFY(chart.showRecord(std::size_t(m.records[0])));
        QCOMPARE(chart.bars().records[2], -1);
        QCOMPARE(chart.bars().duration[2], 0.0);
        QVERIFY2(chart.note()->text().contains(QStringLiteral("Rank 2 never arrived")),
                 qPrintable(chart.note()->text()));
        auto* axis =
            qobject_cast<QBarCategoryAxis*>(chart.chartView()->chart()->axes(Qt::Horizontal)[0]);
        QCOMPARE(axis->at(2), QStringLiteral("2 (none)"));
    }

    // A collective that one rank leaves 125 s after the first arrival reads as the timeline
    // writes durations (minutes and seconds), in its list entry and in the note: not "125.00 s".
    void aMinuteLongCollectiveReadsInMinutes()
    {
        auto s = analysedSession();
        const MatchedCollective& m = s->analysis.groups[0].collectives[3];
        std::int64_t first = INT64_MAX;
        for (int rec : m.records)
            first = std::min(first, enterExit(s->events.collectives[std::size_t(rec)]).first);
        s->events.collectives[std::size_t(m.records[1])].execEndNs = first + 125'000'000'000;
        CollectiveChart chart;
        chart.setSession(s);
        QCOMPARE(chart.bars().spanNs, std::int64_t(125'000'000'000));
        QVERIFY2(chart.choice()->itemText(0).endsWith(QStringLiteral(" — 2 min 5 s")),
                 qPrintable(chart.choice()->itemText(0)));
        QVERIFY2(chart.note()->text().startsWith(QStringLiteral("2 min 5 s from the first")),
                 qPrintable(chart.note()->text()));
    }

    // As the main window shows a folder: the timeline and its charts as soon as it is read, the
    // diagnosis set into the same session when it arrives. The charts then show it.
    void chartsShowTheDiagnosisWhenItArrives()
    {
        TimelinePanel panel;
        const auto s = analysedSession();
        const AnalysisResult analysis = s->analysis;
        s->analysis = {};
        panel.setSession(s);
        QVERIFY(panel.breakdownChart()->bars().ranks.isEmpty());
        s->analysis = analysis;
        panel.setDiagnosis(s->analysis);
        QCOMPARE(panel.breakdownChart()->bars().ranks.size(), qsizetype(4));
        QVERIFY(panel.collectiveChart()->bars().group >= 0);
    }

    void clickOnBreakdownBarSelectsRank()
    {
        TimelinePanel panel;
        panel.resize(1100, 800);
        panel.setSession(analysedSession(6));
        panel.showCharts();
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        RankBreakdownChart* chart = panel.breakdownChart();
        QVERIFY(chart->isVisible());
        QSignalSpy clicked(chart, &RankBreakdownChart::rankClicked);
        clickAt(chart->chartView(), chart->barCentre(4));
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked[0][0].toInt(), 4);
        QCOMPARE(panel.view()->selectedRank(), 4);
        // The view scrolled to the rank's group: its first lane is on screen.
        const int y = panel.view()->yForLane(8); // rank 4's GPU lane (two lanes per rank)
        QVERIFY(y >= TimelineView::kHeaderHeight && y < panel.view()->viewport()->height());
        QVERIFY(panel.details()->toPlainText().startsWith(QStringLiteral("Rank 4")));
        clickAt(chart->chartView(), chart->barCentre(1));
        QCOMPARE(panel.view()->selectedRank(), 1);
        QVERIFY(
            panel.details()->toPlainText().contains(QStringLiteral("1 GPU stream, 1 CPU thread")));
    }

    void clickOnCollectiveBarSelectsItOnTheTimeline()
    {
        TimelinePanel panel;
        panel.resize(1100, 800);
        const auto s = analysedSession();
        panel.setSession(s);
        panel.bottomTabs()->setCurrentWidget(panel.collectiveChart());
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        CollectiveChart* chart = panel.collectiveChart();
        const CollectiveBars shown = chart->bars();
        QVERIFY(shown.group >= 0);
        // The note runs across the pane under the choice, and the chart fits under both.
        QVERIFY(chart->note()->geometry().top() >= chart->choice()->geometry().bottom());
        QCOMPARE(chart->note()->width(), chart->chartView()->width());
        QVERIFY(chart->chartView()->geometry().bottom() <= chart->rect().bottom());
        clickAt(chart->chartView(), chart->barCentre(2));
        const CollectiveRecord& c = s->events.collectives[std::size_t(shown.records[2])];
        QCOMPARE(c.rank, 2);
        QCOMPARE(panel.view()->selected(), (TimelineEventRef{c.laneIndex, c.eventIndex}));
        QCOMPARE(panel.view()->selectedCollectivePeers().size(), std::size_t(4));
        // Still the same collective (the click must not rebuild the chart under itself).
        QCOMPARE(chart->bars().group, shown.group);
        QCOMPARE(chart->bars().index, shown.index);
    }

    void timelineSelectionShowsItsCollective()
    {
        TimelinePanel panel;
        const auto s = analysedSession();
        panel.setSession(s);
        CollectiveChart* chart = panel.collectiveChart();
        // The fastest matched collective is not among the slowest listed.
        const auto all = ChartData::slowestCollectives(*s, 1000, {});
        QVERIFY(all.size() > std::size_t(CollectiveChart::kSlowestCount) + 2);
        const CollectiveBars& fastest = all.back();
        const CollectiveRecord& c = s->events.collectives[std::size_t(fastest.records[1])];
        panel.view()->select({c.laneIndex, c.eventIndex});
        QCOMPARE(chart->bars().group, fastest.group);
        QCOMPARE(chart->bars().index, fastest.index);
        QCOMPARE(chart->choice()->currentIndex(), 0);
        QVERIFY(chart->choice()->currentText().contains(QStringLiteral("selected")));
        QCOMPARE(chart->choice()->count(), CollectiveChart::kSlowestCount + 1);
        // A second selection replaces the first instead of growing the list.
        const CollectiveBars& next = all[all.size() - 2];
        const CollectiveRecord& d = s->events.collectives[std::size_t(next.records[0])];
        panel.view()->select({d.laneIndex, d.eventIndex});
        QCOMPARE(chart->bars().index, next.index);
        QCOMPARE(chart->choice()->count(), CollectiveChart::kSlowestCount + 1);
    }

    void timelineSelectionHighlightsItsBars()
    {
        TimelinePanel panel;
        panel.resize(1100, 800);
        const auto s = analysedSession();
        panel.setSession(s);
        panel.showCharts();
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        RankBreakdownChart* breakdown = panel.breakdownChart();
        CollectiveChart* collective = panel.collectiveChart();
        const auto look = [&](int bar) {
            return barLook(breakdown->chartView(), breakdown->series(), breakdown->barCentre(bar));
        };
        QCOMPARE(look(2), BarLook::Plain);

        // A collective's event on rank 2: rank 2's bar in both charts.
        const CollectiveBars slowest = collective->bars();
        const CollectiveRecord& c = s->events.collectives[std::size_t(slowest.records[2])];
        panel.view()->select({c.laneIndex, c.eventIndex});
        QCOMPARE(breakdown->highlightedBar(), 2);
        QCOMPARE(look(2), BarLook::Highlighted);
        QCOMPARE(look(1), BarLook::Plain);
        QCOMPARE(collective->highlightedBar(), 2);
        panel.bottomTabs()->setCurrentWidget(collective);
        const auto collectiveLook = [&](int bar) {
            return barLook(collective->chartView(), collective->series(),
                           collective->barCentre(bar));
        };
        QTRY_COMPARE(collectiveLook(2), BarLook::Highlighted); // once the chart is laid out
        QCOMPARE(collectiveLook(0), BarLook::Plain);

        // A rank picked on the timeline (or from the chart).
        panel.view()->selectRank(3);
        QCOMPARE(breakdown->highlightedBar(), 3);
        QCOMPARE(collective->highlightedBar(), 3);
        QCOMPARE(collectiveLook(3), BarLook::Highlighted);
        QCOMPARE(collectiveLook(2), BarLook::Plain);

        // Nothing selected: no bar stands out; the highlight survives a rebuild of the chart.
        panel.view()->select({});
        QCOMPARE(breakdown->highlightedBar(), -1);
        QCOMPARE(collective->highlightedBar(), -1);
        QCOMPARE(collectiveLook(3), BarLook::Plain);
        panel.showCharts();
        panel.view()->selectRank(1);
        breakdown->setScope(RankBreakdownChart::VisibleWindow);
        QTRY_VERIFY(!breakdown->isUpdating());
        QTRY_COMPARE(look(1), BarLook::Highlighted);
        QCOMPARE(look(0), BarLook::Plain);
    }

    void chartsAndDetailsFollowTheClockToggle()
    {
        TimelinePanel panel;
        panel.resize(1100, 800);
        const auto s = analysedSession();
        panel.setSession(s);
        // Rank 1's clock runs 3 ms behind the common one.
        const QHash<int, qint64> offsets{{1, 3'000'000}};
        panel.view()->setClockOffsets(offsets);
        CollectiveChart* chart = panel.collectiveChart();
        const int group = chart->bars().group, index = chart->bars().index;
        const CollectiveRecord& c = s->events.collectives[std::size_t(chart->bars().records[1])];
        panel.view()->select({c.laneIndex, c.eventIndex});
        QCOMPARE(chart->clock().offsetNs, offsets);
        const CollectiveBars aligned = chart->bars();
        QCOMPARE(aligned.group, group);
        QCOMPARE(aligned.index, index);
        const CollectiveBars expected = ChartData::collective(*s, group, index, {offsets, true});
        QCOMPARE(aligned.arrival, expected.arrival);
        QVERIFY(chart->note()->text().contains(QStringLiteral("aligned clocks")));
        QVERIFY(panel.details()->toPlainText().contains(QStringLiteral("aligned clocks")));
        // The group is named as the chart's title names it.
        QVERIFY(chart->bars().title.contains(QStringLiteral("(group 0)")));
        QVERIFY(panel.details()->toPlainText().contains(QStringLiteral("all_reduce, group 0,")));
        QVERIFY(panel.details()->toPlainText().contains(
            QStringLiteral("The analysis matched it across ranks as %1.").arg(aligned.title)));

        auto* toggle = panel.findChild<QCheckBox*>();
        QVERIFY(toggle && toggle->isChecked());
        toggle->click();
        QVERIFY(!panel.view()->useClockOffsets());
        QCOMPARE(chart->clock(), kRaw);
        // The same collective, its arrivals now on the raw timestamps the timeline shows:
        // rank 1 arrives 3 ms earlier relative to the others.
        const CollectiveBars raw = chart->bars();
        QCOMPARE(raw.group, group);
        QCOMPARE(raw.index, index);
        QCOMPARE(raw.arrival, ChartData::collective(*s, group, index, kRaw).arrival);
        const auto gapNs = [](const CollectiveBars& b) {
            return qRound64((b.arrival[1] - b.arrival[0]) * b.unit.nsPerUnit);
        };
        QCOMPARE(gapNs(raw), gapNs(aligned) - 3'000'000);
        QVERIFY2(chart->note()->text().contains(QStringLiteral("raw timestamps")),
                 qPrintable(chart->note()->text()));
        auto* axis = chart->chartView()->chart()->axes(Qt::Vertical)[0];
        QCOMPARE(axis->titleText(), raw.unit.name + QStringLiteral(" (raw)"));
        // The details pane's enter times are the timeline's: raw, and say so.
        const QString details = panel.details()->toPlainText();
        QVERIFY2(details.contains(QStringLiteral("Times on raw timestamps")), qPrintable(details));
        const auto [enter, exit] = enterExit(c);
        Q_UNUSED(exit);
        QVERIFY(details.contains(ZoomState::formatNs(
            panel.view()->displayTimeNs(1, enter) - panel.view()->zoom().traceStartNs(), 1)));
    }

    // The collective table once headed its columns "enter" and "exit" and held each rank's call on
    // the host, while the selected execution bar's Start is the execution's: the two disagreed,
    // even in order. The table names the call and the execution's end, marks a rank whose record
    // has no call, and the arrival skew spans the same times.
    void collectiveTableNamesTheCallAndTheExecution()
    {
        TimelinePanel panel;
        panel.resize(1100, 800);
        const auto s = analysedSession();
        const MatchedCollective& matched = s->analysis.groups[0].collectives[3];
        QCOMPARE(matched.records.size(), std::size_t(4));
        // Ranks 0-2 call it 300, 200 and 100 µs before their executions start: the later the
        // rank, the earlier its call. Rank 3's record has no call.
        std::map<int, std::int64_t> arrival;
        for (std::int32_t rec : matched.records) {
            CollectiveRecord& c = s->events.collectives[std::size_t(rec)];
            QVERIFY(c.execStartNs >= 0 && c.issueStartNs < 0);
            if (c.rank < 3) {
                c.issueStartNs = c.execStartNs - (3 - c.rank) * 100'000;
                c.issueEndNs = c.issueStartNs + 10'000;
            }
            arrival[c.rank] = c.rank < 3 ? c.issueStartNs : c.execStartNs;
        }
        panel.setSession(s);
        const CollectiveRecord& selected = s->events.collectives[std::size_t(matched.records[0])];
        panel.view()->select({selected.laneIndex, selected.eventIndex});
        const QString html = panel.view()->selectionDetailsHtml();
        const QString text = panel.details()->toPlainText();
        const std::int64_t origin = panel.view()->zoom().traceStartNs();
        const auto shown = [&](int rank, std::int64_t ns) {
            return ZoomState::formatNs(panel.view()->displayTimeNs(rank, ns) - origin, 1);
        };
        QVERIFY2(html.contains(QStringLiteral("<th>called</th><th>execution ended</th>")),
                 qPrintable(html));
        QVERIFY2(text.contains(QStringLiteral("called: when each rank called it on the host")),
                 qPrintable(text));
        // The bar's Start is its execution's; the table's time for its rank is the earlier call.
        QVERIFY(text.contains(shown(0, selected.execStartNs)));
        for (const auto& [rank, ns] : arrival)
            QVERIFY2(text.contains(shown(rank, ns)), qPrintable(shown(rank, ns)));
        QVERIFY2(text.contains(shown(3, arrival[3]) +
                               QStringLiteral(" (execution start: no call recorded)")),
                 qPrintable(text));
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        for (const auto& [rank, ns] : arrival) {
            first = std::min(first, panel.view()->displayTimeNs(rank, ns));
            last = std::max(last, panel.view()->displayTimeNs(rank, ns));
        }
        QVERIFY2(text.contains(QStringLiteral("Arrival skew (first to last rank to call it): ") +
                               ZoomState::formatDuration(last - first)),
                 qPrintable(text));
    }

    void breakdownFollowsTheVisibleWindow()
    {
        TimelinePanel panel;
        panel.resize(1100, 800);
        const auto s = analysedSession();
        panel.setSession(s);
        panel.view()->setClockOffsets({{2, 400'000}});
        RankBreakdownChart* chart = panel.breakdownChart();
        QCOMPARE(chart->scope(), RankBreakdownChart::WholeRun);
        chart->scopeChoice()->setCurrentIndex(RankBreakdownChart::VisibleWindow);
        QCOMPARE(chart->scope(), RankBreakdownChart::VisibleWindow);
        // A zoom into the middle: the breakdown is computed once the view pauses.
        panel.view()->setVisibleRange(7'000'000, 8'000'000);
        panel.view()->setVisibleRange(7'300'000, 8'100'000);
        QVERIFY(chart->isUpdating());
        QTRY_VERIFY(!chart->isUpdating());
        const std::int64_t t0 = panel.view()->zoom().visibleStartNs();
        const std::int64_t t1 = panel.view()->zoom().visibleEndNs();
        QCOMPARE(t1 - t0, std::int64_t(800'000));
        const auto expected =
            TimeBreakdown::computeWindow(s->events, t0, t1, panel.view()->clock().offsetNs);
        const BreakdownBars& bars = chart->bars();
        QCOMPARE(bars.unit.name, QStringLiteral("µs"));
        QCOMPARE(std::size_t(bars.ranks.size()), expected.size());
        const double unit = bars.unit.nsPerUnit;
        for (qsizetype i = 0; i < bars.ranks.size(); ++i) {
            const RankTimeBreakdown& e = expected[std::size_t(i)];
            QCOMPARE(bars.compute[i], double(e.computeNs) / unit);
            QCOMPARE(bars.comm[i], double(e.commNs) / unit);
            QCOMPARE(bars.idle[i], double(e.idleNs) / unit);
            // One stream of back-to-back events per rank: the stack is the window.
            QCOMPARE(qRound64((bars.compute[i] + bars.comm[i] + bars.mem[i] + bars.idle[i]) * unit),
                     t1 - t0);
        }
        // Rank 2's window is shifted by its offset: not the same numbers as rank 0's clock.
        QCOMPARE(expected[2].windowStartNs, t0 - 400'000);
        QVERIFY2(chart->note()->text().contains(QStringLiteral("visible window")),
                 qPrintable(chart->note()->text()));
        QVERIFY(chart->note()->text().contains(QStringLiteral("aligned clocks")));
        // Raw timestamps: every rank over the same raw range.
        panel.findChild<QCheckBox*>()->click();
        QTRY_VERIFY(!chart->isUpdating());
        QVERIFY(chart->note()->text().contains(QStringLiteral("raw timestamps")));
        const std::int64_t r0 = panel.view()->zoom().visibleStartNs();
        const auto rawExpected =
            TimeBreakdown::computeWindow(s->events, r0, panel.view()->zoom().visibleEndNs(), {});
        QCOMPARE(chart->bars().idle[2],
                 double(rawExpected[2].idleNs) / chart->bars().unit.nsPerUnit);
        // Back to the whole run: the analysis' numbers.
        chart->setScope(RankBreakdownChart::WholeRun);
        QCOMPARE(chart->bars().compute[0],
                 double(s->analysis.breakdown[0].computeNs) / chart->bars().unit.nsPerUnit);
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
