#include "app/mainwindow.h"
#include "model/digest/digest.h"
#include "model/investigation/investigationstore.h"
#include "model/kb/taxonomy.h"
#include "model/traceloader.h"
#include "model/zoomstate.h"
#include "tests/support/testfiles.h"
#include "views/findings/findingsmodel.h"
#include "views/findings/findingspanel.h"
#include "views/folderoverview.h"
#include "views/issues/issuebrowser.h"
#include "views/issues/issuetablemodel.h"
#include "views/logviewer/logviewer.h"
#include "views/models/sourcetreemodel.h"
#include "views/preferences/loadlimitsdialog.h"
#include "views/startpage/startpage.h"
#include "views/taxonomy/taxonomybrowser.h"
#include "views/timeline/rankoverview.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"
#include "views/walkthrough/walkthroughpanel.h"

#include <QAbstractButton>
#include <QAbstractItemModel>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTimer>
#include <QTreeView>
#include <algorithm>
#include <functional>
#include <map>
#include <set>

using namespace rankscope;

namespace {

const QString kExample = QStringLiteral(RANKSCOPE_EXAMPLES "/hang_timeout");

// The example's files by rank, as the Files dock groups them.
const QStringList kExampleGroups{QStringLiteral("Rank 0"), QStringLiteral("Rank 1"),
                                 QStringLiteral("Rank 2"), QStringLiteral("Rank unknown")};

// The top-level groups of the Files dock ("Rank 0", ...).
QStringList rankGroups(const MainWindow& window)
{
    const QAbstractItemModel* model = window.sourceTree()->model();
    QStringList groups;
    for (int r = 0; r < model->rowCount(); ++r)
        groups << model->index(r, 0).data().toString();
    return groups;
}

// Loads `folder` into the window; false if the load does not finish in time.
bool load(MainWindow& window, const QString& folder)
{
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(folder);
    return changed.wait(10000);
}

// Shows the window at `size`, then loads `folder` into it.
bool showAndLoad(MainWindow& window, const QString& folder, QSize size = {1280, 800})
{
    window.resize(size);
    window.show();
    return QTest::qWaitForWindowExposed(&window) && load(window, folder);
}

// The example copied into `dir`: a folder of its own, so an investigation of its own.
bool copyExample(const QTemporaryDir& dir)
{
    const QDir example(kExample);
    const QStringList names = example.entryList(QDir::Files);
    return dir.isValid() && !names.isEmpty() &&
           std::all_of(names.begin(), names.end(), [&](const QString& name) {
               return QFile::copy(example.filePath(name), dir.filePath(name));
           });
}

// Help > Keyboard Shortcuts (F1).
QAction* shortcutsAction(const MainWindow& window)
{
    QAction* help = nullptr;
    for (QAction* a : window.findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(QKeySequence::HelpContents)) help = a;
    return help;
}

// The rows of the Help > Keyboard Shortcuts dialog as it shows them.
QList<ShortcutRow> rowsShownByHelp(MainWindow& window)
{
    QAction* help = shortcutsAction(window);
    if (!help) return {};
    QList<ShortcutRow> shown;
    QTimer::singleShot(0, &window, [&shown] {
        QWidget* dialog = QApplication::activeModalWidget();
        auto* table =
            dialog ? dialog->findChild<QTableWidget*>(QStringLiteral("shortcutTable")) : nullptr;
        for (int r = 0; table && r < table->rowCount(); ++r)
            shown.append(
                {table->item(r, 0)->text(), table->item(r, 1)->text(), table->item(r, 2)->text()});
        if (dialog) dialog->close();
    });
    help->trigger();
    return shown;
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void exportsStartInDocumentsAndNeverWriteIntoTheFolder();
    void aSecondWindowOpensTheInvestigationReadOnly();
    void opensExampleFolderAndShowsRanks();
    void dropsADigestLikeAFolder();
    void firstWindowFitsTheScreen();
    void timelineTabShowsTheLoadedSession();
    void walkthroughStateSurvivesClosingTheWindow();
    void startPageListsRecentInvestigations();
    void shortcutsAreListed();
    void shortcutDialogShowsEveryColumnWhole();
    void timelineKeysDoWhatTheListSays();
    void timelineBindingsAreInHelpAndTheHints();
    void taxonomyTabOpensAWalkthrough();
    void layoutIsRestored();
    void findingsDockAndTimelineShowTheDiagnosis();
    void mainFlowFromFindingToChecklistSurvivesReopening();
    void findingsDockIsReadableOnFirstRun();
    void bookmarksAreRenamedAndRemovedFromTheList();
    void darkPaletteLeavesNoLightPane();
    void walkthroughFollowsTheFolder();
    void emptyFolderIsNotAHealthyOne();
    void loadLimitsTruncateAndSaySo();
    void exportReportWaitsForTheDiagnosis();
    void unattributedFilesSayWhyOnTheOverview();
    void skippedFilesAreGreyedOnTheOverview();
    void statusBarCountsTheAnalysedJobsRanks();
    void timelineExportsNeedATrace();

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
    QVERIFY(showAndLoad(window, kExample));

    QVERIFY(window.windowTitle().startsWith(QLatin1String("hang_timeout")));
    QCOMPARE(rankGroups(window), kExampleGroups);
    const QAbstractItemModel* model = window.sourceTree()->model();
    // Rank 1 has a trace and a log but, having been SIGTERMed, no error file.
    QCOMPARE(model->rowCount(model->index(1, 0)), 2);
    QVERIFY(window.sourceTree()->isExpanded(model->index(0, 0)));

    const QImage shot = window.grab().toImage();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-hang_timeout.png")));
}

// A .rsdigest dropped on the window opens like the folder it was made from; another file does
// not.
void TestMainWindow::dropsADigestLikeAFolder()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString digest = dir.filePath(QStringLiteral("job.rsdigest"));
    QCOMPARE(Digest::create(kExample, digest), QString());
    const QString notes = dir.filePath(QStringLiteral("notes.txt"));
    QFile file(notes);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a digest\n");
    file.close();

    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QMimeData other;
    other.setUrls({QUrl::fromLocalFile(notes)});
    QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &other, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &refused);
    QVERIFY(!refused.isAccepted());

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(digest)});
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(changed.wait(10000));
    QVERIFY(window.windowTitle().startsWith(QLatin1String("job.rsdigest")));
    QCOMPARE(rankGroups(window), kExampleGroups);
}

// Without a saved geometry the window takes most of a large screen and fits a small one: the
// offscreen platform's screen is 800 x 600, smaller than the 1280 x 800 the window used to take.
void TestMainWindow::firstWindowFitsTheScreen()
{
    const QString key = QStringLiteral("mainWindow/geometry");
    const QVariant saved = QSettings().value(key);
    QSettings().remove(key);
    const auto restore = qScopeGuard([&] {
        if (saved.isValid()) QSettings().setValue(key, saved);
    });
    const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY2(available.width() < 1280 || available.height() < 800, "the screen is not small");
    const QSize size = window.frameGeometry().size();
    QVERIFY2(size.width() <= available.width() && size.height() <= available.height(),
             qPrintable(QStringLiteral("%1x%2 on %3x%4")
                            .arg(size.width())
                            .arg(size.height())
                            .arg(available.width())
                            .arg(available.height())));
    // The docks of the right-hand side are tabbed on the left, not lost.
    for (const char* name : {"walkthroughDock", "notesDock"})
        QCOMPARE(window.dockWidgetArea(window.findChild<QDockWidget*>(QLatin1String(name))),
                 Qt::LeftDockWidgetArea);
    // Large screens keep the size they had: 90 % of the screen up to 1800 x 1100.
    QCOMPARE(MainWindow::firstRunSize({1920, 1050}), QSize(1728, 945));
    QCOMPARE(MainWindow::firstRunSize({2560, 1400}), QSize(1800, 1100));
    // A 1366 x 768 laptop's: the window once took 1280 x 800, taller than the screen.
    QCOMPARE(MainWindow::firstRunSize({1366, 740}), QSize(1229, 666));
    // Docks on both sides once left the pages about 500 px of a 1280 x 800 screen's window: the
    // right-hand docks are tabbed on the left unless the pages keep about 100 characters.
    const int charWidth = window.fontMetrics().averageCharWidth();
    const int left = window.findChild<FindingsPanel*>()->sizeHint().width();
    const int right = MainWindow::kWalkthroughDockChars * charWidth;
    QVERIFY(MainWindow::sideDocksCrowdThePages(MainWindow::firstRunSize({1280, 770}).width(), left,
                                               right, charWidth));
    QVERIFY(!MainWindow::sideDocksCrowdThePages(MainWindow::firstRunSize({1920, 1050}).width(),
                                                left, right, charWidth));
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
    QVERIFY(load(window, kExample));
    QCOMPARE(window.timeline()->view()->session(), window.session());
}

void TestMainWindow::walkthroughStateSurvivesClosingTheWindow()
{
    const QString folder = kExample;
    const Walkthrough& w = Taxonomy::instance().walkthroughs().front();
    {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.startPage()->isVisible());
        QVERIFY(window.grab().toImage().save(
            QStringLiteral(RANKSCOPE_TEST_OUTPUT "/mainwindow-startpage.png")));
        QVERIFY(load(window, folder));
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
    QVERIFY(load(window, folder));
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
    const QString canonical = QDir(kExample).canonicalPath();
    QCOMPARE(list->item(0)->data(Qt::UserRole).toString(), canonical);
    QVERIFY(list->item(0)->text().contains(QLatin1String("1 checklist step done")));
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    Q_EMIT window.startPage()->list()->itemActivated(list->item(0));
    QVERIFY(changed.wait(10000));
    QCOMPARE(QDir(window.session()->folder.path()).canonicalPath(), canonical);
}

// Help > Keyboard Shortcuts lists every action and button of the window that has a shortcut
// (read off the widgets, so none can be left out) and the timeline's own keys.
void TestMainWindow::shortcutsAreListed()
{
    MainWindow window;
    const QList<ShortcutRow> rows = window.shortcutList();
    const auto listed = [&rows](const QString& action, const QString& keys) {
        return std::any_of(rows.begin(), rows.end(), [&](const ShortcutRow& r) {
            return r.action == action && r.keys == keys && !r.where.isEmpty();
        });
    };
    int actions = 0;
    for (const QAction* a : window.findChildren<QAction*>()) {
        if (a->shortcut().isEmpty()) continue;
        ++actions;
        QString text = a->text();
        text.remove(QLatin1Char('&'));
        QVERIFY2(listed(text, a->shortcut().toString(QKeySequence::NativeText)), qPrintable(text));
    }
    QVERIFY(actions >= 15);
    for (const QAbstractButton* b : window.findChildren<QAbstractButton*>())
        if (!b->shortcut().isEmpty())
            QVERIFY2(listed(b->text().remove(QLatin1Char('&')),
                            b->shortcut().toString(QKeySequence::NativeText)),
                     qPrintable(b->text()));
    for (const ShortcutRow& r : MainWindow::timelineKeys())
        QVERIFY2(rows.contains(r), qPrintable(r.action));

    // Help > Keyboard Shortcuts shows exactly these rows.
    QCOMPARE(rowsShownByHelp(window), rows);

    QStringList names;
    for (const ShortcutRow& r : rows)
        names << r.where + QLatin1String(": ") + r.action + QLatin1String(" = ") + r.keys;
    for (const char* expected :
         {"File: Open Folder… = Ctrl+O", "View: Find = Ctrl+F", "Help: Keyboard Shortcuts = F1",
          "Walkthrough: Next step = Alt+Down", "Logs: Next cited = F3",
          "Investigation notes: Rename Bookmark = F2", "Investigation notes: Remove Bookmark = Del",
          "Timeline: Pan left / right = A / D", "Timeline: Measure a time range = Shift+drag",
          "Issues: Classify the pasted text = Ctrl+Return"})
        QVERIFY2(names.contains(QString::fromUtf8(expected)),
                 qPrintable(QString::fromUtf8(expected) + QLatin1String(" not in\n") +
                            names.join(QLatin1Char('\n'))));
}

// The Keyboard Shortcuts dialog opened too narrow: the Shortcut column sat behind a horizontal
// scrollbar and its keys were elided ("click / drag in…"). It opens on the screen, showing every
// cell's whole text without sideways scrolling; the offscreen screen (800 x 600) is smaller than
// the 1280 x 800 one the dialog was first seen on.
void TestMainWindow::shortcutDialogShowsEveryColumnWhole()
{
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QAction* help = shortcutsAction(window);
    QVERIFY(help);
    QStringList problems;
    int rowsChecked = 0;
    QTimer::singleShot(0, &window, [&] {
        QWidget* dialog = QApplication::activeModalWidget();
        auto* table =
            dialog ? dialog->findChild<QTableWidget*>(QStringLiteral("shortcutTable")) : nullptr;
        if (!table) {
            problems << QStringLiteral("no shortcut table");
            if (dialog) dialog->close();
            return;
        }
        const QRect screen = dialog->screen()->availableGeometry();
        if (dialog->frameGeometry().width() > screen.width())
            problems << QStringLiteral("dialog %1 px wide on a %2 px screen")
                            .arg(dialog->frameGeometry().width())
                            .arg(screen.width());
        if (table->horizontalScrollBar()->maximum() > 0)
            problems << QStringLiteral("scrolls sideways by %1 px")
                            .arg(table->horizontalScrollBar()->maximum());
        // An item view elides a cell's text unless the cell holds its advance plus the style's
        // text margin on each side.
        const int margin =
            2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, table) + 1);
        const QFontMetrics metrics(table->font());
        // The places and the keys are whole on one line; an action may wrap onto more lines.
        for (int r = 0; r < table->rowCount(); ++r, ++rowsChecked)
            for (int c = 0; c < table->columnCount(); ++c) {
                const QString text = table->item(r, c)->text();
                const int needed = metrics.horizontalAdvance(text) + margin;
                if (c != 1 && table->columnWidth(c) < needed)
                    problems << QStringLiteral("\"%1\" needs %2 px, has %3")
                                    .arg(text)
                                    .arg(needed)
                                    .arg(table->columnWidth(c));
                const int lines =
                    c == 1 ? metrics
                                 .boundingRect(QRect(0, 0, table->columnWidth(c) - margin,
                                                     table->rowHeight(r) * 10),
                                               Qt::TextWordWrap, text)
                                 .height()
                           : metrics.height();
                if (table->rowHeight(r) < lines)
                    problems << QStringLiteral("\"%1\" needs %2 px of height, has %3")
                                    .arg(text)
                                    .arg(lines)
                                    .arg(table->rowHeight(r));
            }
        dialog->close();
    });
    help->trigger();
    QVERIFY2(rowsChecked >= 15, qPrintable(QString::number(rowsChecked)));
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
}

// Each key the shortcut list names for the timeline does what the list says there.
void TestMainWindow::timelineKeysDoWhatTheListSays()
{
    MainWindow window;
    // Short enough that the example's ranks overflow the lanes (below).
    QVERIFY(showAndLoad(window, kExample, {1280, 600}));
    window.pages()->setCurrentWidget(window.timeline());
    TimelineView* view = window.timeline()->view();
    ZoomState& zoom = view->zoom();
    const qint64 t0 = zoom.traceStartNs(), t1 = zoom.traceEndNs();
    const qint64 mid = (t0 + t1) / 2, span = (t1 - t0) / 10;
    const auto middle = [&] { view->setVisibleRange(mid - span, mid + span); };
    const auto visible = [&] { return zoom.visibleEndNs() - zoom.visibleStartNs(); };
    view->setFindText(QStringLiteral("aten::as_strided"));
    QTRY_VERIFY(view->findHitCount() >= 3);
    const QString timeline = QStringLiteral("Timeline");
    const QString findField = QStringLiteral("Timeline find field");
    QWidget* vp = view->viewport();
    const QPoint centre(vp->width() / 2, vp->height() / 2);
    const auto wheel = [vp](QPoint at, Qt::KeyboardModifiers modifiers, int delta) {
        QWheelEvent e(QPointF(at), vp->mapToGlobal(QPointF(at)), {}, {0, delta}, Qt::NoButton,
                      modifiers, Qt::NoScrollPhase, false);
        QApplication::sendEvent(vp, &e);
    };
    const auto drag = [vp](QPoint from, QPoint to, Qt::KeyboardModifiers modifiers) {
        QTest::mousePress(vp, Qt::LeftButton, modifiers, from);
        QMouseEvent move(QEvent::MouseMove, to, vp->mapToGlobal(to), Qt::NoButton, Qt::LeftButton,
                         modifiers);
        QApplication::sendEvent(vp, &move);
        QTest::mouseRelease(vp, Qt::LeftButton, modifiers, to);
    };
    // Scrolls down from the top: the ranks move, the time range does not.
    const auto wheelScrollsRanksOnly = [&](QPoint at, Qt::KeyboardModifiers modifiers) {
        middle();
        const qint64 before = visible();
        QScrollBar* ranks = view->verticalScrollBar();
        ranks->setValue(0);
        wheel(at, modifiers, -120);
        const bool scrolled = ranks->value() > 0 && visible() == before;
        ranks->setValue(0);
        return scrolled;
    };
    // The first point of the tracks, row by row, where `found` holds; (-1, -1) when none does.
    const auto findPoint = [vp](const std::function<bool(QPoint)>& found) {
        for (int y = TimelineView::kHeaderHeight; y < vp->height(); y += 2)
            for (int x = TimelineView::kLabelWidth; x < vp->width(); x += 4)
                if (found({x, y})) return QPoint(x, y);
        return QPoint(-1, -1);
    };
    const auto centreOfView = [&] { return (zoom.visibleStartNs() + zoom.visibleEndNs()) / 2; };
    const auto focusView = [&] {
        window.activateWindow();
        return QTest::qWaitForWindowActive(&window);
    };

    // Every level of every lane, so that the ranks overflow the view (compact lanes fit it).
    for (int lane = 0; lane < int(view->session()->events.lanes.size()); ++lane)
        if (view->layout().shownLevels(lane) < view->layout().levelCount(lane))
            view->setLaneToggled(lane, true);
    QVERIFY2(view->verticalScrollBar()->maximum() > 0, "the ranks must overflow, to be scrolled");
    for (const ShortcutRow& r : MainWindow::timelineKeys()) {
        const QByteArray what = (r.where + QLatin1String(": ") + r.keys).toUtf8();
        if (r.where == timeline && r.keys == QLatin1String("W / S")) {
            middle();
            const qint64 before = visible();
            QTest::keyClick(view, Qt::Key_W);
            QVERIFY2(visible() < before, what);
            QTest::keyClick(view, Qt::Key_S);
            QTest::keyClick(view, Qt::Key_S);
            QVERIFY2(visible() > before, what);
        } else if (r.where == timeline && r.keys == QLatin1String("A / D")) {
            middle();
            const qint64 start = zoom.visibleStartNs();
            QTest::keyClick(view, Qt::Key_A);
            QVERIFY2(zoom.visibleStartNs() < start, what);
            QTest::keyClick(view, Qt::Key_D);
            QTest::keyClick(view, Qt::Key_D);
            QVERIFY2(zoom.visibleStartNs() > start, what);
        } else if (r.where == timeline && r.keys == QLatin1String("F")) {
            middle();
            zoom.setSelection(mid, mid + span / 2);
            QTest::keyClick(view, Qt::Key_F);
            QVERIFY2(zoom.visibleStartNs() == mid && visible() == span / 2, what);
            zoom.clearSelection();
            view->select({});
            QTest::keyClick(view, Qt::Key_F);
            QVERIFY2(visible() >= (t1 - t0) * 9 / 10, what);
        } else if (r.where == timeline && r.keys == QLatin1String("wheel")) {
            middle();
            const qint64 before = visible();
            wheel(centre, Qt::NoModifier, 120);
            QVERIFY2(visible() < before, what);
        } else if (r.where == timeline && r.keys == QLatin1String("Shift+wheel")) {
            QVERIFY2(wheelScrollsRanksOnly(centre, Qt::ShiftModifier), what);
        } else if (r.where == timeline && r.keys == QLatin1String("wheel over the names")) {
            QVERIFY2(
                wheelScrollsRanksOnly({TimelineView::kLabelWidth / 2, centre.y()}, Qt::NoModifier),
                what);
        } else if (r.where == timeline && r.keys == QLatin1String("drag")) {
            middle();
            const qint64 start = zoom.visibleStartNs();
            drag(centre, centre - QPoint(vp->width() / 5, 0), Qt::NoModifier);
            QVERIFY2(zoom.visibleStartNs() > start, what);
        } else if (r.where == timeline && r.keys == QLatin1String("Shift+drag")) {
            middle();
            drag(centre, centre + QPoint(vp->width() / 5, 0), Qt::ShiftModifier);
            QVERIFY2(zoom.hasSelection(), what);
            QVERIFY2(zoom.selectionEndNs() > zoom.selectionStartNs(), what);
        } else if (r.where == timeline && r.keys == QLatin1String("click")) {
            middle();
            const QPoint at = findPoint([&](QPoint p) { return view->hitTest(p).isValid(); });
            QVERIFY2(at.x() >= 0, "no event in the middle of the example");
            view->select({});
            QTest::mouseClick(vp, Qt::LeftButton, {}, at);
            QVERIFY2(view->selected().isValid() && view->selected() == view->hitTest(at), what);
        } else if (r.where == timeline && r.keys == QLatin1String("click a rank name")) {
            view->verticalScrollBar()->setValue(0);
            QSet<int> ranks;
            for (const Lane& lane : window.session()->events.lanes)
                ranks.insert(lane.rank);
            const auto folded = [&] {
                return int(std::count_if(ranks.begin(), ranks.end(),
                                         [&](int rank) { return view->isRankCollapsed(rank); }));
            };
            QCOMPARE(folded(), 0);
            // The first rank's name heads the content.
            const QPoint name(TimelineView::kLabelWidth / 2,
                              TimelineView::kHeaderHeight + TimelineView::kRankHeaderHeight / 2);
            QTest::mouseClick(vp, Qt::LeftButton, {}, name);
            QVERIFY2(folded() == 1, what);
            QTest::mouseClick(vp, Qt::LeftButton, {}, name);
            QVERIFY2(folded() == 0, what);
        } else if (r.where == timeline && r.keys == QLatin1String("click a marker")) {
            view->setVisibleRange(t0, t1);
            const QPoint at = findPoint([&](QPoint p) { return view->markerAt(p) >= 0; });
            QVERIFY2(at.x() >= 0, "the example's findings draw no marker");
            const QString id = view->markers()[view->markerAt(at)].id;
            window.findingsPanel()->table()->setCurrentIndex({});
            QTest::mouseClick(vp, Qt::LeftButton, {}, at);
            const Finding* shown = window.findingsPanel()->currentFinding();
            QVERIFY2(shown && QString::fromStdString(shown->id) == id, what);
        } else if (r.where == timeline && r.keys == QLatin1String("click / drag in the overview")) {
            middle();
            const int y = TimelineView::kOverviewHeight / 2;
            const auto xAt = [&](int percent) {
                return TimelineView::kLabelWidth + view->trackWidth() * percent / 100;
            };
            const qint64 pixel = (t1 - t0) / view->trackWidth() + 1;
            QTest::mouseClick(vp, Qt::LeftButton, {}, {xAt(30), y});
            QVERIFY2(std::abs(centreOfView() - (t0 + (t1 - t0) * 30 / 100)) <= pixel, what);
            drag({xAt(30), y}, {xAt(60), y}, Qt::NoModifier);
            QVERIFY2(std::abs(centreOfView() - (t0 + (t1 - t0) * 60 / 100)) <= pixel, what);
        } else if (r.where == timeline && r.keys == QLatin1String("Ctrl+F")) {
            QVERIFY(focusView());
            view->setFocus();
            QTRY_VERIFY(view->hasFocus());
            QTest::keyClick(view, Qt::Key_F, Qt::ControlModifier);
            QTRY_VERIFY2(window.timeline()->findEdit()->hasFocus(), what);
        } else if (r.where == timeline && r.keys == QLatin1String("Esc")) {
            zoom.setSelection(mid, mid + span);
            QTest::keyClick(view, Qt::Key_Escape);
            QVERIFY2(!zoom.hasSelection(), what);
        } else if (r.keys == QLatin1String("Enter / Shift+Enter") &&
                   (r.where == timeline || r.where == findField)) {
            QWidget* target =
                r.where == timeline ? static_cast<QWidget*>(view) : window.timeline()->findEdit();
            view->findNext();
            const int at = view->currentFindHit();
            QTest::keyClick(target, Qt::Key_Return);
            QVERIFY2(view->currentFindHit() == (at + 1) % view->findHitCount(), what);
            QTest::keyClick(target, Qt::Key_Return, Qt::ShiftModifier);
            QVERIFY2(view->currentFindHit() == at, what);
        } else if (r.where == findField && r.keys == QLatin1String("Esc")) {
            QVERIFY(focusView());
            window.timeline()->showFindBar();
            QTRY_VERIFY(window.timeline()->findEdit()->hasFocus());
            QTest::keyClick(window.timeline()->findEdit(), Qt::Key_Escape);
            QTRY_VERIFY2(view->hasFocus(), what);
        } else if (r.where == timeline && r.action.startsWith(QLatin1String("Rank overview:"))) {
            RankOverview* overview = window.timeline()->rankOverview();
            QTRY_VERIFY(overview->activity());
            RankOverviewCanvas* canvas = overview->canvas();
            const RankOverviewLayout& rows = canvas->layout();
            QVERIFY(rows.ranks().size() >= 2);
            const int r0 = rows.ranks()[0], r1 = rows.ranks()[1];
            const int left = canvas->trackLeft();
            const QPoint row0(left + 10, rows.yForRank(r0)), row1(left + 10, rows.yForRank(r1));
            const auto press = [canvas](QPoint from, QPoint to, Qt::KeyboardModifiers mods = {}) {
                QTest::mousePress(canvas, Qt::LeftButton, mods, from);
                QMouseEvent move(QEvent::MouseMove, to, canvas->mapToGlobal(to), Qt::NoButton,
                                 Qt::LeftButton, mods);
                QApplication::sendEvent(canvas, &move);
                QTest::mouseRelease(canvas, Qt::LeftButton, mods, to);
            };
            const auto brushed = [&] { return canvas->selectedRanks(); };
            canvas->setSelectedRanks({});
            if (r.keys == QLatin1String("click a rank row")) {
                press(row0, row0);
                QVERIFY2(brushed() == std::vector<int>{r0}, what);
                QVERIFY2(view->layout().ranks() == std::vector<int>{r0}, what);
                press(row0, row0);
                QVERIFY2(brushed().empty(), what);
            } else if (r.keys == QLatin1String("Shift+click a rank row")) {
                press(row0, row0);
                press(row1, row1, Qt::ShiftModifier);
                QVERIFY2((brushed() == std::vector<int>{r0, r1}), what);
            } else if (r.keys == QLatin1String("Ctrl+click a rank row")) {
                press(row0, row0);
                press(row1, row1, Qt::ControlModifier);
                QVERIFY2((brushed() == std::vector<int>{r0, r1}), what);
                press(row1, row1, Qt::ControlModifier);
                QVERIFY2(brushed() == std::vector<int>{r0}, what);
            } else if (r.keys == QLatin1String("drag down the rank numbers")) {
                press({left / 2, row0.y()}, {left / 2, row1.y()});
                QVERIFY2((brushed() == std::vector<int>{r0, r1}), what);
            } else if (r.keys == QLatin1String("drag across the rank rows")) {
                view->setVisibleRange(t0, t1);
                const int w = view->trackWidth();
                press({left + w * 3 / 10, row0.y()}, {left + w * 6 / 10, row0.y()});
                QVERIFY2(visible() < (t1 - t0) / 2 && zoom.visibleStartNs() > t0, what);
                QVERIFY2(brushed().empty(), what);
            } else if (r.keys == QLatin1String("Esc / click above the rows")) {
                press(row0, row0);
                canvas->setFocus();
                QTest::keyClick(canvas, Qt::Key_Escape);
                QVERIFY2(brushed().empty(), what);
                press(row0, row0);
                press({left + 10, 2}, {left + 10, 2});
                QVERIFY2(brushed().empty() && view->rankFilter().isEmpty(), what);
            } else if (r.keys == QLatin1String("Order box")) {
                overview->orderBox()->setCurrentIndex(1);
                QVERIFY2(overview->order() == RankOverview::Order::Lateness, what);
                overview->orderBox()->setCurrentIndex(0);
                QVERIFY2(overview->order() == RankOverview::Order::Rank, what);
            } else {
                QFAIL(QByteArray(what + " has no check here: add one, so the list stays true"));
            }
            canvas->setSelectedRanks({});
        } else {
            QFAIL(QByteArray(what + " has no check here: add one, so the list stays true"));
        }
    }
}

// The timeline's keys and gestures are one table: Help > Keyboard Shortcuts lists every entry,
// the tool row's hints show every entry of the view (the find field's placeholder its own), and
// Shift+wheel is among them.
void TestMainWindow::timelineBindingsAreInHelpAndTheHints()
{
    MainWindow window;
    const QList<ShortcutRow> help = rowsShownByHelp(window);
    KeyHintLabel* hints = window.timeline()->keyHints();
    const QStringList hinted = hints->toolTip().split(QLatin1Char('\n'));
    const QString placeholder = window.timeline()->findEdit()->placeholderText();
    int inView = 0;
    bool shiftWheel = false;
    for (const TimelineBinding& b : TimelinePanel::bindings()) {
        const bool view = b.place == TimelineBinding::Place::View;
        const ShortcutRow row{view ? QStringLiteral("Timeline")
                                   : QStringLiteral("Timeline find field"),
                              b.action, b.keys};
        QVERIFY2(help.contains(row), qPrintable(row.where + QLatin1String(": ") + b.keys));
        QVERIFY2(view ? hinted.contains(b.hintText()) : placeholder.contains(b.hintText()),
                 qPrintable(b.hintText()));
        inView += view;
        shiftWheel |= view && b.keys == QLatin1String("Shift+wheel");
    }
    QVERIFY(shiftWheel);
    QCOMPARE(hinted.size(), inView);
    // Given the room, the tool row shows every hint.
    hints->resize(hints->sizeHint());
    QCOMPARE(hints->shownText(), hinted.join(QStringLiteral(" · ")));
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
        window.issueBrowser()->table()->sortByColumn(IssueTableModel::LeafColumn,
                                                     Qt::DescendingOrder);
        QVERIFY(window.close());
    }
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.taxonomyBrowser()->currentNodeId(), leaf);
    // The Issues tab sorts as it did (its corpus opens when the tab is first shown).
    QCOMPARE(window.issueBrowser()->model()->sortColumn(), int(IssueTableModel::LeafColumn));
    QCOMPARE(window.issueBrowser()->model()->sortOrder(), Qt::DescendingOrder);
    QVERIFY(!window.findChild<QDockWidget*>(QStringLiteral("filesDock"))->isVisible());
    window.pages()->setCurrentWidget(window.taxonomyBrowser());
    QCOMPARE(window.taxonomyBrowser()->findChild<QSplitter*>()->sizes(), sizes);
    window.findChild<QDockWidget*>(QStringLiteral("filesDock"))->show();
    window.issueBrowser()->table()->sortByColumn(-1, Qt::AscendingOrder);
    QVERIFY(window.close());
}

void TestMainWindow::findingsDockAndTimelineShowTheDiagnosis()
{
    MainWindow window;
    QVERIFY(showAndLoad(window, kExample, {1600, 1000}));

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
        if (model->finding(row)->kind == FindingKind::Hang) hang = row;
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

// Export Report, Merged Chrome Trace and PNG: the dialogs start in the user's documents (not in
// the folder a bare file name would mean after `cd run && rankscope .`), and a path inside the
// opened folder, a subfolder, or a link into it is refused with a message, nothing written.
void TestMainWindow::exportsStartInDocumentsAndNeverWriteIntoTheFolder()
{
    QTemporaryDir copy, out;
    QVERIFY(copyExample(copy));
    QVERIFY(QFile::link(copy.path(), out.filePath(QStringLiteral("link-to-job"))));
    MainWindow window;
    QVERIFY(showAndLoad(window, copy.path()));
    const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString start =
        !documents.isEmpty() && QFileInfo(documents).isDir() ? documents : QDir::homePath();
    QCOMPARE(window.exportStartPath(QStringLiteral("r.html")),
             QDir(start).filePath(QStringLiteral("r.html")));
    const QStringList before = QDir(copy.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
    using Export = bool (MainWindow::*)(const QString&, QString*);
    for (const Export exportTo : {&MainWindow::exportReport, &MainWindow::exportChromeTrace,
                                  &MainWindow::exportTimelinePng, &MainWindow::exportTimelineSvg}) {
        for (const QString& inside : {copy.filePath(QStringLiteral("out.file")),
                                      copy.filePath(QStringLiteral("new/out.file")),
                                      out.filePath(QStringLiteral("link-to-job/out.file"))}) {
            QString error;
            QVERIFY((window.*exportTo)(inside, &error) == false);
            QVERIFY2(error.contains(QLatin1String("inside the opened folder")), qPrintable(error));
        }
        QString error;
        const QString outside = out.filePath(
            QStringLiteral("export.%1")
                .arg(exportTo == &MainWindow::exportTimelinePng   ? QStringLiteral("png")
                     : exportTo == &MainWindow::exportTimelineSvg ? QStringLiteral("svg")
                                                                  : QStringLiteral("json")));
        QVERIFY2((window.*exportTo)(outside, &error), qPrintable(error));
        QVERIFY(QFileInfo(outside).size() > 0);
    }
    QCOMPARE(QDir(copy.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), before);
}

// A second window on the same investigation (as a second RankScope would be) shows what the
// first saved and cannot overwrite it: its notes are read-only and the status line says why.
void TestMainWindow::aSecondWindowOpensTheInvestigationReadOnly()
{
    QTemporaryDir copy;
    QVERIFY(copyExample(copy));
    MainWindow first;
    QVERIFY(showAndLoad(first, copy.path()));
    auto* notes = first.findChild<QPlainTextEdit*>(QStringLiteral("investigationNotes"));
    QVERIFY(notes);
    QVERIFY(!notes->isReadOnly());
    MainWindow second;
    QVERIFY(showAndLoad(second, copy.path()));
    auto* secondNotes = second.findChild<QPlainTextEdit*>(QStringLiteral("investigationNotes"));
    QVERIFY(secondNotes);
    QVERIFY(secondNotes->isReadOnly());
    QVERIFY(second.statusBar()->findChild<QLabel*>());
    bool said = false;
    for (const QLabel* label : second.statusBar()->findChildren<QLabel*>())
        said = said || label->text().contains(QLatin1String("read-only"));
    QVERIFY(said);
}

// The main flow with the user's inputs: open the example, select a finding, "Fix it", tick a
// step, write a note, bookmark the timeline, export the report; close; reopen: all is back.
void TestMainWindow::mainFlowFromFindingToChecklistSurvivesReopening()
{
    QTemporaryDir copy;
    QVERIFY(copyExample(copy));
    QString pattern;
    int step = -1;
    {
        MainWindow window;
        QVERIFY(showAndLoad(window, copy.path()));
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
    QVERIFY(showAndLoad(window, copy.path()));
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
        QVERIFY(showAndLoad(window, kExample, {1600, 1000}));
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

// F2 (or the context menu's Rename) edits a bookmark's label in place, Delete (or Remove) drops
// it; both are in the investigation database when the folder is opened again.
void TestMainWindow::bookmarksAreRenamedAndRemovedFromTheList()
{
    QTemporaryDir copy;
    QVERIFY(copyExample(copy));
    qint64 renamedId = -1;
    {
        MainWindow window;
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QVERIFY(load(window, copy.path()));
        TimelineView* view = window.timeline()->view();
        const qint64 start = view->zoom().traceStartNs();
        view->setVisibleRange(start, start + 1'000'000);
        renamedId = window.bookmarkTimelineRange();
        view->setVisibleRange(start + 2'000'000, start + 3'000'000);
        QVERIFY(window.bookmarkTimelineRange() > 0);
        QListWidget* list = window.bookmarkList();
        QCOMPARE(list->count(), 2);

        auto* rename = window.findChild<QAction*>(QStringLiteral("actionRenameBookmark"));
        auto* remove = window.findChild<QAction*>(QStringLiteral("actionRemoveBookmark"));
        QVERIFY(rename && remove);
        // Both are the list's context menu.
        QCOMPARE(list->contextMenuPolicy(), Qt::ActionsContextMenu);
        QVERIFY(list->actions().contains(rename) && list->actions().contains(remove));
        QVERIFY(!rename->isEnabled()); // nothing selected yet

        if (auto* dock = window.findChild<QDockWidget*>(QStringLiteral("notesDock"))) {
            dock->show();
            dock->raise();
        }
        list->setCurrentRow(0);
        QVERIFY(rename->isEnabled());
        list->setFocus();
        QTRY_VERIFY(list->hasFocus());
        QTest::keyClick(list, Qt::Key_F2);
        auto* editor = qobject_cast<QLineEdit*>(QApplication::focusWidget());
        QVERIFY(editor);
        editor->selectAll();
        QTest::keyClicks(editor, QStringLiteral("rank 2 enters the barrier late"));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_COMPARE(list->item(0)->text(), QStringLiteral("rank 2 enters the barrier late"));
        QCOMPARE(window.investigations()->bookmarks(window.investigationId()).at(0).label,
                 QStringLiteral("rank 2 enters the barrier late"));

        // A blank name is not stored: the old one comes back.
        list->setCurrentRow(1);
        const QString second = list->item(1)->text();
        list->item(1)->setText(QStringLiteral("   "));
        QCOMPARE(list->item(1)->text(), second);

        list->setFocus();
        QTRY_VERIFY(list->hasFocus());
        QTest::keyClick(list, Qt::Key_Delete);
        QCOMPARE(list->count(), 1);
        // Nothing is current after the removal: nothing to rename or remove.
        QVERIFY(!list->currentItem());
        QVERIFY(!rename->isEnabled() && !remove->isEnabled());
        QVERIFY(window.close());
    }
    MainWindow window;
    QVERIFY(load(window, copy.path()));
    QCOMPARE(window.bookmarkList()->count(), 1);
    QCOMPARE(window.bookmarkList()->item(0)->text(),
             QStringLiteral("rank 2 enters the barrier late"));
    QCOMPARE(window.bookmarkList()->item(0)->data(Qt::UserRole + 2).toLongLong(), renamedId);
}

namespace {

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    p.setColor(QPalette::Highlight, QColor(0x2a, 0x6f, 0xb8));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xb4, 0xff));
    p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x90, 0xff));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x80, 0x80, 0x80));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x80, 0x80, 0x80));
    return p;
}

// Share of a widget's area painted as solid light patches (6x6 px blocks with no dark pixel):
// a pane keeping a light background in a dark palette shows up here, light text does not.
double lightShare(QWidget* w, const QString& name)
{
    QTest::qWait(50); // the charts lay themselves out on later events
    const QImage img = w->grab().toImage().convertToFormat(QImage::Format_RGB32);
    img.save(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/dark-%1.png").arg(name));
    constexpr int kBlock = 6;
    qint64 blocks = 0, light = 0;
    for (int by = 0; by + kBlock <= img.height(); by += kBlock)
        for (int bx = 0; bx + kBlock <= img.width(); bx += kBlock) {
            ++blocks;
            bool solid = true;
            for (int y = by; y < by + kBlock && solid; ++y) {
                const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
                for (int x = bx; x < bx + kBlock && solid; ++x)
                    solid = qGray(line[x]) > 200;
            }
            light += solid;
        }
    return blocks ? double(light) / double(blocks) : 0;
}

} // namespace

// With a dark palette every page and dock is dark: no pane keeps a light background and no
// text is drawn in a colour of its own that needs one. The grabs are kept as dark-*.png.
void TestMainWindow::darkPaletteLeavesNoLightPane()
{
    const QPalette light = QApplication::palette();
    const QString style = QApplication::style()->name();
    QApplication::setStyle(QStringLiteral("Fusion"));
    QApplication::setPalette(darkPalette());
    const auto restore = qScopeGuard([&] {
        QApplication::setPalette(light);
        QApplication::setStyle(style);
    });
    qputenv("RANKSCOPE_DB", m_db.filePath(QStringLiteral("dark-issues.sqlite")).toUtf8());
    MainWindow window;
    window.resize(1600, 1000);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.startPage()->isVisible());
    QVERIFY2(lightShare(&window, QStringLiteral("startpage")) < 0.01, "start page");

    QVERIFY(load(window, kExample));
    QVERIFY2(lightShare(&window, QStringLiteral("overview")) < 0.01, "overview");

    FindingsPanel* findings = window.findingsPanel();
    int row = -1;
    for (int r = 0; r < findings->model()->rowCount() && row < 0; ++r)
        if (!findings->model()->finding(r)->fixPatterns.empty()) row = r;
    QVERIFY(row >= 0);
    findings->selectFinding(row);
    QTest::mouseClick(findings->fixButton(), Qt::LeftButton);
    QTRY_VERIFY(window.walkthroughPanel()->isVisible());
    QVERIFY2(lightShare(findings, QStringLiteral("findings")) < 0.01, "findings");
    QVERIFY2(lightShare(window.walkthroughPanel(), QStringLiteral("walkthrough")) < 0.01,
             "walkthrough");

    QTest::mouseClick(findings->evidenceButton(), Qt::LeftButton);
    QTRY_COMPARE(window.pages()->currentWidget(), static_cast<QWidget*>(window.logViewer()));
    QVERIFY2(lightShare(window.logViewer(), QStringLiteral("logs")) < 0.01, "logs");

    window.pages()->setCurrentWidget(window.taxonomyBrowser());
    QVERIFY(window.taxonomyBrowser()->selectNode(
        QStringLiteral("training-and-evaluation/unexpected-performance/hang")));
    QVERIFY2(lightShare(window.taxonomyBrowser(), QStringLiteral("taxonomy")) < 0.01, "taxonomy");

    window.pages()->setCurrentWidget(window.issueBrowser());
    QTRY_VERIFY(window.issueBrowser()->model()->rowCount() > 0);
    QVERIFY2(lightShare(window.issueBrowser(), QStringLiteral("issues")) < 0.01, "issues");
    qunsetenv("RANKSCOPE_DB");
}

// Opening another folder never leaves the previous folder's checklist: the Walkthrough shows
// the fix the new folder's headline finding calls for.
void TestMainWindow::walkthroughFollowsTheFolder()
{
    MainWindow window;
    QVERIFY(showAndLoad(window, QStringLiteral(RANKSCOPE_TEST_DATA "/traces/nan_loss_w3")));
    const QString nanFix =
        QString::fromStdString(window.session()->analysis.findings.front().fixPatterns.front());
    QCOMPARE(window.walkthroughPanel()->patternId(), nanFix);
    QVERIFY(load(window, QStringLiteral(RANKSCOPE_TEST_DATA "/traces/setup_failure")));
    const Finding& setup = window.session()->analysis.findings.front();
    QCOMPARE(window.walkthroughPanel()->patternId(),
             QString::fromStdString(setup.fixPatterns.front()));
    QVERIFY(window.walkthroughPanel()->patternId() != nanFix);
    QVERIFY(window.walkthroughPanel()->reasonLabel()->text().contains(
        QString::fromStdString(setup.fixReason).toHtmlEscaped()));
    // A folder without findings has no checklist to follow.
    QVERIFY(load(window, QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy")));
    QVERIFY(window.walkthroughPanel()->patternId().isEmpty());
}

// Nothing readable is said as such, with why, never as "no errors or warnings".
void TestMainWindow::emptyFolderIsNotAHealthyOne()
{
    const auto pageText = [](MainWindow& window) {
        QString text;
        for (QTextBrowser* b : window.findChildren<QTextBrowser*>())
            text += b->toPlainText() + QLatin1Char('\n');
        return text;
    };
    QTemporaryDir empty;
    MainWindow window;
    QVERIFY(showAndLoad(window, empty.path()));
    QString text = pageText(window);
    QVERIFY2(text.contains(QLatin1String("Nothing readable in this folder: the folder holds no "
                                         "files")),
             qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("No errors or warnings found")), qPrintable(text));
    // A file that cannot be read is named, with its reader's reason.
    QTemporaryDir broken;
    QFile junk(broken.filePath(QStringLiteral("rank0.pt.trace.json.gz")));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write(QByteArray("\x1f\x8b\x08\x00junk", 8));
    junk.close();
    QVERIFY(load(window, broken.path()));
    text = pageText(window);
    QVERIFY2(text.contains(QLatin1String("Nothing readable in this folder: none of its 1 file "
                                         "could be read: rank0.pt.trace.json.gz: ")),
             qPrintable(text));
    // A healthy run is not "nothing readable".
    QVERIFY(load(window, QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy")));
    text = pageText(window);
    QVERIFY2(text.contains(QLatin1String("No errors or warnings found")), qPrintable(text));
    QVERIFY2(!text.contains(QLatin1String("Nothing readable")), qPrintable(text));
}

// File > Load Limits… sets the budget the next load reads up to, keeps it for the next window,
// and the Files dock names the limit that truncated a file and how to raise it.
void TestMainWindow::loadLimitsTruncateAndSaySo()
{
    const auto restore = qScopeGuard([] { LoadLimitsDialog::save(ReadOptions{}); });
    // A trace of 5000 complete events on one thread, rank 0.
    constexpr int kEvents = 5000;
    QTemporaryDir dir;
    QFile trace(dir.filePath(QStringLiteral("rank0.pt.trace.json")));
    QVERIFY(trace.open(QIODevice::WriteOnly));
    trace.write(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)");
    for (int i = 0; i < kEvents; ++i)
        trace.write(QStringLiteral(R"(%1{"ph": "X", "name": "op", "ts": %2, "dur": 1, )"
                                   R"("pid": 1, "tid": 1})")
                        .arg(i ? QStringLiteral(",") : QString())
                        .arg(i * 2)
                        .toUtf8());
    trace.write("]}");
    trace.close();

    const auto statusOfTrace = [](const MainWindow& window, int role) {
        const QAbstractItemModel* model = window.sourceTree()->model();
        const QModelIndex rank0 = model->index(0, 0);
        return model->index(0, SourceTreeModel::StatusColumn, rank0).data(role).toString();
    };
    {
        MainWindow window;
        QVERIFY(showAndLoad(window, dir.path()));
        QCOMPARE(statusOfTrace(window, Qt::DisplayRole), QStringLiteral("ok"));
        // 1000 events a trace file, set in the dialog as the user would.
        QAction* limits = window.findChild<QAction*>(QStringLiteral("actionLoadLimits"));
        QVERIFY(limits);
        bool edited = false;
        QTimer::singleShot(0, &window, [&edited] {
            auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
            auto* events = dialog
                               ? dialog->findChild<QDoubleSpinBox*>(QStringLiteral("traceEvents"))
                               : nullptr;
            if (!events) return;
            events->setValue(0.001);
            edited = true;
            dialog->accept();
        });
        limits->trigger();
        QVERIFY(edited);
        QVERIFY(load(window, dir.path()));
        QCOMPARE(statusOfTrace(window, Qt::DisplayRole),
                 QStringLiteral("truncated: limit of events per trace file"));
        const QString tip = statusOfTrace(window, Qt::ToolTipRole);
        QVERIFY2(tip.contains(QLatin1String("1000 events")), qPrintable(tip));
        QVERIFY2(tip.contains(QLatin1String("File > Load Limits")), qPrintable(tip));
        QVERIFY2(tip.contains(QLatin1String("--max-trace-events")), qPrintable(tip));
        QCOMPARE(window.session()->events.eventCount(), std::int64_t(1000));
    }
    // Kept for the next window; with the defaults back, the whole file is read again.
    {
        MainWindow window;
        QVERIFY(showAndLoad(window, dir.path()));
        QCOMPARE(statusOfTrace(window, Qt::DisplayRole),
                 QStringLiteral("truncated: limit of events per trace file"));
        LoadLimitsDialog::save(ReadOptions{});
    }
    MainWindow window;
    QVERIFY(showAndLoad(window, dir.path()));
    QCOMPARE(statusOfTrace(window, Qt::DisplayRole), QStringLiteral("ok"));
    QCOMPARE(window.session()->events.eventCount(), std::int64_t(kEvents));
}

// A report written before the findings exist would read as "no fault found": Export Report is
// refused while the diagnosis runs and after it was cancelled, and says why. The folder's logs
// are long enough (300k lines each) that the diagnosis is still scanning them when the read
// stage reaches the window and the test cancels it.
void TestMainWindow::exportReportWaitsForTheDiagnosis()
{
    QTemporaryDir folder, out;
    QVERIFY(folder.isValid() && out.isValid());
    for (int rank = 0; rank < 2; ++rank) {
        QFile log(folder.filePath(QStringLiteral("rank%1.log").arg(rank)));
        QVERIFY(log.open(QIODevice::WriteOnly));
        QByteArray text;
        for (int i = 0; i < 300000; ++i)
            text += "2026-12-02 13:41:15.717 [rank" + QByteArray::number(rank) +
                    "] INFO train: step " + QByteArray::number(i) + " loss 1.5 avg_loss 1.5\n";
        log.write(text);
    }
    const QString report = out.filePath(QStringLiteral("report.html"));
    MainWindow window;
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QString whileRunning;
    bool refusedWhileRunning = false;
    // Connected after the window's own handler: it runs once the window shows the read folder.
    connect(window.loader(), &TraceLoader::read, &window, [&] {
        refusedWhileRunning = !window.exportReport(report, &whileRunning);
        window.loader()->cancel();
    });
    QSignalSpy canceled(window.loader(), &TraceLoader::canceled);
    QSignalSpy loaded(window.loader(), &TraceLoader::loaded);
    window.openFolder(folder.path());
    QTRY_VERIFY_WITH_TIMEOUT(canceled.count() + loaded.count() > 0, 60000);
    QVERIFY(refusedWhileRunning);
    QVERIFY2(whileRunning.contains(QLatin1String("still running")), qPrintable(whileRunning));
    QVERIFY(!QFile::exists(report));
    if (canceled.isEmpty())
        QSKIP("the diagnosis finished before the cancel reached it: the cancelled case was not "
              "exercised");
    QString afterCancel;
    QVERIFY(!window.exportReport(report, &afterCancel));
    QVERIFY2(afterCancel.contains(QLatin1String("cancelled")), qPrintable(afterCancel));
    QVERIFY(!QFile::exists(report));
}

// A file that no rank claims is listed on the overview with the reason it has no rank, not only
// its name: rank_not_found.json.gz is a real trace whose distributedInfo carries no "rank" field.
void TestMainWindow::unattributedFilesSayWhyOnTheOverview()
{
    MainWindow window;
    QVERIFY(
        showAndLoad(window, QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-real-hta/mixed_files")));
    auto* overview = window.findChild<FolderOverview*>();
    QVERIFY(overview);
    const QString page = overview->toPlainText();
    const int section = page.indexOf(QLatin1String("Not attributed to a rank"));
    QVERIFY2(section >= 0, qPrintable(page));
    const int line = page.indexOf(QLatin1String("rank_not_found.json.gz (kineto): "), section);
    QVERIFY2(line > section, qPrintable(page));
    const QString reason = page.mid(line).section(QLatin1Char('\n'), 0, 0);
    QVERIFY2(reason.contains(QLatin1String("no rank")), qPrintable(reason));
    QVERIFY2(reason.contains(QLatin1String("distributedInfo")), qPrintable(reason));
}

// A PNG beside a rank's log and an empty log: the overview counts it apart, lists it greyed
// with what it is under "Skipped (not read)", not among the problems (the empty log is one) nor
// the files without a rank. A folder of that PNG alone has nothing readable.
void TestMainWindow::skippedFilesAreGreyedOnTheOverview()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("loss_curve.png")),
              QByteArray("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", 16));
    writeFile(dir.filePath(QStringLiteral("empty.log")), QByteArray());
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 1\n");
    MainWindow window;
    QVERIFY(showAndLoad(window, dir.path()));
    auto* overview = window.findChild<FolderOverview*>();
    QVERIFY(overview);
    const QString page = overview->toPlainText();
    QVERIFY2(page.contains(QLatin1String("3 files (1 skipped, not read)")), qPrintable(page));
    // The line of counts reads plainly: one rank in the singular, no parentheses inside
    // parentheses, where the world size is unknown (a log states none) and the files have their
    // own. The status bar counts as the overview does.
    const QString counts =
        page.mid(page.indexOf(QLatin1String("found, world size"))).section(QLatin1Char('\n'), 0, 0);
    QVERIFY2(page.contains(QLatin1String("1 rank found, world size unknown (at least 1), 3 files")),
             qPrintable(page));
    QVERIFY2(!page.contains(QLatin1String("1 ranks")), qPrintable(page));
    QStringList statusTexts;
    for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
        statusTexts << label->text();
    QVERIFY2(statusTexts.join(QLatin1Char('|')).contains(QLatin1String(": 1 rank, 3 files")),
             qPrintable(statusTexts.join(QLatin1Char('|'))));
    int depth = 0, deepest = 0;
    for (const QChar c : counts) {
        depth += c == QLatin1Char('(') ? 1 : c == QLatin1Char(')') ? -1 : 0;
        deepest = std::max(deepest, depth);
    }
    QVERIFY2(deepest == 1 && depth == 0, qPrintable(counts));
    const int skipped = page.indexOf(QLatin1String("Skipped (not read)"));
    const int problems = page.indexOf(QLatin1String("Problems"));
    const int unattributed = page.indexOf(QLatin1String("Not attributed to a rank"));
    QVERIFY2(skipped > problems && problems > unattributed && unattributed > 0, qPrintable(page));
    QCOMPARE(page.count(QLatin1String("loss_curve.png")), 1);
    QVERIFY2(page.indexOf(QLatin1String("loss_curve.png: binary data (starts 0x89 0x50 0x4e "
                                        "0x47)")) > skipped,
             qPrintable(page));
    const int emptyLog = page.indexOf(QLatin1String("empty.log: empty file"));
    QVERIFY2(emptyLog > problems && emptyLog < skipped, qPrintable(page));
    const QTextCursor grey = overview->document()->find(QStringLiteral("loss_curve.png"));
    QVERIFY(!grey.isNull());
    QCOMPARE(grey.charFormat().foreground().color(), SourceTreeModel::kSkippedColor);
    const QTextCursor plain = overview->document()->find(QStringLiteral("empty.log: empty file"));
    QVERIFY(!plain.isNull());
    QVERIFY(plain.charFormat().foreground().color() != SourceTreeModel::kSkippedColor);

    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("empty.log"))));
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("rank0.log"))));
    QVERIFY(load(window, dir.path()));
    QTRY_VERIFY2(overview->toPlainText().contains(QLatin1String("Nothing readable in this folder")),
                 qPrintable(overview->toPlainText()));
}

// Two real runs side by side in one flat folder: the healthy 2-rank run as a_*, the 3-rank
// straggler run as b_* (each with its own launcher port). The status bar counts the ranks of the
// run the diagnosis analyses (the one with more ranks), as the Overview's first table lists them,
// not the 5 rank logs of the folder. Truth from the copied files' names.
void TestMainWindow::statusBarCountsTheAnalysedJobsRanks()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    QTemporaryDir dir;
    std::map<QString, std::set<QString>> rankFilesByPrefix;
    for (const auto& [run, prefix] :
         {std::pair{QStringLiteral("healthy"), QStringLiteral("a_")},
          std::pair{QStringLiteral("straggler"), QStringLiteral("b_")}}) {
        for (const QString& name : QDir(data + run).entryList(QDir::Files)) {
            QVERIFY(QFile::copy(data + run + u'/' + name, dir.filePath(prefix + name)));
            if (name.startsWith(QLatin1String("rank")))
                rankFilesByPrefix[prefix].insert(name.section(u'.', 0, 0));
        }
    }
    const std::size_t analysedRanks = std::max(rankFilesByPrefix[QStringLiteral("a_")].size(),
                                               rankFilesByPrefix[QStringLiteral("b_")].size());
    QCOMPARE(analysedRanks, std::size_t(3));
    MainWindow window;
    QVERIFY(showAndLoad(window, dir.path()));
    QStringList statusTexts;
    for (const QLabel* label : window.statusBar()->findChildren<QLabel*>())
        statusTexts << label->text();
    const QString status = statusTexts.join(QLatin1Char('|'));
    QVERIFY2(status.contains(QStringLiteral(": %1 ranks in the analysed job of 2, %2 files")
                                 .arg(analysedRanks)
                                 .arg(QDir(dir.path()).entryList(QDir::Files).size())),
             qPrintable(status));
}

// File > Export Timeline PNG / SVG on a folder of logs only wrote a picture of "Ranks (0)":
// disabled there, enabled again for a folder with a trace.
void TestMainWindow::timelineExportsNeedATrace()
{
    MainWindow window;
    QVERIFY(showAndLoad(window, QStringLiteral(RANKSCOPE_TEST_DATA "/traces/setup_failure")));
    QCOMPARE(window.session()->events.eventCount(), std::int64_t(0));
    const QStringList names{QStringLiteral("actionExportTimelinePng"),
                            QStringLiteral("actionExportTimelineSvg")};
    for (const QString& name : names) {
        auto* action = window.findChild<QAction*>(name);
        QVERIFY(action);
        QVERIFY2(!action->isEnabled(), qPrintable(name));
    }
    QTemporaryDir out;
    QString error;
    QVERIFY(!window.exportTimelinePng(out.filePath(QStringLiteral("t.png")), &error));
    QVERIFY2(error.contains(QLatin1String("no profiler trace")), qPrintable(error));
    QVERIFY(!QFile::exists(out.filePath(QStringLiteral("t.png"))));
    QVERIFY(load(window, kExample));
    for (const QString& name : names)
        QVERIFY2(window.findChild<QAction*>(name)->isEnabled(), qPrintable(name));
}

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
