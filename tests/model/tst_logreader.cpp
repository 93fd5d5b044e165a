#include "model/trace/logreader.h"
#include "tests/support/fuzzinputs.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <thread>

using namespace rankscope;

class TestLogReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixtureRanks_data();
    void fixtureRanks();
    void launcherSplit_data();
    void launcherSplit();
    void setupFailureMasterPortDiffers();
    void timestamps_data();
    void timestamps();
    void rankTag_data();
    void rankTag();
    void ncclLines();
    void watchdogLine();
    void fingerprintLines();
    void tracebackFramesAndChainedExceptions();
    void environmentAndVersions();
    void stepsMatchTheirRegex();
    void badInput_data();
    void badInput();
    void hundredMegabyteSingleLine();
    void fuzzRegressions();
    void controlCancelsAndCountsBytes_data();
    void controlCancelsAndCountsBytes();
    void lineIndexMatchesTheBytes();
    void lineBudgets();
    void rankTagBudgets();
    void byteBudgetOfAFile();
    void byteBudgetOfALoad();
    void loadBudgetTakenOnceAcrossThreads();
    void ansiColoursKeptForDisplay();
    void linesOutliveTheFile();
    void largeFileReadWholeAndCut();
};

static QString fixture(const QString& name)
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + name;
}

static nlohmann::json groundTruth(const QString& scenario)
{
    QFile f(fixture(scenario) + QStringLiteral("/ground_truth.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return nlohmann::json::parse(f.readAll().toStdString());
}

static QString simplified(const std::string& s)
{
    return QString::fromStdString(s).simplified();
}

static void addScenarios()
{
    QTest::addColumn<QString>("scenario");
    for (const char* s : {"healthy", "straggler", "mismatched_collective", "hang_timeout",
                          "setup_failure", "rank_crash", "unused_parameters", "uneven_inputs"})
        QTest::newRow(s) << QString::fromLatin1(s);
}

void TestLogReader::fixtureRanks_data()
{
    addScenarios();
}

// Steps and exceptions per rank agree with what the run recorded in ground_truth.json.
void TestLogReader::fixtureRanks()
{
    QFETCH(QString, scenario);
    const nlohmann::json truth = groundTruth(scenario);
    QVERIFY(truth.is_object());
    for (const auto& [rankText, observed] : truth["observed"]["ranks"].items()) {
        const int rank = std::stoi(rankText);
        const QString log = QString::fromStdString(observed["log"].get<std::string>());
        const LogReader::Result r =
            LogReader::readFile(fixture(scenario) + QLatin1Char('/') + log, log, 0, rank, false);
        QVERIFY(r.ok);
        QCOMPARE(r.streams.size(), std::size_t(1));
        const RankLog& stream = r.streams.front();
        QCOMPARE(stream.rank.value_or(-1), rank);
        const std::optional<int> last = stream.lastStep();
        if (observed["last_completed_step"].is_null())
            QVERIFY2(!last, qPrintable(log));
        else
            QCOMPARE(last.value_or(-1), observed["last_completed_step"].get<int>());

        const std::string status = observed["exit_status"].get<std::string>();
        if (status == "ok") {
            QVERIFY(stream.exceptions().empty());
        } else if (status.starts_with("SystemExit")) {
            // A rank that torchrun terminated: no traceback, a signal line.
            QVERIFY(stream.exceptions().empty());
            const auto signalFacts = stream.factsOfKind(LogFactKind::Signal);
            QVERIFY(!signalFacts.empty());
            QCOMPARE(signalFacts.back()->value("signal"), std::string("SIGTERM"));
        } else {
            QVERIFY2(!stream.exceptions().empty(), qPrintable(log));
            const LogException& e = stream.exceptions().back();
            // ground_truth.json cuts long messages; the log has all of it.
            QVERIFY2(simplified(e.text()).startsWith(simplified(status)),
                     qPrintable(simplified(e.text())));
            QVERIFY(!e.frames.empty());
            QVERIFY(stream.lineText(e.firstLine).startsWith(QLatin1String("Traceback")));
            QCOMPARE(e.lastLine, stream.lastLine());
        }
    }
}

void TestLogReader::launcherSplit_data()
{
    addScenarios();
}

// Every tagged launcher line lands in its rank's stream, cites the launcher's line number, and is
// the same text the rank wrote to its own log.
void TestLogReader::launcherSplit()
{
    QFETCH(QString, scenario);
    const nlohmann::json truth = groundTruth(scenario);
    const LogReader::Result r =
        LogReader::readFile(fixture(scenario) + QStringLiteral("/launcher.log"),
                            QStringLiteral("launcher.log"), 3, std::nullopt, true);
    QVERIFY(r.ok);
    QFile raw(fixture(scenario) + QStringLiteral("/launcher.log"));
    QVERIFY(raw.open(QIODevice::ReadOnly));
    const QList<QByteArray> rawLines = raw.readAll().split('\n');
    int tagged = 0;
    bool launcherStream = false;
    for (const RankLog& s : r.streams) {
        QCOMPARE(s.sourceIndex, 3);
        if (!s.rank) {
            launcherStream = true;
            continue;
        }
        QVERIFY(s.splitFromCombined);
        QVERIFY(truth["observed"]["ranks"].contains(std::to_string(*s.rank)));
        QFile own(fixture(scenario) + QStringLiteral("/rank%1.log").arg(*s.rank));
        QVERIFY(own.open(QIODevice::ReadOnly));
        const QByteArray ownText = own.readAll();
        for (int i = 0; i < s.lineCount(); ++i) {
            ++tagged;
            QVERIFY(s.lineText(i).contains(QStringLiteral("[rank%1]").arg(*s.rank)));
            QCOMPARE(s.lineBytes(i).toByteArray(), rawLines[s.lineNumber(i) - 1]);
            QVERIFY(ownText.contains(QByteArray(s.lineBytes(i).toByteArray() + "\n")));
        }
        const auto& observed = truth["observed"]["ranks"][std::to_string(*s.rank)];
        if (!observed["last_completed_step"].is_null())
            QCOMPARE(s.lastStep().value_or(-1), observed["last_completed_step"].get<int>());
    }
    QVERIFY(launcherStream); // torchrun's banner has no tag
    QVERIFY(tagged > 0);
}

void TestLogReader::setupFailureMasterPortDiffers()
{
    std::map<int, std::string> port;
    for (int rank : {0, 1}) {
        const LogReader::Result r =
            LogReader::readFile(fixture(QStringLiteral("setup_failure/rank%1.log").arg(rank)),
                                QString(), 0, rank, false);
        for (const LogFact* f : r.streams.front().factsOfKind(LogFactKind::Environment))
            if (f->has("master_port")) port[rank] = f->value("master_port");
        QVERIFY(!port[rank].empty());
    }
    QVERIFY(port[0] != port[1]);
    // The port rank 1 waited for is the one its TimeoutError names.
    const LogReader::Result r1 = LogReader::readFile(
        fixture(QStringLiteral("setup_failure/rank1.log")), QString(), 0, 1, false);
    QVERIFY(QString::fromStdString(r1.streams.front().exceptions().back().message)
                .contains(QString::fromStdString(port[1])));
}

void TestLogReader::timestamps_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("expectedUtc"); // ISO with ms; "" none; "T..." time of day only
    QTest::addColumn<qint64>("subMsNs");
    QTest::newRow("python logging") << QByteArray("2026-12-02 13:41:34.806 [rank0] INFO train: x")
                                    << "2026-12-02T13:41:34.806" << qint64(0);
    QTest::newRow("python comma") << QByteArray("2024-03-01 00:00:01,250 INFO x")
                                  << "2024-03-01T00:00:01.250" << qint64(0);
    QTest::newRow("glog with year")
        << QByteArray("I20261202 13:35:55.418524 28405 reducer.cpp:126] x")
        << "2026-12-02T13:35:55.418" << qint64(524000);
    QTest::newRow("nccl timestamp") << QByteArray("[2025-01-31 23:59:59] host:1:2 [0] NCCL INFO x")
                                    << "2025-01-31T23:59:59.000" << qint64(0);
    QTest::newRow("torch no year")
        << QByteArray("[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:616] x") << "T20:27:21.426"
        << qint64(415540);
    QTest::newRow("none") << QByteArray("Traceback (most recent call last):") << "" << qint64(0);
    QTest::newRow("bad month") << QByteArray("2026-13-02 13:41:34.806 x") << "" << qint64(0);
}

void TestLogReader::timestamps()
{
    QFETCH(QByteArray, line);
    QFETCH(QString, expectedUtc);
    QFETCH(qint64, subMsNs);
    bool hasDate = false;
    const std::optional<std::int64_t> ns = LogReader::parseTimestamp(line, 0, &hasDate);
    if (expectedUtc.isEmpty()) {
        QVERIFY(!ns);
        return;
    }
    QVERIFY(ns);
    if (expectedUtc.startsWith(QLatin1Char('T'))) {
        QVERIFY(!hasDate);
        const QTime t = QTime::fromString(expectedUtc.mid(1), QStringLiteral("HH:mm:ss.zzz"));
        QCOMPARE(*ns, qint64(t.msecsSinceStartOfDay()) * 1'000'000 + subMsNs);
        return;
    }
    QVERIFY(hasDate);
    const QDateTime dt = QDateTime::fromString(expectedUtc, Qt::ISODateWithMs);
    QCOMPARE(*ns,
             QDateTime(dt.date(), dt.time(), Qt::UTC).toMSecsSinceEpoch() * 1'000'000 + subMsNs);
}

void TestLogReader::rankTag_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("contentStart");
    QTest::newRow("torchrun rank") << QByteArray("[rank3]:[E1218 20:27:21 x] boom") << 3 << 8;
    QTest::newRow("torchrun tee") << QByteArray("[default12]:hello") << 12 << 12;
    QTest::newRow("mpirun") << QByteArray("[1,3]<stderr>:NCCL INFO x") << 3 << 14;
    QTest::newRow("mpirun short") << QByteArray("[5]<stdout>:x") << 5 << 12;
    QTest::newRow("python record")
        << QByteArray("2026-12-02 13:41:34.806 [rank2] INFO x") << 2 << 0;
    QTest::newRow("untagged") << QByteArray("WARNING:torch.distributed.run:") << -1 << 0;
    QTest::newRow("rank without colon") << QByteArray("[rank3] hello") << -1 << 0;
    QTest::newRow("bracket text") << QByteArray("[1]: entry") << -1 << 0;
}

void TestLogReader::rankTag()
{
    QFETCH(QByteArray, line);
    QFETCH(int, rank);
    QFETCH(int, contentStart);
    qsizetype start = -1;
    QCOMPARE(LogReader::rankTag(line, &start).value_or(-1), rank);
    QCOMPARE(int(start), contentStart);
}

static RankLog readOne(const QByteArray& text, bool split = false)
{
    LogReader::Result r = LogReader::read(text, QStringLiteral("x.log"), 0, std::nullopt, split);
    return r.streams.empty() ? RankLog{} : std::move(r.streams.front());
}

void TestLogReader::ncclLines()
{
    const RankLog log = readOne(
        "node7:12345:12345 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n"
        "NCCL version 2.18.1+cuda12.1\n"
        "node7:12345:12400 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0> "
        "[1]ib0:10.9.0.3<0>\n"
        "node7:12345:12400 [0] NCCL INFO comm 0x55d5c8a0 rank 3 nranks 8 cudaDev 0 nvmlDev 0 busId "
        "1b000 commId 0x7e2a9f - Init COMPLETE\n"
        "node7:12345:12345 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f00 recvbuff 0x7f00 "
        "count 6792 datatype 7 op 0 root 0 comm 0x55d5c8a0 [nranks=8] stream 0x5600\n"
        "node7:12345:12401 [0] transport/net_socket.cc:540 NCCL WARN NET/Socket : peer "
        "10.1.2.4<43210> message truncated\n");
    QCOMPARE(log.lineCount(), 6);
    QCOMPARE(log.host, std::string("node7"));
    QCOMPARE(log.worldSize.value_or(0), 8);
    const auto version = log.factsOfKind(LogFactKind::NcclVersion);
    QCOMPARE(version.size(), std::size_t(1));
    QCOMPARE(version[0]->value("version"), std::string("2.18.1+cuda12.1"));
    QCOMPARE(version[0]->value("cuda"), std::string("12.1"));
    const auto net = log.factsOfKind(LogFactKind::NcclNetInterface);
    QCOMPARE(net.size(), std::size_t(1));
    QCOMPARE(net[0]->value("transport"), std::string("Socket"));
    QVERIFY(net[0]->value("using").starts_with("[0]eth0"));
    const auto init = log.factsOfKind(LogFactKind::NcclInit);
    QCOMPARE(init.size(), std::size_t(1));
    QCOMPARE(init[0]->value("rank"), std::string("3"));
    QCOMPARE(init[0]->value("nranks"), std::string("8"));
    QCOMPARE(init[0]->value("cudaDev"), std::string("0"));
    QCOMPARE(init[0]->value("busId"), std::string("1b000"));
    QCOMPARE(init[0]->value("commId"), std::string("0x7e2a9f"));
    QCOMPARE(init[0]->value("status"), std::string("complete"));
    QCOMPARE(init[0]->line, 3);
    const auto coll = log.factsOfKind(LogFactKind::NcclColl);
    QCOMPARE(coll.size(), std::size_t(1));
    QCOMPARE(coll[0]->value("op"), std::string("AllReduce"));
    QCOMPARE(coll[0]->value("opCount"), std::string("1a"));
    QCOMPARE(coll[0]->value("count"), std::string("6792"));
    QCOMPARE(coll[0]->value("datatype"), std::string("7"));
    QCOMPARE(coll[0]->value("root"), std::string("0"));
    QCOMPARE(coll[0]->value("redOp"), std::string("0"));
    QCOMPARE(coll[0]->value("comm"), std::string("0x55d5c8a0"));
    QCOMPARE(coll[0]->value("nranks"), std::string("8"));
    const auto warn = log.factsOfKind(LogFactKind::NcclWarn);
    QCOMPARE(warn.size(), std::size_t(1));
    QCOMPARE(warn[0]->line, 5);
    QVERIFY(QString::fromStdString(warn[0]->value("text"))
                .contains(QLatin1String("message truncated")));
}

void TestLogReader::watchdogLine()
{
    const RankLog log =
        readOne("[rank1]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog "
                "caught collective operation timeout: "
                "WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=6792, NumelOut=6792, "
                "Timeout(ms)=600000) ran for 600075 milliseconds before timing out.\n",
                true);
    QCOMPARE(log.rank.value_or(-1), 1);
    const auto w = log.factsOfKind(LogFactKind::Watchdog);
    QCOMPARE(w.size(), std::size_t(1));
    QCOMPARE(w[0]->value("work"), std::string("WorkNCCL"));
    QCOMPARE(w[0]->value("SeqNum"), std::string("42"));
    QCOMPARE(w[0]->value("OpType"), std::string("ALLREDUCE"));
    QCOMPARE(w[0]->value("NumelIn"), std::string("6792"));
    QCOMPARE(w[0]->value("NumelOut"), std::string("6792"));
    QCOMPARE(w[0]->value("Timeout(ms)"), std::string("600000"));
    QCOMPARE(w[0]->value("ran_for_ms"), std::string("600075"));
    QCOMPARE(w[0]->value("reporting_rank"), std::string("1"));
    QVERIFY(log.timestampNs(0) >= 0);
    QVERIFY(!log.timestampHasDate(0));
}

void TestLogReader::fingerprintLines()
{
    const LogReader::Result r = LogReader::readFile(
        fixture(QStringLiteral("mismatched_collective/rank1.log")), QString(), 0, 1, false);
    const auto fps = r.streams.front().factsOfKind(LogFactKind::Fingerprint);
    QCOMPARE(fps.size(), std::size_t(2));
    QCOMPARE(fps[0]->value("of_rank"), std::string("1"));
    QCOMPARE(fps[0]->value("TensorShape"), std::string("[2]"));
    QCOMPARE(fps[1]->value("of_rank"), std::string("0"));
    QCOMPARE(fps[1]->value("TensorShape"), std::string("[1]"));
    QCOMPARE(fps[0]->value("OpType"), std::string("ALLREDUCE"));
    QCOMPARE(fps[0]->value("TensorDtypes"), std::string("Float"));
    QVERIFY(fps[0]->value("TensorDeviceTypes").starts_with("TensorOptions("));
}

void TestLogReader::tracebackFramesAndChainedExceptions()
{
    const RankLog log = readOne(
        "Traceback (most recent call last):\n"
        "  File \"/a/train.py\", line 10, in <module>\n"
        "    main()\n"
        "  File \"/a/train.py\", line 5, in main\n"
        "    x[3]\n"
        "KeyError: 3\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        "\n"
        "Traceback (most recent call last):\n"
        "  File \"/a/train.py\", line 12, in <module>\n"
        "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error\n"
        "Last error:\n"
        "socket closed\n"
        "2026-01-01 00:00:00.000 INFO after\n");
    QCOMPARE(log.exceptions().size(), std::size_t(2));
    const LogException& a = log.exceptions()[0];
    QCOMPARE(a.type, std::string("KeyError"));
    QCOMPARE(a.message, std::string("3"));
    QCOMPARE(a.frames.size(), std::size_t(2));
    QCOMPARE(a.frames[1].file, std::string("/a/train.py"));
    QCOMPARE(a.frames[1].line, 5);
    QCOMPARE(a.frames[1].function, std::string("main"));
    QCOMPARE(a.firstLine, 0);
    QCOMPARE(a.lastLine, 5);
    const LogException& b = log.exceptions()[1];
    QCOMPARE(b.type, std::string("torch.distributed.DistBackendError"));
    QCOMPARE(b.lastLine, 13);
    QVERIFY(QString::fromStdString(b.message).endsWith(QLatin1String("socket closed")));
}

void TestLogReader::environmentAndVersions()
{
    const RankLog log = readOne("MASTER_ADDR=10.0.0.1\n"
                                "launch: RANK=2 LOCAL_RANK=0 WORLD_SIZE=16 hostname=gpu-node-3\n"
                                "PyTorch version: 2.3.1+cu121\n"
                                "CUDA version: 12.1\n"
                                "epoch 0 step 7/100 loss 0.5\n"
                                "a=b is a single pair of no interest\n");
    const auto env = log.factsOfKind(LogFactKind::Environment);
    QCOMPARE(env.size(), std::size_t(2));
    QCOMPARE(env[0]->value("MASTER_ADDR"), std::string("10.0.0.1"));
    QCOMPARE(env[1]->value("WORLD_SIZE"), std::string("16"));
    QCOMPARE(log.worldSize.value_or(0), 16);
    QCOMPARE(log.host, std::string("gpu-node-3"));
    const auto versions = log.factsOfKind(LogFactKind::Version);
    QCOMPARE(versions.size(), std::size_t(2));
    QCOMPARE(versions[0]->value("component"), std::string("torch"));
    QCOMPARE(versions[0]->value("version"), std::string("2.3.1+cu121"));
    QCOMPARE(versions[1]->value("version"), std::string("12.1"));
    QCOMPARE(log.lastStep().value_or(-1), 7);
}

// Random lines of step-like words in any case: a line's step is the first match of the pattern
// the reader documents, taken when the line holds "step", "Step" or "iter" as written.
void TestLogReader::stepsMatchTheirRegex()
{
    static const QRegularExpression re(
        QStringLiteral("(?<![\\w\\-])(?<!before )(?:step|iter(?:ation)?)[\\s:=#]*(\\d+)\\b"),
        QRegularExpression::CaseInsensitiveOption);
    const char* words[] = {"step",      "STEP",    "Step",    "sTeP", "iter", "ITER", "Iteration",
                           "iteration", "before ", "BEFORE ", "-",    "x",    "ste",  "it",
                           "er",        "ignal",   "host=",   "_",    "a"};
    const char* separators[] = {" ", ":", "=", "#", "\t", "", "-", "x"};
    const char* numbers[] = {"12", "7", "0", "3a", ""};
    std::uint32_t seed = 12345;
    const auto next = [&seed] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
    QByteArray bytes;
    std::vector<int> expected; // per line, -1: no step
    for (int line = 0; line < 20000; ++line) {
        QByteArray text = "w ";
        for (std::uint32_t k = 0, n = 1 + next() % 3; k < n; ++k) {
            text += words[next() % std::size(words)];
            text += separators[next() % std::size(separators)];
            text += numbers[next() % std::size(numbers)];
            text += separators[next() % std::size(separators)];
        }
        const bool gated = text.contains("step") || text.contains("Step") || text.contains("iter");
        const QRegularExpressionMatch m = re.match(QString::fromLatin1(text));
        expected.push_back(gated && m.hasMatch() ? m.captured(1).toInt() : -1);
        bytes += text + '\n';
    }
    const RankLog log = readOne(bytes);
    std::vector<int> got(expected.size(), -1);
    for (const LogStep& st : log.steps())
        got[std::size_t(st.line)] = st.step;
    int steps = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        QVERIFY2(got[i] == expected[i], qPrintable(log.lineText(int(i))));
        steps += expected[i] >= 0;
    }
    QVERIFY2(steps > 1000, qPrintable(QString::number(steps))); // the random lines hold steps
}

void TestLogReader::badInput_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("lines");
    QTest::newRow("empty") << QByteArray() << 0;
    QTest::newRow("binary") << QByteArray("\x00\x01\xff\xfe\n\x00\x00", 7) << 2;
    QTest::newRow("invalid utf-8") << QByteArray("step 3 \xc3\x28 \xff\n\xe2\x82 step 4\n") << 2;
    QTest::newRow("crlf") << QByteArray("a\r\nstep 9\r\n") << 2;
    QTest::newRow("no final newline") << QByteArray("one\ntwo") << 2;
    QTest::newRow("cut traceback")
        << QByteArray("Traceback (most recent call last):\n  File \"x\", line 1") << 2;
    QTest::newRow("unbalanced work") << QByteArray("WorkNCCL(SeqNum=1, OpType=(((") << 1;
}

void TestLogReader::badInput()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, lines);
    const LogReader::Result r = LogReader::read(bytes, QStringLiteral("x.log"), 0, 0, false);
    QVERIFY(r.ok);
    QVERIFY(!r.message.isEmpty());
    QCOMPARE(r.streams.size(), std::size_t(1));
    QCOMPARE(r.streams.front().lineCount(), lines);
    for (int i = 0; i < lines; ++i)
        QVERIFY(!r.streams.front().lineText(i).contains(QLatin1Char('\r')));
}

void TestLogReader::hundredMegabyteSingleLine()
{
    QByteArray big(100 * 1024 * 1024, 'x');
    big.replace(0, 24, "2026-12-02 13:41:34.806 ");
    big.append("\nstep 5 loss 1\n");
    QElapsedTimer timer;
    timer.start();
    const LogReader::Result r = LogReader::read(big, QStringLiteral("big.log"), 0, 0, true);
    QVERIFY2(timer.elapsed() < 5000, "indexing must not parse the whole line");
    QCOMPARE(r.streams.size(), std::size_t(1));
    const RankLog& log = r.streams.front();
    QCOMPARE(log.lineCount(), 2);
    QCOMPARE(log.longLines, 1);
    QVERIFY2(r.message.contains(QLatin1String("1 line over 64 KB, only its first")),
             qPrintable(r.message));
    QCOMPARE(log.lineBytes(0).size(), qsizetype(100 * 1024 * 1024));
    QCOMPARE(log.lineOffset(1), qint64(100 * 1024 * 1024 + 1));
    QCOMPARE(log.lastStep().value_or(-1), 5);
    QVERIFY(log.timestampHasDate(0));
}

// Inputs the fuzzer found once (e.g. year 0000 overflowed the ns clock); replayed on every run.
void TestLogReader::fuzzRegressions()
{
    const auto inputs = test::fuzzInputs("logreader");
    QVERIFY(!inputs.empty());
    for (const auto& [name, bytes] : inputs) {
        for (bool split : {false, true}) {
            const LogReader::Result r = LogReader::read(bytes, name, 0, 0, split);
            QVERIFY(!r.streams.empty());
            for (const RankLog& log : r.streams)
                for (int i = 0; i < log.lineCount(); ++i)
                    QVERIFY(log.timestampNs(i) == -1 || log.timestampNs(i) >= 0);
        }
    }
}

void TestLogReader::controlCancelsAndCountsBytes_data()
{
    QTest::addColumn<bool>("split");
    QTest::newRow("per-rank") << false;
    QTest::newRow("combined") << true;
}

// Progress ends at the byte size; a cancel seen while reading keeps nothing of the file.
void TestLogReader::controlCancelsAndCountsBytes()
{
    QFETCH(bool, split);
    QByteArray bytes;
    while (bytes.size() < 3 * LogReader::kPollBytes)
        bytes += "[rank1]:step 3 loss=1 lr=2\n[rank0]:node:1:1 [0] NCCL INFO Channel 00\n";
    std::atomic<std::int64_t> progress{0};
    std::atomic<bool> cancel{false};
    LogReader::Control control;
    control.progressBytes = &progress;
    control.cancel = &cancel;
    const LogReader::Result whole =
        LogReader::read(bytes, QStringLiteral("x.log"), 0, 0, split, control);
    QVERIFY(whole.ok && !whole.cancelled);
    QCOMPARE(qint64(progress.load()), qint64(bytes.size()));
    cancel = true;
    const LogReader::Result none =
        LogReader::read(bytes, QStringLiteral("x.log"), 0, 0, split, control);
    QVERIFY(none.cancelled);
    QVERIFY(!none.ok);
    QVERIFY(none.streams.empty());
}

// Every stream's lines, numbers, offsets and timestamps against a split of the raw bytes made
// here: the index keeps only each line's start and derives the rest.
void TestLogReader::lineIndexMatchesTheBytes()
{
    const QByteArray bytes = "2026-12-02 13:41:34.806 start\r\n"
                             "[rank1]:I1202 13:41:35.000000 1 x.cpp:1] glog without a year\n"
                             "\n"
                             "[rank0]:plain\r\n"
                             "I1202 13:41:36.500000 1 x.cpp:2] untagged glog\n"
                             "[rank1]:2025-01-01 00:00:01 a new year\n"
                             "[rank1]:I0101 00:00:02.000000 1 x.cpp:3] takes it\n"
                             "last line without a newline";
    const QList<QByteArray> raw = bytes.split('\n');
    for (const bool split : {false, true}) {
        const LogReader::Result r = LogReader::read(bytes, QStringLiteral("x.log"), 0, 7, split);
        QVERIFY(r.ok && !r.truncated);
        int seen = 0;
        for (const RankLog& log : r.streams) {
            int year = 0; // of the stream's last dated line so far
            for (int i = 0; i < log.lineCount(); ++i, ++seen) {
                const int number = log.lineNumber(i);
                QCOMPARE(log.indexOfLineNumber(number), i);
                QByteArray expected = raw.at(number - 1);
                if (expected.endsWith('\r')) expected.chop(1);
                qint64 offset = 0;
                for (int k = 0; k < number - 1; ++k)
                    offset += raw.at(k).size() + 1;
                if (split && log.rank) {
                    const qsizetype tag = expected.indexOf("]:") + 2;
                    expected = expected.mid(tag);
                    offset += tag;
                }
                QCOMPARE(log.lineBytes(i).toByteArray(), expected);
                QCOMPARE(log.lineOffset(i), offset);
                // Timestamps: the parser on the line's text, a glog stamp without a year taking
                // that of the stream's last dated line before it.
                bool hasDate = false;
                int lineYear = 0;
                const std::optional<std::int64_t> ts =
                    LogReader::parseTimestamp(expected, year, &hasDate, &lineYear);
                if (lineYear) year = lineYear;
                QCOMPARE(log.timestampNs(i), ts.value_or(-1));
                QCOMPARE(log.timestampHasDate(i), ts && hasDate);
            }
        }
        QCOMPARE(seen, raw.size());
    }
    // In the split log, rank 1's "I0101" line takes 2025 from rank 1's own dated line.
    const LogReader::Result r = LogReader::read(bytes, QStringLiteral("x.log"), 0, 7, true);
    bool checked = false;
    for (const RankLog& log : r.streams)
        for (int i = 0; i < log.lineCount(); ++i)
            if (log.lineBytes(i).startsWith("I0101")) {
                QCOMPARE(log.timestampNs(i),
                         QDateTime(QDate(2025, 1, 1), QTime(0, 0, 2), Qt::UTC).toMSecsSinceEpoch() *
                             1'000'000);
                checked = true;
            }
    QVERIFY(checked);
}

void TestLogReader::lineBudgets()
{
    const QByteArray five = "a\nb\nc\nd\ne\n";
    LogReader::Control control;
    control.budget.linesPerFile = 3;
    const LogReader::Result file =
        LogReader::read(five, QStringLiteral("x.log"), 0, 0, false, control);
    QVERIFY(file.ok && file.truncated);
    QCOMPARE(file.streams.front().lineCount(), 3);
    QCOMPARE(file.streams.front().lineBytes(2).toByteArray(), QByteArray("c"));
    QVERIFY2(file.message.contains(QLatin1String("first 3 of 5 lines")), qPrintable(file.message));
    QVERIFY(file.message.contains(QLatin1String("a file")));

    // Files of one load share its budget: the second gets what the first left.
    control.budget.linesPerFile = 100;
    control.budget.linesPerLoad = 7;
    LoadShare load = LogReader::loadShare(control.budget);
    control.load = &load;
    const LogReader::Result first =
        LogReader::read(five, QStringLiteral("a.log"), 0, 0, false, control);
    QVERIFY(!first.truncated);
    QCOMPARE(first.streams.front().lineCount(), 5);
    const LogReader::Result second =
        LogReader::read(five, QStringLiteral("b.log"), 1, 1, true, control);
    QVERIFY(second.ok && second.truncated);
    int lines = 0;
    for (const RankLog& log : second.streams)
        lines += log.lineCount();
    QCOMPARE(lines, 2);
    QVERIFY2(second.message.contains(QLatin1String("first 2 of 5 lines")),
             qPrintable(second.message));
    QVERIFY(second.message.contains(QLatin1String("a load")));
    QCOMPARE(load.used(std::size_t(LogReader::LoadUnit::Lines)), std::int64_t(7));
}

void TestLogReader::rankTagBudgets()
{
    QByteArray bytes;
    for (int r = 0; r < 10; ++r)
        bytes += "[rank" + QByteArray::number(r) + "]:hello from " + QByteArray::number(r) + "\n";
    bytes += "launcher line\n";
    LogReader::Control control;
    control.budget.rankTagsPerFile = 3;
    const LogReader::Result r =
        LogReader::read(bytes, QStringLiteral("launcher.log"), 0, std::nullopt, true, control);
    QVERIFY(r.ok && r.truncated);
    QVERIFY2(r.message.contains(QLatin1String("7 lines tagged with ranks past the budget of 3")),
             qPrintable(r.message));
    QList<int> ranks;
    const RankLog* untagged = nullptr;
    for (const RankLog& log : r.streams) {
        if (log.rank)
            ranks << *log.rank;
        else
            untagged = &log;
    }
    QCOMPARE(ranks, (QList<int>{0, 1, 2}));
    QVERIFY(untagged);
    // The lines past the budget stay whole, tag and all, in the untagged stream.
    QCOMPARE(untagged->lineCount(), 8);
    QCOMPARE(untagged->lineBytes(0).toByteArray(), QByteArray("[rank3]:hello from 3"));
    QCOMPARE(untagged->lineNumber(0), 4);
    QCOMPARE(untagged->lineBytes(7).toByteArray(), QByteArray("launcher line"));

    // A load's tags are shared by its files.
    control.budget.rankTagsPerFile = 100;
    control.budget.rankTagsPerLoad = 12;
    LoadShare load = LogReader::loadShare(control.budget);
    control.load = &load;
    const LogReader::Result a =
        LogReader::read(bytes, QStringLiteral("a.log"), 0, std::nullopt, true, control);
    QVERIFY(!a.truncated);
    const LogReader::Result b =
        LogReader::read(bytes, QStringLiteral("b.log"), 1, std::nullopt, true, control);
    QVERIFY(b.truncated);
    QCOMPARE(std::count_if(b.streams.begin(), b.streams.end(),
                           [](const RankLog& log) { return log.rank.has_value(); }),
             2);
    QCOMPARE(load.used(std::size_t(LogReader::LoadUnit::RankTags)), std::int64_t(12));
}

void TestLogReader::byteBudgetOfAFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.log"));
    QByteArray bytes;
    for (int i = 0; i < 100; ++i)
        bytes += "line " + QByteArray::number(i).rightJustified(4, '0') + "\n"; // 10 bytes
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    f.close();
    LogReader::Control control;
    control.budget.bytesPerFile = 95;
    const LogReader::Result r =
        LogReader::readFile(path, QStringLiteral("big.log"), 0, 0, false, control);
    QVERIFY(r.ok && r.truncated);
    QVERIFY2(r.message.contains(QLatin1String("read the first 95 bytes")), qPrintable(r.message));
    const RankLog& log = r.streams.front();
    QCOMPARE(log.lineCount(), 10); // 9 whole lines and the head of the tenth
    QCOMPARE(log.lineBytes(8).toByteArray(), QByteArray("line 0008"));
    QCOMPARE(log.lineBytes(9).toByteArray(), QByteArray("line "));
}

// Files of one load share its byte budget: three logs of 1,000 bytes under a budget of 2,500 keep
// 2,500 bytes in all, whatever order they are read in, and the one cut says it was the load's.
void TestLogReader::byteBudgetOfALoad()
{
    QTemporaryDir dir;
    QByteArray bytes;
    for (int i = 0; i < 100; ++i)
        bytes += "line " + QByteArray::number(i).rightJustified(4, '0') + "\n"; // 10 bytes
    LogReader::Control control;
    control.budget.bytesPerLoad = 2500;
    LoadShare load = LogReader::loadShare(control.budget);
    control.load = &load;
    int lines = 0, truncated = 0;
    for (int rank = 0; rank < 3; ++rank) {
        const QString name = QStringLiteral("rank%1.log").arg(rank);
        QFile f(dir.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size());
        f.close();
        const LogReader::Result r =
            LogReader::readFile(dir.filePath(name), name, rank, rank, false, control);
        QVERIFY(r.ok);
        lines += r.streams.front().lineCount();
        if (r.truncated) {
            ++truncated;
            QCOMPARE(r.limit, LoadLimit::LogBytes);
            QVERIFY2(r.message.contains(QLatin1String("read the first 500 bytes")) &&
                         r.message.contains(QLatin1String("2500 log bytes a load")),
                     qPrintable(r.message));
        }
    }
    QCOMPARE(truncated, 1);
    QCOMPARE(lines, 250); // 2,500 bytes of 10-byte lines
    QCOMPARE(load.used(std::size_t(LogReader::LoadUnit::Bytes)), std::int64_t(2500));

    // With the budget spent, a further log keeps nothing and says why.
    QFile f(dir.filePath(QStringLiteral("rank3.log")));
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size());
    f.close();
    const LogReader::Result none =
        LogReader::readFile(dir.filePath(QStringLiteral("rank3.log")), QStringLiteral("rank3.log"),
                            3, 3, false, control);
    QVERIFY(none.ok && none.truncated);
    int kept = 0;
    for (const RankLog& log : none.streams)
        kept += log.lineCount();
    QCOMPARE(kept, 0);
}

// The logs of a load are read on several workers at once: what they take of the load's budget
// adds up to the budget exactly, never past it, however their takes interleave.
void TestLogReader::loadBudgetTakenOnceAcrossThreads()
{
    constexpr int kThreads = 8;
    constexpr int kTakes = 20'000;
    LogReader::Budget budget;
    budget.linesPerLoad = 100'003; // less than the 160,000 lines wanted, and no multiple of 8
    LoadShare load = LogReader::loadShare(budget);
    const auto lines = std::size_t(LogReader::LoadUnit::Lines);
    std::int64_t granted[kThreads] = {};
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t)
        workers.emplace_back([&, t] {
            for (int i = 0; i < kTakes; ++i)
                granted[t] += load.take(lines, 1);
        });
    for (std::thread& w : workers)
        w.join();
    std::int64_t sum = 0;
    for (const std::int64_t g : granted)
        sum += g;
    QCOMPARE(sum, std::int64_t(100'003));
    QCOMPARE(load.used(lines), std::int64_t(100'003));
    QCOMPARE(load.take(lines, 5), std::int64_t(0));
}

// The lines a read returned stay what the file held when read, whatever happens to the file
// after: truncated (a rotation by copytruncate), rewritten, removed.
void TestLogReader::linesOutliveTheFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("rank0.log"));
    QByteArray written;
    for (int i = 0; i < 20000; ++i) // 2 MB-plus: more than one slice and one huge page
        written += "2026-12-02 13:41:34.916 [rank0] INFO step " + QByteArray::number(i) +
                   " loss 0.5 " + QByteArray(64, char('a' + i % 26)) + "\n";
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(written) == written.size());
    f.close();
    const LogReader::Result r = LogReader::readFile(path, QStringLiteral("rank0.log"), 0, 0, false);
    QVERIFY(r.ok);
    QVERIFY(QFile::resize(path, 0));
    const QList<QByteArray> expected = written.split('\n');
    const RankLog& log = r.streams.front();
    QCOMPARE(log.lineCount(), 20000);
    for (int i = 0; i < log.lineCount(); i += 997)
        QCOMPARE(log.lineBytes(i).toByteArray(), expected[i]);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(QByteArray(4096, 'z')) == 4096);
    f.close();
    QVERIFY(QFile::remove(path));
    QCOMPARE(log.lineBytes(19999).toByteArray(), expected[19999]);
    QCOMPARE(log.linesBytes(0, log.lineCount()).toByteArray() + '\n', written);
}

// A log large enough to be read into huge pages (16 MB and more, where the system has them): its
// lines are the file's bytes, split here, and stay so after the file is truncated; a byte budget
// inside it cuts it there.
void TestLogReader::largeFileReadWholeAndCut()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("rank0.log"));
    QByteArray written;
    for (int i = 0; written.size() < 18 * 1024 * 1024 + 12345; ++i)
        written += "2026-12-02 13:41:34.916 [rank0] INFO step " + QByteArray::number(i) + " " +
                   QByteArray(i % 200, char('a' + i % 26)) + "\n";
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(written) == written.size());
    f.close();
    const LogReader::Result r = LogReader::readFile(path, QStringLiteral("rank0.log"), 0, 0, false);
    QVERIFY(r.ok && !r.truncated);
    QVERIFY(QFile::resize(path, 0));
    const RankLog& log = r.streams.front();
    QCOMPARE(qsizetype(log.lineCount()), written.count('\n'));
    QCOMPARE(log.linesBytes(0, log.lineCount()).toByteArray() + '\n', written);
    QCOMPARE(log.lastStep().value_or(-1), log.lineCount() - 1);

    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(written) == written.size());
    f.close();
    LogReader::Control control;
    control.budget.bytesPerFile = 16 * 1024 * 1024 + 7;
    const LogReader::Result cut =
        LogReader::readFile(path, QStringLiteral("rank0.log"), 0, 0, false, control);
    QVERIFY(cut.ok && cut.truncated);
    const RankLog& head = cut.streams.front();
    const QByteArray expected = written.first(control.budget.bytesPerFile);
    QCOMPARE(qsizetype(head.lineCount()), expected.count('\n') + 1);
    QCOMPARE(head.linesBytes(0, head.lineCount()).toByteArray(), expected);
}

// A coloured log (colorlog, loguru, rich): the text the analysis reads has no escapes, and each
// line's colours, as the escapes set them, come back for the view byte span by byte span.
void TestLogReader::ansiColoursKeptForDisplay()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("rank0.log"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("\x1b[32mINFO\x1b[0m step 1\n" // green, then default
            "\x1b[1;31mERROR bad\n"        // bold red, still on at the next line
            "carried\x1b[0m plain\n"       // red until the reset
            "\x1b[38;5;208mamber\x1b[38;2;1;2;3m rgb\x1b[39m\n" // 256 colours, true colour
            "no escape\n");
    f.close();
    const LogReader::Result r = LogReader::readFile(path, QStringLiteral("rank0.log"), 0, 0, false);
    QVERIFY(r.ok);
    QCOMPARE(r.streams.size(), std::size_t(1));
    const RankLog& log = r.streams.front();
    QCOMPARE(log.lineCount(), 5);
    QCOMPARE(log.lineText(0), QStringLiteral("INFO step 1"));
    QCOMPARE(log.lineText(3), QStringLiteral("amber rgb"));
    struct Span {
        qsizetype start, length;
        std::uint32_t rgb;
        bool bold;
    };
    const std::vector<std::vector<Span>> expected = {
        {{0, 4, 0x1000000 | 0x00cd00, false}, {4, 7, 0, false}},
        {{0, 9, 0x1000000 | 0xcd0000, true}},
        {{0, 7, 0x1000000 | 0xcd0000, true}, {7, 6, 0, false}},
        // xterm index 208 = cube (5, 2, 0): ff, 87, 00
        {{0, 5, 0x1000000 | 0xff8700, false}, {5, 4, 0x1000000 | 0x010203, false}},
        {{0, 9, 0, false}},
    };
    for (int i = 0; i < log.lineCount(); ++i) {
        const std::vector<LogColourSpan> got = log.lineColours(i);
        QCOMPARE(got.size(), expected[std::size_t(i)].size());
        for (std::size_t k = 0; k < got.size(); ++k) {
            const Span& e = expected[std::size_t(i)][k];
            QCOMPARE(got[k].start, e.start);
            QCOMPARE(got[k].length, e.length);
            QCOMPARE(got[k].rgb, e.rgb);
            QCOMPARE(got[k].bold, e.bold);
        }
    }
    // A log without escapes keeps no colours.
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write("plain\n");
    f.close();
    const LogReader::Result plain =
        LogReader::readFile(path, QStringLiteral("rank0.log"), 0, 0, false);
    QVERIFY(plain.streams.front().lineColours(0).empty());
}

QTEST_GUILESS_MAIN(TestLogReader)
#include "tst_logreader.moc"
