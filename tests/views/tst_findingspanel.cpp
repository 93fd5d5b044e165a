#include "model/kb/taxonomy.h"
#include "views/findings/findingsmodel.h"
#include "views/findings/findingspanel.h"
#include "views/logviewer/loglinesmodel.h"
#include "views/logviewer/logviewer.h"
#include "views/timeline/timelineview.h"
#include "views/walkthrough/walkthroughpanel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QTextBrowser>
#include <QTextDocument>
#include <algorithm>
#include <cmath>

using namespace rankscope;

namespace {

SessionPtr hangSession()
{
    static SessionPtr session = loadSession(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
    return session;
}

int hangRow(const FindingsModel& model)
{
    for (int row = 0; row < model.rowCount(); ++row)
        if (model.finding(row)->kind == FindingKind::Hang) return row;
    return -1;
}

struct Fixture {
    FindingsPanel panel;
    LogViewer logViewer;
    TimelineView timeline;
    WalkthroughPanel walkthrough;

    Fixture()
    {
        const SessionPtr session = hangSession();
        timeline.resize(1000, 600);
        timeline.show();
        timeline.setSession(session);
        timeline.setClockOffsets(FindingsModel::timelineOffsets(session->analysis.clock));
        panel.setTargets(&logViewer, &timeline, &walkthrough);
        panel.setSession(session);
        panel.resize(700, 800);
        panel.show();
        logViewer.resize(800, 500);
        logViewer.show();
    }
};

} // namespace

class TestFindingsPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void modelPassesTheTester();
    void errorsComeFirst();
    void listsAHangBlamingRankOne();
    void evidenceOpensTheLogViewerAtTheCitedLine();
    void logsShowTheSelectedFindingsLinesWithoutEvidence();
    void logsOpenTheCitedLogUntilOneIsPicked_data();
    void logsOpenTheCitedLogUntilOneIsPicked();
    void showOnTimelineShowsTheFindingsRange();
    void fixItOpensAFixPatternOfTheFinding();
    void symptomsAreListedWithScores();
    void rowsFitAndTheFindingGetsTheRest();
    void markersAndOffsetsFollowTheAnalysis();
    void factFindingsSayTheyHaveNoSymptom();
    void saysWhenTheDiagnosisIsNotThere();
    void emptyListsAreShortBeforeAFolderIsOpened();
};

void TestFindingsPanel::modelPassesTheTester()
{
    FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSession(hangSession());
    QVERIFY(model.rowCount() > 0);
    QCOMPARE(model.columnCount(), int(FindingsModel::ColumnCount));
    model.setSession({});
    QCOMPARE(model.rowCount(), 0);
    model.setSession(hangSession());
}

void TestFindingsPanel::errorsComeFirst()
{
    FindingsModel model;
    model.setSession(hangSession());
    for (int row = 1; row < model.rowCount(); ++row)
        QVERIFY(model.finding(row - 1)->severity <= model.finding(row)->severity);
    QCOMPARE(model.index(0, FindingsModel::SeverityColumn).data().toString(),
             QStringLiteral("error"));
}

void TestFindingsPanel::listsAHangBlamingRankOne()
{
    Fixture fx;
    const int row = hangRow(*fx.panel.model());
    QVERIFY2(row >= 0, "no hang finding on hang_timeout");
    const Finding* f = fx.panel.model()->finding(row);
    QCOMPARE(f->ranks, std::vector<int>{1});
    QCOMPARE(fx.panel.model()->index(row, FindingsModel::RanksColumn).data().toString(),
             QStringLiteral("rank 1"));
    const TaxonomyNode* node = Taxonomy::instance().node(QString::fromStdString(f->symptom));
    QVERIFY(node);
    QCOMPARE(fx.panel.model()->index(row, FindingsModel::SymptomColumn).data().toString(),
             node->name);
    fx.panel.selectFinding(row);
    QCOMPARE(fx.panel.currentFinding(), f);
    QVERIFY(fx.panel.summaryView()->toPlainText().contains(QString::fromStdString(f->summary)));
    QCOMPARE(fx.panel.evidenceList()->count(), int(f->evidence.size()));
}

void TestFindingsPanel::evidenceOpensTheLogViewerAtTheCitedLine()
{
    Fixture fx;
    const int row = hangRow(*fx.panel.model());
    QVERIFY(row >= 0);
    fx.panel.selectFinding(row);
    const Finding* f = fx.panel.currentFinding();
    const auto cited = std::find_if(f->evidence.begin(), f->evidence.end(),
                                    [](const Evidence& e) { return e.line > 0; });
    QVERIFY2(cited != f->evidence.end(), "the hang finding cites no log line");
    QVERIFY(fx.panel.evidenceButton()->isEnabled());
    QSignalSpy shown(&fx.panel, &FindingsPanel::logViewerShown);
    QTest::mouseClick(fx.panel.evidenceButton(), Qt::LeftButton);
    QCOMPARE(shown.count(), 1);
    QVERIFY(fx.logViewer.currentLog());
    QCOMPARE(fx.logViewer.currentLog()->sourcePath, QString::fromStdString(cited->path));
    QCOMPARE(fx.logViewer.currentLineNumber(), cited->line);
    QVERIFY(fx.logViewer.isHighlighted(cited->line));
    // The highlighted row is the one shown, on the cited lines' tint.
    const QModelIndex current = fx.logViewer.lineView()->currentIndex();
    QCOMPARE(current.data(Qt::BackgroundRole).value<QColor>(),
             LogLinesModel::citedBackground(QApplication::palette()));
    QVERIFY(fx.logViewer.lineView()->visualRect(current).intersects(
        fx.logViewer.lineView()->viewport()->rect()));
}

// A finding's cited lines are highlighted in whichever log the Logs tab shows as soon as the
// finding is selected: Evidence need not be pressed first, and another finding's lines go.
// What is cited is read from the finding's evidence and the log's own line numbers.
void TestFindingsPanel::logsShowTheSelectedFindingsLinesWithoutEvidence()
{
    Fixture fx;
    const std::vector<RankLog>& logs = hangSession()->logs;
    QCOMPARE(fx.logViewer.logBox()->count(), int(logs.size()));
    int citingLogs = 0;
    for (int row = 0; row < fx.panel.model()->rowCount(); ++row) {
        fx.panel.selectFinding(row);
        const Finding* f = fx.panel.currentFinding();
        for (int i = 0; i < int(logs.size()); ++i) {
            const RankLog& log = logs[std::size_t(i)];
            QList<int> expected;
            for (const Evidence& e : f->evidence)
                if (e.line > 0 && QString::fromStdString(e.path) == log.sourcePath &&
                    (e.rank < 0 || !log.rank || *log.rank == e.rank) && !expected.contains(e.line))
                    expected << e.line;
            std::sort(expected.begin(), expected.end());
            Q_EMIT fx.logViewer.logBox()->activated(i); // as if picked in the list
            QCOMPARE(fx.logViewer.currentLog(), &log);
            QCOMPARE(fx.logViewer.citedLineNumbers(), expected);
            for (int n : expected)
                QVERIFY(fx.logViewer.isHighlighted(n));
            // The list marks the logs that hold cited lines.
            QCOMPARE(fx.logViewer.logBox()->itemText(i).contains(QStringLiteral("cited")),
                     !expected.isEmpty());
            citingLogs += expected.isEmpty() ? 0 : 1;
        }
    }
    QVERIFY2(citingLogs >= 2, "the example's findings cite fewer than two logs");
    // The log shown when a finding is selected shows its lines too, without a click.
    fx.panel.selectFinding(hangRow(*fx.panel.model()));
    const Finding* hang = fx.panel.currentFinding();
    const auto cited = std::find_if(hang->evidence.begin(), hang->evidence.end(),
                                    [](const Evidence& e) { return e.line > 0; });
    QVERIFY(cited != hang->evidence.end());
    QVERIFY(fx.logViewer.openAt(QString::fromStdString(cited->path), 1, cited->rank));
    fx.panel.selectFinding(hangRow(*fx.panel.model()) == 0 ? 1 : 0);
    fx.panel.selectFinding(hangRow(*fx.panel.model()));
    QVERIFY(fx.logViewer.isHighlighted(cited->line));
    QCOMPARE(fx.logViewer.currentLineNumber(), 1); // the reader's place is kept
}

// Until a log is picked in the list, selecting a finding shows the log of its first cited line,
// at that line (subgroup_hang_w4's hang cites rank 3's log, not rank 0's, which opens first;
// rank_killed_w3_step0's crash cites the launcher's line on rank 1 before the ranks' own logs);
// a picked log stays whichever finding is selected. The cited log is found here from the
// evidence and the logs' own paths, ranks and line numbers.
void TestFindingsPanel::logsOpenTheCitedLogUntilOneIsPicked_data()
{
    QTest::addColumn<QString>("folder");
    QTest::newRow("subgroup_hang_w4") << QStringLiteral("subgroup_hang_w4");
    QTest::newRow("rank_killed_w3_step0") << QStringLiteral("rank_killed_w3_step0");
}

void TestFindingsPanel::logsOpenTheCitedLogUntilOneIsPicked()
{
    QFETCH(QString, folder);
    const SessionPtr s = loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + folder);
    QVERIFY(s && s->logs.size() >= 2);
    FindingsPanel panel;
    LogViewer logViewer;
    panel.setTargets(&logViewer, nullptr, nullptr);
    panel.setSession(s);
    logViewer.resize(800, 500);
    logViewer.show();
    const auto firstCitedLine = [&](const Finding& f) {
        for (const Evidence& e : f.evidence)
            for (int i = 0; e.line > 0 && i < int(s->logs.size()); ++i) {
                const RankLog& log = s->logs[std::size_t(i)];
                if (QString::fromStdString(e.path) == log.sourcePath &&
                    (e.rank < 0 || !log.rank || *log.rank == e.rank) &&
                    log.indexOfLineNumber(e.line) >= 0)
                    return std::pair{i, e.line};
            }
        return std::pair{-1, -1};
    };
    int pastTheFirstLog = -1; // a finding whose first cited log is not the one opened first
    for (int row = 0; row < panel.model()->rowCount(); ++row) {
        logViewer.setSession(s); // nothing picked, the first log shown
        panel.selectFinding(row);
        const auto [logIndex, line] = firstCitedLine(*panel.currentFinding());
        QCOMPARE(logViewer.currentLog(), &s->logs[std::size_t(std::max(logIndex, 0))]);
        if (logIndex < 0) continue;
        QCOMPARE(logViewer.currentLineNumber(), line);
        QVERIFY(logViewer.isHighlighted(line));
        if (logIndex > 0) pastTheFirstLog = row;
    }
    QVERIFY2(pastTheFirstLog >= 0, "no finding cites a log other than the first");
    // Picked in the list, the first log stays when a finding citing another is selected.
    logViewer.setSession(s);
    Q_EMIT logViewer.logBox()->activated(0);
    panel.selectFinding(pastTheFirstLog);
    QCOMPARE(logViewer.currentLog(), &s->logs.front());
    QVERIFY(logViewer.logBox()
                ->itemText(firstCitedLine(*panel.currentFinding()).first)
                .contains(QStringLiteral("cited")));
}

void TestFindingsPanel::showOnTimelineShowsTheFindingsRange()
{
    Fixture fx;
    const int row = hangRow(*fx.panel.model());
    QVERIFY(row >= 0);
    fx.panel.selectFinding(row);
    const Finding* f = fx.panel.currentFinding();
    QVERIFY2(f->startNs >= 0 && f->endNs >= f->startNs, "the hang finding has no time range");
    // Start from somewhere else so the jump is visible.
    fx.timeline.zoom().setVisibleRange(fx.timeline.zoom().traceStartNs(),
                                       fx.timeline.zoom().traceStartNs() + 1000);
    QSignalSpy shown(&fx.panel, &FindingsPanel::timelineShown);
    QTest::mouseClick(fx.panel.timelineButton(), Qt::LeftButton);
    QCOMPARE(shown.count(), 1);
    const ZoomState& z = fx.timeline.zoom();
    QVERIFY2(z.visibleStartNs() <= std::max(f->startNs, z.traceStartNs()) &&
                 z.visibleEndNs() >= std::min(f->endNs, z.traceEndNs()),
             qPrintable(QStringLiteral("visible %1..%2, finding %3..%4")
                            .arg(z.visibleStartNs())
                            .arg(z.visibleEndNs())
                            .arg(f->startNs)
                            .arg(f->endNs)));
}

void TestFindingsPanel::fixItOpensAFixPatternOfTheFinding()
{
    Fixture fx;
    const int row = hangRow(*fx.panel.model());
    QVERIFY(row >= 0);
    fx.panel.selectFinding(row);
    const Finding* f = fx.panel.currentFinding();
    QVERIFY(!f->fixPatterns.empty());
    QSignalSpy shown(&fx.panel, &FindingsPanel::walkthroughShown);
    QTest::mouseClick(fx.panel.fixButton(), Qt::LeftButton);
    QCOMPARE(shown.count(), 1);
    const std::string opened = fx.walkthrough.patternId().toStdString();
    QVERIFY2(std::find(f->fixPatterns.begin(), f->fixPatterns.end(), opened) !=
                 f->fixPatterns.end(),
             opened.c_str());
    // The first pattern that has a walkthrough is the one opened.
    for (const std::string& p : f->fixPatterns)
        if (Taxonomy::instance().walkthrough(QString::fromStdString(p))) {
            QCOMPARE(opened, p);
            break;
        }
    // It says why the evidence calls for it, and offers the finding's other fixes only.
    QVERIFY(!f->fixReason.empty());
    QVERIFY(fx.walkthrough.reasonLabel()->isVisibleTo(&fx.walkthrough));
    QVERIFY2(fx.walkthrough.reasonLabel()->text().contains(
                 QString::fromStdString(f->fixReason).toHtmlEscaped()),
             qPrintable(fx.walkthrough.reasonLabel()->text()));
    for (const QString& other : fx.walkthrough.alternativePatterns())
        QVERIFY2(std::find(f->fixPatterns.begin(), f->fixPatterns.end(), other.toStdString()) !=
                     f->fixPatterns.end(),
                 qPrintable(other));
    QVERIFY(fx.panel.summaryView()->toPlainText().contains(QString::fromStdString(f->fixReason)));
    // Another checklist opened by hand carries no reason.
    const QString other = QString::fromStdString(f->fixPatterns.back());
    QVERIFY(fx.walkthrough.openWalkthrough(
        other == fx.walkthrough.patternId() ? QStringLiteral("fix-dependency-version") : other));
    QVERIFY(!fx.walkthrough.reasonLabel()->isVisibleTo(&fx.walkthrough));
}

void TestFindingsPanel::symptomsAreListedWithScores()
{
    Fixture fx;
    const auto& symptoms = hangSession()->analysis.symptoms;
    QCOMPARE(fx.panel.symptomList()->count(), int(symptoms.size()));
    QVERIFY(!symptoms.empty());
    const QString first = fx.panel.symptomList()->item(0)->text();
    QVERIFY(first.contains(QString::number(symptoms.front().score, 'f', 2)));
    QVERIFY(first.contains(FindingsModel::symptomName(symptoms.front().symptom)));
}

// In the dock of a 1280x800 window (about 430 x 720): the findings, their evidence and the ranked
// symptoms are as tall as their rows, every row shown; the finding's summary has the rest.
void TestFindingsPanel::rowsFitAndTheFindingGetsTheRest()
{
    Fixture fx;
    fx.panel.resize(430, 720);
    QVERIFY(QTest::qWaitForWindowExposed(&fx.panel));
    QTableView* table = fx.panel.table();
    const int findings = fx.panel.model()->rowCount();
    QCOMPARE(findings, 2);
    const int tableRows = table->horizontalHeader()->height() +
                          findings * table->verticalHeader()->defaultSectionSize() +
                          2 * table->frameWidth();
    QTRY_VERIFY2(table->height() >= tableRows && table->height() <= tableRows + 4,
                 qPrintable(QStringLiteral("%1 for %2").arg(table->height()).arg(tableRows)));
    QListWidget* symptoms = fx.panel.symptomList();
    QVERIFY(symptoms->count() >= 1 && symptoms->count() <= 4);
    const int symptomRows =
        symptoms->count() * symptoms->sizeHintForRow(0) + 2 * symptoms->frameWidth();
    QVERIFY2(symptoms->height() >= symptomRows && symptoms->height() <= symptomRows + 4,
             qPrintable(QStringLiteral("%1 for %2").arg(symptoms->height()).arg(symptomRows)));
    // Narrower than the findings' columns: the scroll bar under the rows does not hide one.
    fx.panel.resize(300, 720);
    QTRY_VERIFY(table->horizontalScrollBar()->isVisible());
    QTRY_COMPARE(table->viewport()->height(),
                 findings * table->verticalHeader()->defaultSectionSize());
    // The evidence list as tall as its rows (and the scroll bar under lines wider than it), no
    // empty rows under them; the finding's summary and fix links have the rest, unscrolled.
    for (const int width : {430, 300}) {
        fx.panel.resize(width, 720);
        for (int row = 0; row < findings; ++row) {
            fx.panel.selectFinding(row);
            QListWidget* evidence = fx.panel.evidenceList();
            QVERIFY(evidence->count() >= 1 && evidence->count() <= 6);
            QCoreApplication::processEvents();
            const QScrollBar* bar = evidence->horizontalScrollBar();
            const int evidenceRows = evidence->count() * evidence->sizeHintForRow(0) +
                                     2 * evidence->frameWidth() +
                                     (bar->isVisible() ? bar->height() : 0);
            QTRY_VERIFY2(evidence->height() >= evidenceRows &&
                             evidence->height() <= evidenceRows + 4,
                         qPrintable(QStringLiteral("%1 for %2 at %3 px")
                                        .arg(evidence->height())
                                        .arg(evidenceRows)
                                        .arg(width)));
            // The summary as tall as its text, neither scrolled nor padded, and the evidence
            // right under it: the height neither needs is left below the buttons.
            const QTextBrowser* summary = fx.panel.summaryView();
            const auto text = [summary] {
                return int(std::ceil(summary->document()->size().height()));
            };
            QTRY_VERIFY2(summary->verticalScrollBar()->maximum() == 0 &&
                             summary->height() <= std::max(summary->minimumHeight(), text() + 2),
                         qPrintable(QStringLiteral("%1 px for %2 at %3 px")
                                        .arg(summary->height())
                                        .arg(text())
                                        .arg(width)));
            const int gap = evidence->y() - summary->geometry().bottom();
            QVERIFY2(gap <= 2 * fx.panel.fontMetrics().height() + 16,
                     qPrintable(QString::number(gap)));
            QVERIFY(fx.panel.evidenceButton()->y() > evidence->geometry().bottom());
        }
    }
    // A dock too short for the summary: it scrolls, and the buttons under the evidence stay.
    fx.panel.resize(430, 330);
    fx.panel.selectFinding(0);
    const QTextBrowser* summary = fx.panel.summaryView();
    QTRY_VERIFY(summary->verticalScrollBar()->maximum() > 0);
    QVERIFY(summary->height() >= summary->minimumHeight());
    const QWidget* detail = summary->parentWidget();
    QVERIFY(fx.panel.evidenceButton()->geometry().bottom() < detail->height());
}

void TestFindingsPanel::markersAndOffsetsFollowTheAnalysis()
{
    const AnalysisResult& a = hangSession()->analysis;
    const QList<TimelineMarker> markers = FindingsModel::timelineMarkers(a);
    const auto ranged = std::count_if(a.findings.begin(), a.findings.end(), [](const Finding& f) {
        return f.startNs >= 0 && f.endNs >= f.startNs;
    });
    QCOMPARE(markers.size(), qsizetype(ranged));
    QVERIFY(!markers.isEmpty());
    for (const TimelineMarker& m : markers)
        QVERIFY(m.color.isValid());
    const QHash<int, qint64> offsets = FindingsModel::timelineOffsets(a.clock);
    for (const auto& [rank, offset] : a.clock.offsetNs) {
        QCOMPARE(offsets.contains(rank), offset.has_value());
        if (offset) QCOMPARE(offsets.value(rank), -*offset);
    }
}

// A finding without a taxonomy leaf (rank 3 of the group left no dump) shows what the CLI says
// in its place, in the table and in the details, not an empty symptom.
void TestFindingsPanel::factFindingsSayTheyHaveNoSymptom()
{
    FindingsPanel panel;
    panel.setSession(
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/absent_rank_json")));
    int row = -1;
    for (int r = 0; r < panel.model()->rowCount(); ++r)
        if (panel.model()->finding(r)->kind == FindingKind::MissingRanks) row = r;
    QVERIFY(row >= 0);
    QVERIFY(panel.model()->finding(row)->symptom.empty());
    const QString text = panel.model()->index(row, FindingsModel::SymptomColumn).data().toString();
    QVERIFY2(text.startsWith(QLatin1String("none (a fact")), qPrintable(text));
    panel.selectFinding(row);
    QVERIFY(panel.summaryView()->toPlainText().contains(text));
}

// Read but not yet diagnosed, or its diagnosis cancelled: the panel says so, never "no errors
// or warnings found".
void TestFindingsPanel::saysWhenTheDiagnosisIsNotThere()
{
    FindingsPanel panel;
    const SessionPtr read = readSession(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
    panel.setSession(read, FindingsPanel::Diagnosis::Running);
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY(panel.summaryView()->toPlainText().startsWith(QLatin1String("Diagnosing")));
    panel.setSession(read, FindingsPanel::Diagnosis::Cancelled);
    QVERIFY(panel.summaryView()->toPlainText().contains(QLatin1String("cancelled")));
    panel.setSession(read);
    QVERIFY(panel.summaryView()->toPlainText().startsWith(QLatin1String("No errors")));
}

// The dock on the start page of a 1280x800 window: no folder yet, so the findings and the ranked
// symptoms are a row or two tall, not thirds of the dock of empty white.
void TestFindingsPanel::emptyListsAreShortBeforeAFolderIsOpened()
{
    FindingsPanel panel;
    panel.resize(430, 720);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const QTableView* table = panel.table();
    const int twoRows = table->horizontalHeader()->height() +
                        2 * table->verticalHeader()->defaultSectionSize() + 2 * table->frameWidth();
    QTRY_VERIFY2(table->height() <= twoRows + 4, qPrintable(QString::number(table->height())));
    const QListWidget* symptoms = panel.symptomList();
    const int oneRow = panel.fontMetrics().height() + 2 + 2 * symptoms->frameWidth();
    QVERIFY2(symptoms->height() <= oneRow + 4, qPrintable(QString::number(symptoms->height())));
    QVERIFY(panel.summaryView()->toPlainText().contains(QStringLiteral("Open a trace folder")));
}

QTEST_MAIN(TestFindingsPanel)
#include "tst_findingspanel.moc"
