#include "tests/support/testfiles.h"
#include "views/models/sourcetreemodel.h"

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QTest>

using namespace rankscope;

class TestSourceTreeModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void groupsFilesByRank();
    void emptyWithoutSession();
    void skippedFilesAreGreyedNotProblems();
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

// A PNG is skipped: greyed, its reason in the tooltip, counted apart from the empty log beside
// it (an error); the log that was read is neither.
void TestSourceTreeModel::skippedFilesAreGreyedNotProblems()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("loss_curve.png")),
              QByteArray("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", 16));
    writeFile(dir.filePath(QStringLiteral("empty.log")), QByteArray());
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 1\n");
    SourceTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSession(loadSession(dir.path()));
    QCOMPARE(model.rowCount(), 2); // rank 0, then the files of no rank
    const QModelIndex rank0 = model.index(0, 0);
    QCOMPARE(model.rowCount(rank0), 1);
    QCOMPARE(model.index(0, SourceTreeModel::StatusColumn, rank0).data().toString(),
             QStringLiteral("ok"));
    QVERIFY(!model.index(0, 0, rank0).data(Qt::ForegroundRole).isValid());
    QVERIFY(!model.index(0, SourceTreeModel::StatusColumn).data().isValid());
    const QModelIndex unknown = model.index(1, 0);
    QCOMPARE(model.index(1, SourceTreeModel::StatusColumn).data().toString(),
             QStringLiteral("1 problem, 1 skipped"));
    int skipped = 0;
    for (int f = 0; f < model.rowCount(unknown); ++f) {
        const QString name = model.index(f, 0, unknown).data().toString();
        const QString status =
            model.index(f, SourceTreeModel::StatusColumn, unknown).data().toString();
        for (int c = 0; c < SourceTreeModel::ColumnCount; ++c) {
            const QVariant colour = model.index(f, c, unknown).data(Qt::ForegroundRole);
            QCOMPARE(colour.isValid(), name == QLatin1String("loss_curve.png"));
        }
        if (name == QLatin1String("loss_curve.png")) {
            ++skipped;
            QCOMPARE(status, QStringLiteral("skipped"));
            QCOMPARE(model.index(f, 0, unknown).data(Qt::ForegroundRole).value<QColor>(),
                     SourceTreeModel::kSkippedColor);
            const QString tip = model.index(f, 0, unknown).data(Qt::ToolTipRole).toString();
            QVERIFY2(tip.contains(QLatin1String("binary data (starts 0x89 0x50 0x4e 0x47)")),
                     qPrintable(tip));
        } else {
            QCOMPARE(name, QStringLiteral("empty.log"));
            QCOMPARE(status, QStringLiteral("error"));
        }
    }
    QCOMPARE(skipped, 1);
}

QTEST_GUILESS_MAIN(TestSourceTreeModel)
#include "tst_sourcetreemodel.moc"
