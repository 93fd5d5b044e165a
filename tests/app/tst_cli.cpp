#include "tests/support/clirun.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

// The "path" of every source in a `sources` / `unattributed_sources` array.
static QStringList pathsOf(const QJsonValue& sources)
{
    QStringList paths;
    for (const auto& s : sources.toArray())
        paths << s.toObject().value(QLatin1String("path")).toString();
    return paths;
}

// Runs the real binary: the CLI contract is its exit codes and its output.
class TestCli : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void version();
    void help();
    void badUsageExitsTwo_data();
    void badUsageExitsTwo();
    void missingFolderExitsThree();
    void analyzeJson();
    void analyzeText();
    void ranksKnownOnlyFromOtherFiles();
};

void TestCli::version()
{
    const CliRun r = runCli({QStringLiteral("--version")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.startsWith("rankscope " RANKSCOPE_VERSION));
}

void TestCli::help()
{
    const CliRun r = runCli({QStringLiteral("--help")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("analyze"));
    const CliRun sub = runCli({QStringLiteral("analyze"), QStringLiteral("--help")});
    QCOMPARE(sub.exitCode, 0);
    QVERIFY(sub.out.contains("--json"));
}

void TestCli::badUsageExitsTwo_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addRow("unknown option") << QStringList{QStringLiteral("--frobnicate")};
    QTest::addRow("unknown command option")
        << QStringList{QStringLiteral("analyze"), QStringLiteral("--bogus"), QStringLiteral(".")};
    QTest::addRow("no folder") << QStringList{QStringLiteral("analyze")};
    QTest::addRow("two folders") << QStringList{QStringLiteral("analyze"), QStringLiteral("a"),
                                                QStringLiteral("b")};
    QTest::addRow("bad format") << QStringList{QStringLiteral("analyze"),
                                               QStringLiteral("--format"), QStringLiteral("xml"),
                                               QStringLiteral(".")};
}

void TestCli::badUsageExitsTwo()
{
    QFETCH(QStringList, args);
    const CliRun r = runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.startsWith("rankscope: "));
    QVERIFY(r.out.isEmpty());
}

void TestCli::missingFolderExitsThree()
{
    const CliRun r = runCli({QStringLiteral("analyze"), QStringLiteral("/nonexistent/folder"),
                             QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 3);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY(r.err.contains("no such folder"));
    QVERIFY(r.out.isEmpty());
}

void TestCli::analyzeJson()
{
    const CliRun r =
        runCli({QStringLiteral("analyze"), QStringLiteral(RANKSCOPE_TEST_DATA "/traces/rank_crash"),
                QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 0);
    QJsonParseError error;
    const QJsonObject doc = QJsonDocument::fromJson(r.out, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(doc.value(QLatin1String("schema")).toString(), QStringLiteral("rankscope.analysis/1"));
    QCOMPARE(doc.value(QLatin1String("world_size")).toInt(), 3);
    const QJsonArray ranks = doc.value(QLatin1String("ranks")).toArray();
    QCOMPARE(ranks.size(), 3);
    for (int r = 0; r < 3; ++r) {
        const QJsonObject rank = ranks.at(r).toObject();
        QCOMPARE(rank.value(QLatin1String("rank")).toInt(), r);
        const QStringList paths = pathsOf(rank.value(QLatin1String("sources")));
        QVERIFY(paths.contains(QStringLiteral("rank%1.pt.trace.json").arg(r)));
        QVERIFY(paths.contains(QStringLiteral("rank%1.log").arg(r)));
    }
    QVERIFY(pathsOf(doc.value(QLatin1String("unattributed_sources")))
                .contains(QStringLiteral("launcher.log")));
    QVERIFY(doc.value(QLatin1String("findings")).isArray());
    QVERIFY(doc.value(QLatin1String("symptoms")).isArray());
}

// A folder with only torchrun's console, ranks tagged [rankN]: the ranks list names every rank
// the file speaks of, with the file its lines came from.
void TestCli::ranksKnownOnlyFromOtherFiles()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile console(dir.filePath(QStringLiteral("console.txt")));
    QVERIFY(console.open(QIODevice::WriteOnly));
    console.write("WARNING:torch.distributed.run:\n*****\n"
                  "[rank0]: step 1 loss 0.5\n[rank1]: step 1 loss 0.5\n"
                  "[rank2]: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
    console.close();
    const CliRun r = runCli({QStringLiteral("analyze"), dir.path(), QStringLiteral("--json")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc.value(QLatin1String("world_size")).toInt(), 3);
    const QJsonArray ranks = doc.value(QLatin1String("ranks")).toArray();
    QCOMPARE(ranks.size(), 3);
    for (int i = 0; i < 3; ++i) {
        const QJsonObject rank = ranks.at(i).toObject();
        QCOMPARE(rank.value(QLatin1String("rank")).toInt(), i);
        QCOMPARE(pathsOf(rank.value(QLatin1String("sources"))),
                 QStringList{QStringLiteral("console.txt")});
    }
}

void TestCli::analyzeText()
{
    const CliRun r =
        runCli({QStringLiteral("analyze"), QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("Ranks: 2"));
    QVERIFY(r.out.contains("rank0.pt.trace.json"));
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
