#include "app/mainwindow.h"
#include "model/investigation/investigationstore.h"
#include "model/kb/taxonomy.h"
#include "model/zoomstate.h"
#include "views/findings/findingsmodel.h"
#include "views/findings/findingspanel.h"
#include "views/folderoverview.h"
#include "views/logviewer/logviewer.h"
#include "views/startpage/startpage.h"
#include "views/taxonomy/taxonomybrowser.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"
#include "views/walkthrough/walkthroughpanel.h"

#include <QAbstractButton>
#include <QAbstractItemModel>
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTreeView>

using namespace rankscope;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void opensExampleFolderAndShowsRanks();
    void timelineTabShowsTheLoadedSession();
    void walkthroughStateSurvivesClosingTheWindow();
    void startPageListsRecentInvestigations();
    void shortcutsAreListed();
    void taxonomyTabOpensAWalkthrough();
    void layoutIsRestored();
    void findingsDockAndTimelineShowTheDiagnosis();
    void mainFlowFromFindingToChecklistSurvivesReopening();
    void findingsDockIsReadableOnFirstRun();

private:
    QTemporaryDir m_db;
};

void TestMainWindow::initTestCase()
{
    QVERIFY(m_db.isValid());
    qputenv("RANKSCOPE_DB_DIR", m_db.path().toUtf8());
}

void TestMainWindow::opensExampleFolderAndShowsRanks()
{
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
    QVERIFY(changed.wait(10000));

    QVERIFY(window.windowTitle().startsWith(QLatin1String("hang_timeout")));
    const QAbstractItemModel* model = window.sourceTree()->model();
    QStringList groups;
    for (int r = 0; r < model->rowCount(); ++r)
        groups << model->index(r, 0).data().toString();
    QCOMPARE(groups, (QStringList{QStringLiteral("Rank 0"), QStringLiteral("Rank 1"),
                                  QStringLiteral("Rank 2"), QStringLiteral("Rank unknown")}));
    // Rank 1 has a trace and a log but, having been SIGTERMed, no error file.
    QCOMPARE(model->rowCount(model->index(1, 0)), 2);
    QVERIFY(window.sourceTree()->isExpanded(model->index(0, 0)));

    const QImage shot = window.grab().toImage();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-hang_timeout.png")));
}

void TestMainWindow::timelineTabShowsTheLoadedSession()
{
    MainWindow window;
    QStringList tabs;
    for (int i = 0; i < window.pages()->count(); ++i)
        tabs << window.pages()->tabText(i);
    QCOMPARE(tabs.mid(0, 2), (QStringList{QStringLiteral("Overview"), QStringLiteral("Timeline")}));
    QVERIFY(window.findChild<QAction*>(QStringLiteral("actionExportChromeTrace")));
    QVERIFY(window.findChild<QAction*>(QStringLiteral("actionExportTimelinePng")));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
    QVERIFY(changed.wait(10000));
    QCOMPARE(window.timeline()->view()->session(), window.session());
}

void TestMainWindow::walkthroughStateSurvivesClosingTheWindow()
{
    const QString folder = QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout");
    const Walkthrough& w = Taxonomy::instance().walkthroughs().front();
    {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.startPage()->isVisible());
        QVERIFY(window.grab().toImage().save(
            QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-startpage.png")));
        QSignalSpy changed(&window, &MainWindow::sessionChanged);
        window.openFolder(folder);
        QVERIFY(changed.wait(10000));
        QVERIFY(!window.startPage()->isVisible());
        QVERIFY(window.investigationId() > 0);
        WalkthroughPanel* panel = window.walkthroughPanel();
        QVERIFY(panel->isVisible());
        QVERIFY(panel->openWalkthrough(w.patternId));
        QTest::mouseClick(panel->statusButton(StepStatus::Done), Qt::LeftButton);
        panel->next();
        panel->noteEdit()->setFocus();
        QTest::keyClicks(panel->noteEdit(), QStringLiteral("rank 1 never reached the barrier"));
        QVERIFY(window.notesEdit()->isEnabled());
        QTest::keyClicks(window.notesEdit(), QStringLiteral("suspect the IB link on node 2"));
        QVERIFY(window.close());
    }
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(folder);
    QVERIFY(changed.wait(10000));
    WalkthroughPanel* panel = window.walkthroughPanel();
    QCOMPARE(panel->patternId(), w.patternId);
    QCOMPARE(panel->currentStep(), 1);
    QCOMPARE(panel->stepStatus(0), StepStatus::Done);
    QCOMPARE(panel->noteEdit()->toPlainText(), QStringLiteral("rank 1 never reached the barrier"));
    QCOMPARE(panel->progressText(), QStringLiteral("1 of %1 done").arg(w.steps.size()));
    QCOMPARE(window.notesEdit()->toPlainText(), QStringLiteral("suspect the IB link on node 2"));
    QVERIFY(window.grab().toImage().save(
        QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-walkthrough.png")));
}

void TestMainWindow::startPageListsRecentInvestigations()
{
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QListWidget* list = window.startPage()->list();
    QVERIFY(list->count() >= 1);
    const QString canonical =
        QDir(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout")).canonicalPath();
    QCOMPARE(list->item(0)->data(Qt::UserRole).toString(), canonical);
    QVERIFY(list->item(0)->text().contains(QLatin1String("1 checklist steps done")));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    Q_EMIT window.startPage()->list()->itemActivated(list->item(0));
    QVERIFY(changed.wait(10000));
    QCOMPARE(QDir(window.session()->folder.path()).canonicalPath(), canonical);
}

void TestMainWindow::shortcutsAreListed()
{
    MainWindow window;
    const auto rows = window.shortcutList();
    QStringList actions;
    for (const auto& [text, key] : rows) {
        QVERIFY(!key.isEmpty());
        actions << text;
    }
    for (const char* expected :
         {"Open Folder…", "Walkthrough", "Keyboard Shortcuts", "Find", "Taxonomy", "Timeline",
          "Next step", "Previous step", "Mark step done", "Export Report…",
          "Bookmark Timeline Range", "Next cited", "Previous cited", "Remove Bookmark"})
        QVERIFY2(actions.contains(QString::fromUtf8(expected)), expected);
}

void TestMainWindow::taxonomyTabOpensAWalkthrough()
{
    const Taxonomy& t = Taxonomy::instance();
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.pages()->tabText(2), QStringLiteral("Taxonomy"));
    for (const QString& leaf : t.leaves()) {
        const auto ws = t.walkthroughsForNode(leaf);
        if (ws.empty()) continue;
        QVERIFY(window.taxonomyBrowser()->selectNode(leaf));
        Q_EMIT window.taxonomyBrowser()->walkthroughRequested(ws.front()->patternId);
        QCOMPARE(window.walkthroughPanel()->patternId(), ws.front()->patternId);
        QCOMPARE(window.walkthroughPanel()->alternativePatterns().size(), int(ws.size()) - 1);
        return;
    }
    QFAIL("no leaf has a walkthrough");
}

void TestMainWindow::layoutIsRestored()
{
    const QString leaf = Taxonomy::instance().leaves().at(3);
    QList<int> sizes;
    {
        MainWindow window;
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.findChild<QDockWidget*>(QStringLiteral("filesDock"))->hide();
        window.pages()->setCurrentWidget(window.taxonomyBrowser());
        QCoreApplication::processEvents();
        QVERIFY(window.taxonomyBrowser()->selectNode(leaf));
        auto* split = window.taxonomyBrowser()->findChild<QSplitter*>();
        QVERIFY(split);
        const int total = split->sizes().value(0) + split->sizes().value(1);
        split->setSizes({total / 4, total - total / 4});
        sizes = split->sizes();
        QVERIFY(window.close());
    }
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.taxonomyBrowser()->currentNodeId(), leaf);
    QVERIFY(!window.findChild<QDockWidget*>(QStringLiteral("filesDock"))->isVisible());
    window.pages()->setCurrentWidget(window.taxonomyBrowser());
    QCOMPARE(window.taxonomyBrowser()->findChild<QSplitter*>()->sizes(), sizes);
    window.findChild<QDockWidget*>(QStringLiteral("filesDock"))->show();
    QVERIFY(window.close());
}

void TestMainWindow::findingsDockAndTimelineShowTheDiagnosis()
{
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
    QVERIFY(changed.wait(10000));

    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("findingsDock"));
    QVERIFY(dock && dock->isVisible());
    // Earlier tests saved a layout; the screenshot wants the dock at its own width.
    window.resizeDocks({dock}, {window.findingsPanel()->sizeHint().width()}, Qt::Horizontal);
    const FindingsModel* model = window.findingsPanel()->model();
    QVERIFY(model->rowCount() >= 1);
    QCOMPARE(model->index(0, FindingsModel::SeverityColumn).data().toString(),
             QStringLiteral("error"));
    const TimelineView* view = window.timeline()->view();
    QVERIFY(!view->markers().isEmpty());
    QCOMPARE(view->markers().size(),
             FindingsModel::timelineMarkers(window.session()->analysis).size());
    QCOMPARE(view->clockOffsets(),
             FindingsModel::timelineOffsets(window.session()->analysis.clock));
    // The overview opens with the diagnosis.
    auto* overview = window.findChild<FolderOverview*>();
    QVERIFY(overview);
    const QString page = overview->toPlainText();
    QVERIFY(page.contains(QStringLiteral("Diagnosis")));
    QVERIFY(page.indexOf(QStringLiteral("Diagnosis")) <
            page.indexOf(QStringLiteral("ranks found")));
    QVERIFY(page.contains(QString::fromStdString(model->finding(0)->summary)));
    QVERIFY(window.investigations()->findingsJson(window.investigationId()).contains("\"hang\""));

    // From the hang finding to the timeline tab.
    int hang = -1;
    for (int row = 0; row < model->rowCount() && hang < 0; ++row)
        if (model->finding(row)->kind == "hang") hang = row;
    QVERIFY(hang >= 0);
    window.findingsPanel()->selectFinding(hang);
    QVERIFY(window.findingsPanel()->showOnTimeline());
    QCOMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.timeline()));
    QTest::qWait(50);
    QVERIFY(window.grab().toImage().save(
        QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-findings-hang_timeout.png")));
    // Clicking the hang's marker on the timeline selects the hang in the findings dock.
    window.findingsPanel()->selectFinding(hang == 0 ? 1 : 0);
    TimelineView* tl = window.timeline()->view();
    const QString hangId = QString::fromStdString(model->finding(hang)->id);
    int markerIndex = -1;
    for (int i = 0; i < tl->markers().size(); ++i)
        if (tl->markers()[i].id == hangId) markerIndex = i;
    QVERIFY(markerIndex >= 0);
    const int mx = std::max(TimelineView::kLabelWidth + 2,
                            tl->xForTime(tl->markers()[markerIndex].startNs) + 3);
    QPoint markerPos;
    for (int y = TimelineView::kHeaderHeight; y < tl->viewport()->height() && markerPos.isNull();
         ++y)
        if (tl->markerAt({mx, y}) == markerIndex) markerPos = QPoint(mx, y);
    QVERIFY(!markerPos.isNull());
    QTest::mouseClick(tl->viewport(), Qt::LeftButton, Qt::NoModifier, markerPos);
    QVERIFY(window.findingsPanel()->currentFinding());
    QCOMPARE(QString::fromStdString(window.findingsPanel()->currentFinding()->id), hangId);
    QVERIFY(window.findingsPanel()->showEvidence());
    QCOMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.logViewer()));
    QVERIFY(window.grab().toImage().save(
        QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-findings-logs.png")));
}

// The main flow with the user's inputs: open the example, select a finding, "Fix it", tick a
// step, write a note, bookmark the timeline, export the report; close; reopen: all is back.
void TestMainWindow::mainFlowFromFindingToChecklistSurvivesReopening()
{
    QTemporaryDir copy;
    QVERIFY(copy.isValid());
    const QDir example(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
    for (const QString& name : example.entryList(QDir::Files))
        QVERIFY(QFile::copy(example.filePath(name), copy.filePath(name)));
    QString pattern;
    int step = -1;
    {
        MainWindow window;
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy changed(&window, &MainWindow::sessionChanged);
        window.openFolder(copy.path());
        QVERIFY(changed.wait(10000));
        QCOMPARE(window.session()->autoChecks.size(),
                 std::size_t(Taxonomy::instance().autoChecks().size()));

        FindingsPanel* findings = window.findingsPanel();
        int row = -1;
        for (int r = 0; r < findings->model()->rowCount() && row < 0; ++r)
            if (!findings->model()->finding(r)->fixPatterns.empty()) row = r;
        QVERIFY(row >= 0);
        QTest::mouseClick(findings->table()->viewport(), Qt::LeftButton, {},
                          findings->table()->visualRect(findings->model()->index(row, 0)).center());
        QCOMPARE(findings->currentFinding(), findings->model()->finding(row));
        QVERIFY(findings->fixButton()->isEnabled());
        QTest::mouseClick(findings->fixButton(), Qt::LeftButton);
        WalkthroughPanel* panel = window.walkthroughPanel();
        QTRY_VERIFY(panel->isVisible());
        pattern = panel->patternId();
        QVERIFY(!pattern.isEmpty());
        const Walkthrough* w = Taxonomy::instance().walkthrough(pattern);
        QVERIFY(w);
        step = int(w->steps.size()) - 1;
        panel->setCurrentStep(step);
        QTest::mouseClick(panel->statusButton(StepStatus::Skipped), Qt::LeftButton);
        panel->noteEdit()->setFocus();
        QTest::keyClicks(panel->noteEdit(), QStringLiteral("not applicable: gloo backend"));

        window.pages()->setCurrentWidget(window.timeline());
        TimelineView* view = window.timeline()->view();
        const qint64 mid = (view->zoom().traceStartNs() + view->zoom().traceEndNs()) / 2;
        view->setVisibleRange(mid, mid + 2'000'000);
        auto* bookmark = window.findChild<QAction*>(QStringLiteral("actionBookmarkRange"));
        QVERIFY(bookmark);
        bookmark->trigger();
        QCOMPARE(window.bookmarkList()->count(), 1);

        QTemporaryDir out;
        QString error;
        const QString report = out.filePath(QStringLiteral("report.html"));
        QVERIFY2(window.exportReport(report, &error), qPrintable(error));
        QFile html(report);
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(html.readAll());
        QVERIFY(text.contains(QLatin1String("not applicable: gloo backend")));
        QVERIFY(text.contains(QLatin1String("src=\"data:image/png;base64,")));
        QVERIFY(window.findChild<QAction*>(QStringLiteral("actionExportReport")));
        QVERIFY(window.close());
    }
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(copy.path());
    QVERIFY(changed.wait(10000));
    WalkthroughPanel* panel = window.walkthroughPanel();
    QCOMPARE(panel->patternId(), pattern);
    QCOMPARE(panel->currentStep(), step);
    QCOMPARE(panel->stepStatus(step), StepStatus::Skipped);
    QCOMPARE(panel->noteEdit()->toPlainText(), QStringLiteral("not applicable: gloo backend"));
    QCOMPARE(window.bookmarkList()->count(), 1);
    // A click on the bookmark shows its range on the timeline.
    window.pages()->setCurrentIndex(0);
    QListWidgetItem* item = window.bookmarkList()->item(0);
    const qint64 t0 = item->data(Qt::UserRole).toLongLong();
    Q_EMIT window.bookmarkList()->itemClicked(item);
    QCOMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.timeline()));
    QCOMPARE(window.timeline()->view()->zoom().visibleStartNs(), t0);
    QVERIFY(window.grab().toImage().save(
        QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-mainflow.png")));
}

// Without a saved layout the Findings dock opens at its readable width with the summary column
// visible; a saved layout still wins over that.
void TestMainWindow::findingsDockIsReadableOnFirstRun()
{
    QSettings().remove(QStringLiteral("mainWindow"));
    int narrow = 0;
    {
        MainWindow window;
        window.resize(1600, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QSignalSpy changed(&window, &MainWindow::sessionChanged);
        window.openFolder(QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout"));
        QVERIFY(changed.wait(10000));
        auto* dock = window.findChild<QDockWidget*>(QStringLiteral("findingsDock"));
        QVERIFY(dock && dock->isVisible());
        const FindingsPanel* panel = window.findingsPanel();
        QVERIFY2(dock->width() >= panel->sizeHint().width() - 20,
                 qPrintable(
                     QStringLiteral("%1 < %2").arg(dock->width()).arg(panel->sizeHint().width())));
        const QHeaderView* header = panel->table()->horizontalHeader();
        const int chars = panel->fontMetrics().averageCharWidth();
        QVERIFY2(header->sectionSize(FindingsModel::SummaryColumn) >= chars * 15,
                 qPrintable(QString::number(header->sectionSize(FindingsModel::SummaryColumn))));
        QVERIFY(header->sectionSize(FindingsModel::SymptomColumn) >= chars * 12);
        // Every column fits: no horizontal scrolling to reach the summary.
        QVERIFY(header->length() <= panel->table()->viewport()->width());
        QVERIFY(window.grab().toImage().save(
            QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-firstrun.png")));
        narrow = panel->sizeHint().width() * 3 / 4;
        window.resizeDocks({dock}, {narrow}, Qt::Horizontal);
        QCoreApplication::processEvents();
        narrow = dock->width();
        QVERIFY(window.close());
    }
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.findChild<QDockWidget*>(QStringLiteral("findingsDock"))->width(), narrow);
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
