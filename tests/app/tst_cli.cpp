#include "tests/support/clirun.h"
#include "tests/support/testfiles.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
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
    void skippedFilesInEveryFormat();
    void ranksKnownOnlyFromOtherFiles();
    void factsHaveNoEmptySymptom();
    void outputInsideTheFolderIsRefused();
    void logsOverTheLineBudgetAreTruncated();
    void traceBudgetsAreFlags();
    void dumpAndRankTagBudgetsAreFlags();
    void classifyStopsAtItsInputBudget();
    void issuesImportSkipsWhatItCannotRead();
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
    // Neither a command nor a folder: decided before any GUI exists (see the headless run below).
    QTest::addRow("unknown command") << QStringList{QStringLiteral("bogus")};
    QTest::addRow("folder and more") << QStringList{QStringLiteral("."), QStringLiteral("bogus")};
}

void TestCli::badUsageExitsTwo()
{
    QFETCH(QStringList, args);
    // As on a machine without a display: a GUI started here would abort instead of exiting 2.
    QProcessEnvironment headless = QProcessEnvironment::systemEnvironment();
    headless.remove(QStringLiteral("DISPLAY"));
    headless.remove(QStringLiteral("WAYLAND_DISPLAY"));
    headless.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("xcb"));
    const CliRun r = runCli(args, {}, headless);
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
// the file speaks of, with the file its lines came from. No line states the world size: the
// ranks seen only bound it.
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
    QVERIFY(doc.value(QLatin1String("world_size")).isNull());
    QCOMPARE(doc.value(QLatin1String("world_size_at_least")).toInt(), 3);
    const QJsonArray ranks = doc.value(QLatin1String("ranks")).toArray();
    QCOMPARE(ranks.size(), 3);
    const CliRun text = runCli({QStringLiteral("analyze"), dir.path()});
    QVERIFY2(text.out.contains("Ranks: 3 (world size unknown (at least 3))"), text.out.constData());
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
    QVERIFY(r.out.contains("Ranks: 2 (world size 2)"));
    QVERIFY(r.out.contains("rank0.pt.trace.json"));
}

// Rank 0's trace of a 2-rank job alone: that rank 1 left nothing is a fact about the folder, a
// finding without a taxonomy leaf, and the text says so instead of an empty symptom.
void TestCli::factsHaveNoEmptySymptom()
{
    QTemporaryDir dir;
    QVERIFY(QFile::copy(
        QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-gpu-samples/nccl_2rank_rank0.json.gz"),
        dir.filePath(QStringLiteral("nccl_2rank_rank0.json.gz"))));
    const CliRun r = runCli({QStringLiteral("analyze"), dir.path()});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("missing_ranks"), r.out.constData());
    int symptoms = 0;
    for (const QByteArray& line : r.out.split('\n')) {
        if (!line.trimmed().startsWith("symptom:")) continue;
        ++symptoms;
        QVERIFY2(!line.trimmed().mid(8).trimmed().isEmpty(), r.out.constData());
    }
    QVERIFY(symptoms > 0);
    QVERIFY2(r.out.contains("symptom: none (a fact about what the folder holds, not a fault)"),
             r.out.constData());
    const CliRun md = runCli({QStringLiteral("analyze"), dir.path(), QStringLiteral("--format"),
                              QStringLiteral("markdown")});
    QVERIFY2(!md.out.contains("- Symptom: ``"), md.out.constData());
}

// The sources of an analysis document, by path: (status, message).
static QHash<QString, std::pair<QString, QString>> sourcesOf(const QJsonObject& doc)
{
    QHash<QString, std::pair<QString, QString>> out;
    QJsonArray all = doc.value(QLatin1String("unattributed_sources")).toArray();
    for (const QJsonValue& rank : doc.value(QLatin1String("ranks")).toArray())
        for (const QJsonValue& s : rank.toObject().value(QLatin1String("sources")).toArray())
            all.append(s);
    for (const QJsonValue& v : all) {
        const QJsonObject o = v.toObject();
        out.insert(o.value(QLatin1String("path")).toString(),
                   {o.value(QLatin1String("status")).toString(),
                    o.value(QLatin1String("message")).toString()});
    }
    return out;
}

// A PNG beside a rank's log is "skipped" with what it is in the JSON, the text and the Markdown
// (whose file count tells it from what was read); the log is "ok".
void TestCli::skippedFilesInEveryFormat()
{
    QTemporaryDir job;
    writeFile(job.filePath(QStringLiteral("loss_curve.png")),
              QByteArray("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR", 16));
    writeFile(job.filePath(QStringLiteral("rank0.log")), "step 1\n");
    const QString reason = QStringLiteral(
        "binary data (starts 0x89 0x50 0x4e 0x47): not a trace, dump or log that RankScope reads");
    const CliRun json = runCli({QStringLiteral("analyze"), job.path(), QStringLiteral("--json")});
    QCOMPARE(json.exitCode, 0);
    const auto sources = sourcesOf(QJsonDocument::fromJson(json.out).object());
    QCOMPARE(sources.value(QStringLiteral("loss_curve.png")),
             std::make_pair(QStringLiteral("skipped"), reason));
    QCOMPARE(sources.value(QStringLiteral("rank0.log")).first, QStringLiteral("ok"));
    const CliRun text = runCli({QStringLiteral("analyze"), job.path()});
    QVERIFY2(text.out.contains(
                 QByteArray(QByteArray("loss_curve.png  [unknown, skipped]  ") + reason.toUtf8())),
             text.out.constData());
    QVERIFY2(text.out.contains("rank0.log  [log, ok]"), text.out.constData());
    const CliRun md = runCli({QStringLiteral("analyze"), job.path(), QStringLiteral("--format"),
                              QStringLiteral("markdown")});
    QVERIFY2(md.out.contains("- Files: 2 (1 ok, 1 skipped)\n"), md.out.constData());
}

void TestCli::outputInsideTheFolderIsRefused()
{
    QTemporaryDir job, elsewhere;
    QVERIFY(QDir(job.path()).mkdir(QStringLiteral("sub")));
    writeFile(job.filePath(QStringLiteral("rank0.log")), "step 1\n");
    // A link from elsewhere into the folder leads inside it too.
    QVERIFY(QFile::link(job.filePath(QStringLiteral("sub")),
                        elsewhere.filePath(QStringLiteral("into-job"))));
    for (const QString& inside :
         {job.filePath(QStringLiteral("report.json")), job.filePath(QStringLiteral("sub/r.json")),
          elsewhere.filePath(QStringLiteral("into-job/r.json")),
          job.filePath(QStringLiteral("new/deeper/r.json"))}) {
        const CliRun r =
            runCli({QStringLiteral("analyze"), job.path(), QStringLiteral("--output"), inside});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("inside the opened folder"), r.err.constData());
        QVERIFY(!QFileInfo::exists(inside));
    }
    QCOMPARE(QDir(job.path()).entryList(QDir::Files), QStringList{QStringLiteral("rank0.log")});
    const QString outside = elsewhere.filePath(QStringLiteral("report.json"));
    const CliRun r = runCli({QStringLiteral("analyze"), job.path(), QStringLiteral("--json"),
                             QStringLiteral("-o"), outside});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.isEmpty());
    QFile written(outside);
    QVERIFY(written.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(written.readAll())
                 .object()
                 .value(QLatin1String("schema"))
                 .toString(),
             QStringLiteral("rankscope.analysis/1"));
}

void TestCli::logsOverTheLineBudgetAreTruncated()
{
    QTemporaryDir job;
    QByteArray log;
    for (int i = 1; i <= 10; ++i)
        log += "step " + QByteArray::number(i) + "\n";
    writeFile(job.filePath(QStringLiteral("rank0.log")), log);
    const CliRun r = runCli({QStringLiteral("analyze"), job.path(), QStringLiteral("--json"),
                             QStringLiteral("--max-log-lines"), QStringLiteral("4")});
    QCOMPARE(r.exitCode, 0);
    const auto sources = sourcesOf(QJsonDocument::fromJson(r.out).object());
    QCOMPARE(sources.value(QStringLiteral("rank0.log")).first, QStringLiteral("truncated"));
    QVERIFY2(sources.value(QStringLiteral("rank0.log"))
                 .second.contains(QLatin1String("first 4 of 10 lines")),
             qPrintable(sources.value(QStringLiteral("rank0.log")).second));
    const CliRun bad = runCli({QStringLiteral("analyze"), job.path(),
                               QStringLiteral("--max-log-lines"), QStringLiteral("0")});
    QCOMPARE(bad.exitCode, 2);
}

// A trace of 40 events (about 2.4 KB): whole by default, cut at --max-trace-events or
// --max-decompressed (which counts a plain file's bytes), and a budget that is no size is refused.
void TestCli::traceBudgetsAreFlags()
{
    QTemporaryDir job;
    QByteArray trace = R"({"traceEvents": [)";
    for (int i = 0; i < 40; ++i)
        trace += (i ? "," : "") + QByteArray(R"({"name": "aten::add", "ph": "X", "pid": 1, )") +
                 R"("tid": 1, "ts": )" + QByteArray::number(10 * i) + R"(, "dur": 5})";
    trace += "]}";
    QVERIFY(trace.size() > 2048);
    writeFile(job.filePath(QStringLiteral("rank0.pt.trace.json")), trace);
    const auto status = [&](const QStringList& flags) {
        const CliRun r = runCli(
            QStringList{QStringLiteral("analyze"), job.path(), QStringLiteral("--json")} + flags);
        return std::make_pair(r.exitCode, sourcesOf(QJsonDocument::fromJson(r.out).object())
                                              .value(QStringLiteral("rank0.pt.trace.json")));
    };
    QCOMPARE(status({}).second.first, QStringLiteral("ok"));
    const auto events = status({QStringLiteral("--max-trace-events"), QStringLiteral("4")});
    QCOMPARE(events.first, 0);
    QCOMPARE(events.second.first, QStringLiteral("truncated"));
    QVERIFY2(events.second.second.contains(QLatin1String("budget of 4 events")),
             qPrintable(events.second.second));
    const auto bytes = status({QStringLiteral("--max-decompressed"), QStringLiteral("1k")});
    QCOMPARE(bytes.second.first, QStringLiteral("truncated"));
    QVERIFY2(bytes.second.second.contains(QLatin1String("budget of 1024 decompressed bytes")),
             qPrintable(bytes.second.second));
    QCOMPARE(status({QStringLiteral("--max-decompressed"), QStringLiteral("2G")}).second.first,
             QStringLiteral("ok"));
    for (const QStringList& bad :
         {QStringList{QStringLiteral("--max-decompressed"), QStringLiteral("0")},
          QStringList{QStringLiteral("--max-decompressed"), QStringLiteral("12X")},
          QStringList{QStringLiteral("--max-trace-events"), QStringLiteral("4K")},
          QStringList{QStringLiteral("--max-log-bytes"), QStringLiteral("99999999999G")}})
        QCOMPARE(status(bad).first, 2);
    const CliRun help = runCli({QStringLiteral("analyze"), QStringLiteral("--help")});
    for (const char* flag : {"--max-trace-events", "--max-decompressed", "--max-log-bytes"})
        QVERIFY2(help.out.contains(flag), flag);

    // The flag is also the load's budget: with a second trace of 40 events, 60 events give each
    // trace its share of 30, and the reason names the load's budget.
    writeFile(job.filePath(QStringLiteral("rank1.pt.trace.json")), trace);
    const CliRun shared = runCli({QStringLiteral("analyze"), job.path(), QStringLiteral("--json"),
                                  QStringLiteral("--max-trace-events"), QStringLiteral("60")});
    QCOMPARE(shared.exitCode, 0);
    const auto both = sourcesOf(QJsonDocument::fromJson(shared.out).object());
    for (const char* name : {"rank0.pt.trace.json", "rank1.pt.trace.json"}) {
        const auto source = both.value(QLatin1String(name));
        QCOMPARE(source.first, QStringLiteral("truncated"));
        QVERIFY2(source.second.contains(QLatin1String(
                     "its share of the load's budget of 60 trace events: 30 for each of the 2")),
                 qPrintable(source.second));
    }
}

// A JSON Flight Recorder dump of 4 entries and a launcher log of 6 rank tags: whole by default,
// cut at --max-dump-entries 2 and --max-rank-tags 4 with the limit named; --max-dump-bytes takes
// a size; the three flags are in --help.
void TestCli::dumpAndRankTagBudgetsAreFlags()
{
    QTemporaryDir job;
    QFile dump(QStringLiteral(RANKSCOPE_TEST_DATA "/flight_recorder/fr_json_rank_0.json"));
    QVERIFY(dump.open(QIODevice::ReadOnly));
    const QByteArray dumpBytes = dump.readAll();
    QCOMPARE(dumpBytes.count("\"record_id\""), 4); // the file's own entries
    writeFile(job.filePath(QStringLiteral("fr_json_rank_0.json")), dumpBytes);
    QByteArray launcher = "WARNING:torch.distributed.run:\n";
    for (int r = 0; r < 6; ++r)
        launcher += "[rank" + QByteArray::number(r) + "]: step 1\n";
    writeFile(job.filePath(QStringLiteral("launcher.log")), launcher);
    const auto sources = [&](const QStringList& flags) {
        const CliRun r = runCli(
            QStringList{QStringLiteral("analyze"), job.path(), QStringLiteral("--json")} + flags);
        return std::make_pair(r.exitCode, sourcesOf(QJsonDocument::fromJson(r.out).object()));
    };
    const auto whole = sources({});
    QCOMPARE(whole.first, 0);
    QCOMPARE(whole.second.value(QStringLiteral("fr_json_rank_0.json")).first, QStringLiteral("ok"));
    QCOMPARE(whole.second.value(QStringLiteral("launcher.log")).first, QStringLiteral("ok"));
    const auto cut = sources({QStringLiteral("--max-dump-entries"), QStringLiteral("2"),
                              QStringLiteral("--max-rank-tags"), QStringLiteral("4")});
    QCOMPARE(cut.first, 0);
    const auto fr = cut.second.value(QStringLiteral("fr_json_rank_0.json"));
    QCOMPARE(fr.first, QStringLiteral("truncated"));
    QVERIFY2(fr.second.startsWith(QLatin1String("2 entries")), qPrintable(fr.second));
    QVERIFY2(fr.second.contains(QLatin1String("budget of 2 entries")), qPrintable(fr.second));
    const auto log = cut.second.value(QStringLiteral("launcher.log"));
    QCOMPARE(log.first, QStringLiteral("truncated"));
    QVERIFY2(log.second.contains(QLatin1String("4 rank streams")), qPrintable(log.second));
    QVERIFY2(log.second.contains(QLatin1String("2 lines tagged with ranks past the budget of 4")),
             qPrintable(log.second));
    QCOMPARE(sources({QStringLiteral("--max-dump-bytes"), QStringLiteral("64M")})
                 .second.value(QStringLiteral("fr_json_rank_0.json"))
                 .first,
             QStringLiteral("ok"));
    for (const QStringList& bad :
         {QStringList{QStringLiteral("--max-dump-entries"), QStringLiteral("0")},
          QStringList{QStringLiteral("--max-rank-tags"), QStringLiteral("x")},
          QStringList{QStringLiteral("--max-dump-bytes"), QStringLiteral("1T")}})
        QCOMPARE(sources(bad).first, 2);
    const CliRun help = runCli({QStringLiteral("analyze"), QStringLiteral("--help")});
    for (const char* flag : {"--max-rank-tags", "--max-dump-entries", "--max-dump-bytes"})
        QVERIFY2(help.out.contains(flag), flag);
}

void TestCli::classifyStopsAtItsInputBudget()
{
    if (!QFileInfo::exists(QStringLiteral("/dev/zero"))) QSKIP("no /dev/zero");
    const CliRun r = runCli({QStringLiteral("classify"), QStringLiteral("/dev/zero")});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.contains("only its first 64 MB were read"), r.err.constData());
}

void TestCli::issuesImportSkipsWhatItCannotRead()
{
    QTemporaryDir reports, outside, db;
    writeFile(reports.filePath(QStringLiteral("good.md")),
              "# NCCL timeout on 8 GPUs\n\nWatchdog caught collective operation timeout.\n");
    writeFile(reports.filePath(QStringLiteral("latin1.txt")), "caf\xe9 au lait\n");
    writeFile(outside.filePath(QStringLiteral("secret.md")), "# not to be imported\n");
    QVERIFY(QFile::link(outside.filePath(QStringLiteral("secret.md")),
                        reports.filePath(QStringLiteral("link.md"))));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("RANKSCOPE_DB"), db.filePath(QStringLiteral("issues.sqlite")));
    // A file that is not UTF-8 is skipped and named; the link out of the folder is not followed:
    // only good.md is imported.
    const CliRun r =
        runCli({QStringLiteral("issues"), QStringLiteral("import"), reports.path()}, {}, env);
    QVERIFY2(r.err.contains("latin1.txt is not UTF-8"), r.err.constData());
    QVERIFY2(!r.err.contains("secret") && !r.out.contains("secret"), r.err.constData());
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("Imported 1 "), r.out.constData());
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
