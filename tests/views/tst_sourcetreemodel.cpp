#include "views/models/sourcetreemodel.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace rankscope;

class TestSourceTreeModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void groupsFilesByRank();
    void emptyWithoutSession();
};

void TestSourceTreeModel::groupsFilesByRank()
{
    SourceTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSession(loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout")));
    // Ranks 0..2, then the group of files with no rank (launcher.log, ground_truth.json).
    QCOMPARE(model.rowCount(), 4);
    for (int r = 0; r < 3; ++r) {
        const QModelIndex group = model.index(r, 0);
        QCOMPARE(group.data().toString(), QStringLiteral("Rank %1").arg(r));
        QCOMPARE(group.data(SourceTreeModel::RankRole).toInt(), r);
        QVERIFY(model.rowCount(group) >= 2);
        for (int f = 0; f < model.rowCount(group); ++f)
            QCOMPARE(model.index(f, 0, group).data(SourceTreeModel::RankRole).toInt(), r);
    }
    const QModelIndex unknown = model.index(3, 0);
    QCOMPARE(unknown.data().toString(), QStringLiteral("Rank unknown"));
    QStringList names;
    for (int f = 0; f < model.rowCount(unknown); ++f)
        names << model.index(f, 0, unknown).data().toString();
    QVERIFY(names.contains(QStringLiteral("launcher.log")));
    const QModelIndex rank2 = model.index(2, 0);
    QStringList rank2Kinds;
    for (int f = 0; f < model.rowCount(rank2); ++f)
        rank2Kinds << model.index(f, SourceTreeModel::KindColumn, rank2).data().toString();
    QVERIFY(rank2Kinds.contains(QStringLiteral("kineto")));
    QVERIFY(rank2Kinds.contains(QStringLiteral("elastic_error")));
}

void TestSourceTreeModel::emptyWithoutSession()
{
    SourceTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setSession(loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy")));
    QCOMPARE(model.rowCount(), 3);
    model.setSession({});
    QCOMPARE(model.rowCount(), 0);
}

QTEST_GUILESS_MAIN(TestSourceTreeModel)
#include "tst_sourcetreemodel.moc"
