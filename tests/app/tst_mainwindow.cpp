#include "app/mainwindow.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"

#include <QAbstractItemModel>
#include <QAction>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTest>
#include <QTreeView>

using namespace rankscope;

class TestMainWindow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void opensExampleFolderAndShowsRanks();
    void timelineTabShowsTheLoadedSession();
};

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

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
