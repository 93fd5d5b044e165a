#include "views/logviewer/loglinesmodel.h"
#include "views/logviewer/logviewer.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QListView>
#include <QTest>

using namespace rankscope;

namespace {

SessionPtr example(const QString& name)
{
    return loadSession(QStringLiteral(RANKSCOPE_EXAMPLES "/") + name);
}

} // namespace

class TestLogViewer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void linesModelPassesTheTester();
    void opensACitedLineAndSteps_data();
    void opensACitedLineAndSteps();
    void unknownPathOrLineIsRefused();
};

void TestLogViewer::linesModelPassesTheTester()
{
    const SessionPtr s = example(QStringLiteral("hang_timeout"));
    QVERIFY(s && !s->logs.empty());
    LogLinesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const RankLog& log = s->logs.front();
    model.setLog(&log, {log.lineNumber(0)});
    QCOMPARE(model.rowCount(), log.lineCount());
    QVERIFY(model.index(0).data().toString().endsWith(log.lineText(0)));
    QVERIFY(model.index(0).data(LogLinesModel::CitedRole).toBool());
    model.setLog(nullptr, {});
    QCOMPARE(model.rowCount(), 0);
}

void TestLogViewer::opensACitedLineAndSteps_data()
{
    QTest::addColumn<QString>("folder");
    QTest::newRow("hang_timeout") << QStringLiteral("hang_timeout");
}

// Cites the first, middle and last line of every log and walks them with next/previous.
void TestLogViewer::opensACitedLineAndSteps()
{
    QFETCH(QString, folder);
    const SessionPtr s = example(folder);
    QVERIFY(s && !s->logs.empty());
    LogViewer viewer;
    viewer.resize(800, 400);
    viewer.show();
    viewer.setSession(s);
    QCOMPARE(viewer.logBox()->count(), int(s->logs.size()));
    for (const RankLog& log : s->logs) {
        if (log.lineCount() < 3) continue;
        std::vector<Evidence> cites;
        for (int i : {0, log.lineCount() / 2, log.lineCount() - 1})
            cites.push_back(
                {log.sourcePath.toStdString(), log.lineNumber(i), "", -1, log.rank.value_or(-1)});
        viewer.setCitations(cites);
        const int mid = log.lineNumber(log.lineCount() / 2);
        QVERIFY(viewer.openAt(log.sourcePath, mid, log.rank.value_or(-1)));
        QCOMPARE(viewer.currentLog(), &log);
        QCOMPARE(viewer.currentLineNumber(), mid);
        QVERIFY(viewer.isHighlighted(mid));
        QCOMPARE(viewer.citedLineNumbers().size(), qsizetype(3));
        const QModelIndex current = viewer.lineView()->currentIndex();
        QVERIFY(viewer.lineView()->visualRect(current).intersects(
            viewer.lineView()->viewport()->rect()));
        viewer.nextCited();
        QCOMPARE(viewer.currentLineNumber(), log.lineNumber(log.lineCount() - 1));
        viewer.nextCited(); // no further cited line: stays
        QCOMPARE(viewer.currentLineNumber(), log.lineNumber(log.lineCount() - 1));
        viewer.previousCited();
        viewer.previousCited();
        QCOMPARE(viewer.currentLineNumber(), log.lineNumber(0));
        if (log.lineCount() > 3) QVERIFY(!viewer.isHighlighted(log.lineNumber(1)));
    }
}

void TestLogViewer::unknownPathOrLineIsRefused()
{
    const SessionPtr s = example(QStringLiteral("hang_timeout"));
    LogViewer viewer;
    QVERIFY(!viewer.openAt(QStringLiteral("rank0.log"), 1));
    viewer.setSession(s);
    QVERIFY(!viewer.openAt(QStringLiteral("no-such.log"), 1));
    const RankLog& log = s->logs.front();
    QVERIFY(!viewer.openAt(log.sourcePath, log.lineNumber(log.lineCount() - 1) + 1000));
}

QTEST_MAIN(TestLogViewer)
#include "tst_logviewer.moc"
