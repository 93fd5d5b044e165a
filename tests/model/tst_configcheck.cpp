#include "model/analysis/autocheckevaluator.h"
#include "model/analysis/configcheck.h"
#include "model/analysis/sessionanalysis.h"
#include "model/trace/logreader.h"
#include "model/trace/traceread.h"
#include "tests/support/findings.h"

#include <QRegularExpression>
#include <QTest>
#include <algorithm>
#include <cstring>
#include <map>

Q_DECLARE_METATYPE(std::vector<int>)

using namespace rankscope;

// Settings the ranks must share, compared across their logs.
class TestConfigCheck : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void agreeingRanksYieldNothing();
    void minorityPortIsBlamed();
    void tieOnMasterBlamesTheRankThatCouldNotConnect();
    void tieOnVersionNamesEveryRank();
    void splitLauncherLinesAreNotCountedTwice();
    void launcherValueIsTheReference();
    void worldSizeNamesRanksNeverLaunched();
    void worldSizeGivenToInitOutranksTheLaunchers_data();
    void worldSizeGivenToInitOutranksTheLaunchers();
    void worldSizeHeadlineSaysWhatTheLogsShow_data();
    void worldSizeHeadlineSaysWhatTheLogsShow();
    void ncclBuildSuffixIsNotAVersion();
    void factsAreReadFromTheLines();
    void configCheckAndAutoCheckAgree_data();
    void configCheckAndAutoCheckAgree();
};

namespace {

RankLog logOf(int rank, const QByteArray& text, bool split = false)
{
    LogReader::Result r =
        LogReader::read(text, QStringLiteral("rank%1.log").arg(rank), rank, rank, false);
    RankLog log = std::move(r.streams.front());
    log.splitFromCombined = split;
    return log;
}

QByteArray start(const char* port, const char* torch = "2.1.0", const char* world = "3")
{
    return QByteArray("2026-01-01 10:00:00.000 INFO job: MASTER_ADDR=10.0.0.1 MASTER_PORT=") +
           port + " WORLD_SIZE=" + world + "\n2026-01-01 10:00:00.001 INFO job: torch==" + torch +
           "\n";
}

} // namespace

void TestConfigCheck::agreeingRanksYieldNothing()
{
    std::vector<RankLog> logs;
    for (int r = 0; r < 3; ++r)
        logs.push_back(logOf(r, start("29500")));
    QVERIFY(ConfigCheck::check(RankFacts::build(logs)).empty());
}

void TestConfigCheck::minorityPortIsBlamed()
{
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500")));
    logs.push_back(logOf(1, start("29500")));
    logs.push_back(logOf(2, start("29501")));
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(found.size(), std::size_t(1));
    const Finding& f = found.front();
    QCOMPARE(f.kind, FindingKind::ConfigMismatch);
    QCOMPARE(f.severity, Severity::Error);
    QCOMPARE(f.ranks, std::vector<int>{2});
    QVERIFY2(f.summary.find("MASTER_PORT 29501 where ranks 0, 1 use 29500") != std::string::npos,
             f.summary.c_str());
    QCOMPARE(f.evidence.front().path, std::string("rank2.log"));
    QCOMPARE(f.evidence.front().line, 1);
    QCOMPARE(f.conditions, std::vector<std::string>{"rendezvous_mismatch"});
    QVERIFY2(f.detail.find("29500 on ranks 0, 1; 29501 on rank 2") != std::string::npos,
             f.detail.c_str());
}

void TestConfigCheck::tieOnMasterBlamesTheRankThatCouldNotConnect()
{
    // Two ranks, two ports: the one whose log says it could not connect to its port has the
    // wrong one, whichever rank it is (under torchrun rank 0 does not host the store).
    for (const int wrong : {0, 1}) {
        std::vector<RankLog> logs;
        for (int r = 0; r < 2; ++r) {
            const char* port = r == wrong ? "31000" : "29500";
            QByteArray text = start(port, "2.1.0", "2");
            if (r == wrong)
                text += QByteArray("E20260101 10:00:10.000 1 socket.cpp:860] [c10d] The client "
                                   "socket has timed out after 10s while trying to connect to "
                                   "(10.0.0.1, ") +
                        port + ").\n";
            else
                text += "RuntimeError: Socket Timeout\n";
            logs.push_back(logOf(r, text));
        }
        const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
        QCOMPARE(found.size(), std::size_t(1));
        QCOMPARE(found.front().ranks, std::vector<int>{wrong});
        QVERIFY(found.front().confidence < 0.95);
        // One rank against one: the other's value is cited as the one reached, not as a
        // majority's.
        const Evidence& reference = found.front().evidence.back();
        QCOMPARE(reference.rank, 1 - wrong);
        QVERIFY2(reference.text.find("majority") == std::string::npos, reference.text.c_str());
    }
    // Without such a line no rank can be told: both are named.
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500", "2.1.0", "2")));
    logs.push_back(logOf(1, start("31000", "2.1.0", "2")));
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found.front().ranks, (std::vector<int>{0, 1}));
}

void TestConfigCheck::tieOnVersionNamesEveryRank()
{
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500", "2.1.0", "2")));
    logs.push_back(logOf(1, start("29500", "2.2.1", "2")));
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(found.size(), std::size_t(1));
    const Finding& f = found.front();
    QCOMPARE(f.severity, Severity::Warning);
    QCOMPARE(f.ranks, (std::vector<int>{0, 1}));
    QVERIFY2(f.summary.find("no value has a majority") != std::string::npos, f.summary.c_str());
    QCOMPARE(f.conditions, std::vector<std::string>{"framework_version_mismatch"});
}

void TestConfigCheck::splitLauncherLinesAreNotCountedTwice()
{
    // Rank 2's own log says 29501; a launcher line tagged [rank2] that repeats another value
    // (a line printed before a re-launch, say) does not outvote it.
    std::vector<RankLog> logs;
    logs.push_back(logOf(2, start("29501"), true));
    logs.push_back(logOf(0, start("29500")));
    logs.push_back(logOf(1, start("29500")));
    logs.push_back(logOf(2, start("29500")));
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QVERIFY(found.empty());
}

void TestConfigCheck::launcherValueIsTheReference()
{
    // torchrun says which port it meant; two ranks got another one: they are the odd ones,
    // majority or not.
    std::vector<RankLog> logs;
    LogReader::Result launcher =
        LogReader::read("INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous "
                        "complete for workers. Result: restart_count=0 master_addr=10.0.0.1 "
                        "master_port=29501 group_rank=0\n",
                        QStringLiteral("launcher.log"), 9, std::nullopt, false);
    logs.push_back(std::move(launcher.streams.front()));
    logs.push_back(logOf(0, start("29500")));
    logs.push_back(logOf(1, start("29500")));
    logs.push_back(logOf(2, start("29501")));
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found.front().ranks, (std::vector<int>{0, 1}));
    QVERIFY2(found.front().summary.find("the launcher states") != std::string::npos,
             found.front().summary.c_str());
}

// Every rank says WORLD_SIZE=3 (start()) and only ranks 0 and 1 left a file: rank 2 never
// started, and the finding says so with the values.
void TestConfigCheck::worldSizeNamesRanksNeverLaunched()
{
    std::vector<RankLog> logs;
    for (int r = 0; r < 2; ++r)
        logs.push_back(logOf(r, start("29500")));
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(found.size(), std::size_t(1));
    const Finding& f = found.front();
    QCOMPARE(f.ranks, std::vector<int>{2});
    QCOMPARE(f.conditions, std::vector<std::string>{"world_size_not_launched"});
    QVERIFY2(f.summary.rfind("WORLD_SIZE is 3 but 2 processes were launched", 0) == 0,
             f.summary.c_str());
    QCOMPARE(f.evidence.size(), std::size_t(2));
    // Launched as many as it says: nothing.
    logs.push_back(logOf(2, start("29500")));
    QVERIFY(ConfigCheck::check(RankFacts::build(logs)).empty());
    // Ranks that got past the rendezvous (a training step) ran with the others: the one left out
    // did start, it only left no file here (the missing-ranks warning says so), not a launch.
    logs.pop_back();
    logs[0] = logOf(0, start("29500") + "2026-01-01 10:00:01.000 INFO train: step 3 loss 0.5\n");
    const RankFacts trained = RankFacts::build(logs);
    QCOMPARE(trained.lastLogStep.size(), std::size_t(1));
    QVERIFY(!trained.presence.neverStarted);
    QCOMPARE(trained.presence.absent, (std::vector<RankRange>{{2, 2}}));
    QVERIFY(ConfigCheck::check(trained).empty());
}

// A rank's world size is the last it states: its program's init_process_group(world_size=N)
// after the WORLD_SIZE it was launched with. The job is meant to have the size every rank was
// launched with when some rank kept it, else the one most ranks state (none on a tie), never
// the largest statement: no rank is missing for it. The ranks that state another are the odd ones.
void TestConfigCheck::worldSizeGivenToInitOutranksTheLaunchers_data()
{
    QTest::addColumn<std::vector<int>>("given"); // what each rank passes to init
    QTest::addColumn<int>("launched");           // the WORLD_SIZE every rank is launched with
    QTest::newRow("one rank one more") << std::vector<int>{3, 4, 3} << 3;
    QTest::newRow("one rank one fewer") << std::vector<int>{3, 3, 2} << 3;
    QTest::newRow("two ranks, one overrides") << std::vector<int>{2, 3} << 2;
    QTest::newRow("launched with neither, most ranks") << std::vector<int>{4, 4, 5} << 3;
    QTest::newRow("launched with neither, a tie") << std::vector<int>{4, 5} << 2;
}

void TestConfigCheck::worldSizeGivenToInitOutranksTheLaunchers()
{
    QFETCH(std::vector<int>, given);
    QFETCH(int, launched);
    std::vector<RankLog> logs;
    std::map<int, std::vector<int>> ranksOf;
    for (int r = 0; r < int(given.size()); ++r) {
        const QByteArray init = "2026-01-01 10:00:00.002 INFO job: init_process_group(world_size=" +
                                QByteArray::number(given[std::size_t(r)]) + ")\n";
        logs.push_back(logOf(r, start("29500", "2.1.0", QByteArray::number(launched)) + init));
        ranksOf[given[std::size_t(r)]].push_back(r);
    }
    const RankFacts facts = RankFacts::build(logs);
    for (int r = 0; r < int(given.size()); ++r) {
        QCOMPARE(facts.worldSize.at(r).value, std::to_string(given[std::size_t(r)]));
        QCOMPARE(facts.worldSize.at(r).source.line, 3);
    }
    int intended = ranksOf.count(launched) ? launched : 0;
    std::size_t most = 0;
    for (const auto& [value, ranks] : ranksOf)
        most = std::max(most, ranks.size());
    if (!intended && std::count_if(ranksOf.begin(), ranksOf.end(),
                                   [most](const auto& v) { return v.second.size() == most; }) == 1)
        for (const auto& [value, ranks] : ranksOf)
            if (ranks.size() == most) intended = value;
    QCOMPARE(facts.presence.worldSize, intended);
    QCOMPARE(facts.statedWorldSize, intended);
    QCOMPARE(rankCount(facts.presence.absent),
             std::int64_t(std::max(0, intended - int(given.size()))));
    const std::vector<Finding> found = ConfigCheck::check(facts);
    QVERIFY(!found.empty());
    QCOMPARE(found.front().conditions, std::vector<std::string>{"world_size_mismatch"});
    std::vector<int> odd;
    for (const auto& [value, ranks] : ranksOf)
        if (value != intended) odd.insert(odd.end(), ranks.begin(), ranks.end());
    std::sort(odd.begin(), odd.end());
    QCOMPARE(found.front().ranks, odd);
}

// The headline says what each rank's lines show: the WORLD_SIZE it was launched with and the size
// it passed to init_process_group, each only where a line states it (0: no such line).
void TestConfigCheck::worldSizeHeadlineSaysWhatTheLogsShow_data()
{
    QTest::addColumn<std::vector<int>>("launched"); // WORLD_SIZE= in the rank's environment line
    QTest::addColumn<std::vector<int>>("given");    // init_process_group(world_size=) after it
    QTest::addColumn<QString>("headline");
    QTest::addColumn<QString>("why"); // the finding's detail, which its fix reason quotes
    QTest::newRow("wrong_world_init_w3: one rank passes one more")
        << std::vector<int>{3, 3, 3} << std::vector<int>{3, 4, 3}
        << QStringLiteral("rank 1 was launched with WORLD_SIZE 3 and passed world_size=4 to "
                          "init_process_group, where ranks 0, 2 passed 3")
        << QStringLiteral("world size 3 on ranks 0, 2; 4 on rank 1");
    QTest::newRow("two ranks pass one more")
        << std::vector<int>{4, 4, 4, 4, 4} << std::vector<int>{4, 5, 5, 4, 4}
        << QStringLiteral("ranks 1, 2 were launched with WORLD_SIZE 4 and passed world_size=5 "
                          "to init_process_group, where ranks 0, 3, 4 passed 4")
        << QStringLiteral("world size 4 on ranks 0, 3, 4; 5 on ranks 1, 2");
    QTest::newRow("launched apart, no init line")
        << std::vector<int>{3, 4, 3} << std::vector<int>{0, 0, 0}
        << QStringLiteral("rank 1 uses WORLD_SIZE 4, where ranks 0, 2 use 3")
        << QStringLiteral("WORLD_SIZE 3 on ranks 0, 2; 4 on rank 1");
    QTest::newRow("init lines only")
        << std::vector<int>{0, 0, 0} << std::vector<int>{2, 2, 3}
        << QStringLiteral("rank 2 passed world_size=3 to init_process_group, where ranks 0, 1 "
                          "passed 2")
        << QStringLiteral("world size 2 on ranks 0, 1; 3 on rank 2");
    QTest::newRow("launched apart, one passes what it was launched with")
        << std::vector<int>{3, 3, 4} << std::vector<int>{3, 3, 4}
        << QStringLiteral("rank 2 was launched with WORLD_SIZE 4 and passed world_size=4 to "
                          "init_process_group, where ranks 0, 1 passed 3")
        << QStringLiteral("world size 3 on ranks 0, 1; 4 on rank 2");
}

void TestConfigCheck::worldSizeHeadlineSaysWhatTheLogsShow()
{
    QFETCH(std::vector<int>, launched);
    QFETCH(std::vector<int>, given);
    QFETCH(QString, headline);
    QFETCH(QString, why);
    std::vector<RankLog> logs;
    for (int r = 0; r < int(given.size()); ++r) {
        QByteArray text =
            "2026-01-01 10:00:00.000 INFO job: MASTER_ADDR=10.0.0.1 MASTER_PORT=29500";
        if (launched[std::size_t(r)] > 0)
            text += " WORLD_SIZE=" + QByteArray::number(launched[std::size_t(r)]);
        text += "\n";
        if (given[std::size_t(r)] > 0)
            text += "2026-01-01 10:00:00.002 INFO job: init_process_group(world_size=" +
                    QByteArray::number(given[std::size_t(r)]) + ")\n";
        logs.push_back(logOf(r, text));
    }
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    const auto f = std::find_if(found.begin(), found.end(), [](const Finding& x) {
        return x.conditions == std::vector<std::string>{"world_size_mismatch"};
    });
    QVERIFY(f != found.end());
    QVERIFY2(QString::fromStdString(f->summary).startsWith(headline), f->summary.c_str());
    QCOMPARE(QString::fromStdString(f->detail), why);
}

void TestConfigCheck::ncclBuildSuffixIsNotAVersion()
{
    QCOMPARE(comparableVersion("2.18.1+cuda12.1"), std::string("2.18.1"));
    QCOMPARE(comparableVersion("2.18.1"), std::string("2.18.1"));
    // Two ranks on one NCCL built for two CUDA versions: the CUDA comparison tells them apart (the
    // build NCCL names is the CUDA version of a rank that prints none), the NCCL one does not.
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500", "2.1.0", "2") +
                                "node1:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"));
    logs.push_back(logOf(1, start("29500", "2.1.0", "2") +
                                "node1:2:2 [1] NCCL INFO NCCL version 2.18.1+cuda11.8\n"));
    const std::vector<Finding> builds = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(builds.size(), std::size_t(1));
    QVERIFY2(builds.front().detail == "the CUDA version 11.8 on rank 1; 12.1 on rank 0",
             builds.front().detail.c_str());
    // The same lines with two NCCL versions: found, so the lines above were read.
    logs[1] = logOf(1, start("29500", "2.1.0", "2") +
                           "node1:2:2 [1] NCCL INFO NCCL version 2.19.3+cuda12.1\n");
    const std::vector<Finding> found = ConfigCheck::check(RankFacts::build(logs));
    QCOMPARE(found.size(), std::size_t(1));
    QVERIFY2(found.front().detail.find("2.18.1 on rank 0; 2.19.3 on rank 1") != std::string::npos,
             found.front().detail.c_str());
}

namespace {

// What a raw line states, as the test reads it: the text after `key` up to a blank.
std::string statedAfter(const QByteArray& text, const char* key)
{
    const qsizetype at = text.indexOf(key);
    if (at < 0) return {};
    const qsizetype from = at + qsizetype(std::strlen(key));
    qsizetype end = from;
    while (end < text.size() && !QChar::fromLatin1(text[end]).isSpace())
        ++end;
    return text.mid(from, end - from).toStdString();
}

// The 1-based number of the first line of `text` holding `key`.
int lineOf(const QByteArray& text, const char* key)
{
    const QList<QByteArray> lines = text.split('\n');
    for (qsizetype i = 0; i < lines.size(); ++i)
        if (lines[i].contains(key)) return int(i) + 1;
    return -1;
}

} // namespace

// Each fact is the first value the rank's own log states, with that line as its source; the
// launcher's copy of a rank's lines does not count when the rank has its own log; a rank
// without a WORLD_SIZE line has its NCCL communicator's size apart from it.
void TestConfigCheck::factsAreReadFromTheLines()
{
    const QByteArray own0 = start("29500", "2.1.0") +
                            "node1:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
                            "node1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
                            "2026-01-01 10:00:01.000 INFO step=7 loss=0.1\n";
    const QByteArray own1 = QByteArray("2026-01-01 10:00:00.001 INFO job: torch==2.2.1\n") +
                            "node2:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 3 cudaDev 1 busId 0 "
                            "commId 0x2 - Init COMPLETE\n";
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("31000"), true)); // a launcher's copy of rank 0's lines
    logs.push_back(logOf(0, own0));
    logs.push_back(logOf(1, own1));
    const RankFacts facts = RankFacts::build(logs);
    QCOMPARE(facts.ranks, (std::vector<int>{0, 1}));

    QCOMPARE(facts.masterPort.at(0).value, statedAfter(own0, "MASTER_PORT="));
    QCOMPARE(facts.masterPort.at(0).source.line, lineOf(own0, "MASTER_PORT="));
    QCOMPARE(facts.masterPort.at(0).source.path, std::string("rank0.log"));
    QVERIFY(!facts.masterPort.count(1));
    QCOMPARE(facts.worldSize.at(0).value, statedAfter(own0, "WORLD_SIZE="));
    QVERIFY(!facts.worldSize.count(1));
    QCOMPARE(facts.communicatorSize.at(1).value, statedAfter(own1, "nranks "));
    QCOMPARE(facts.communicatorSize.at(1).source.line, lineOf(own1, "nranks"));
    QCOMPARE(facts.torchVersion.at(0).value, statedAfter(own0, "torch=="));
    QCOMPARE(facts.torchVersion.at(1).value, statedAfter(own1, "torch=="));
    QCOMPARE(facts.torchVersion.at(1).source.line, lineOf(own1, "torch=="));
    // NCCL's version without its build suffix, the suffix as the CUDA version.
    const std::string nccl = statedAfter(own0, "NCCL version ");
    QCOMPARE(facts.ncclVersion.at(0).value, nccl.substr(0, nccl.find('+')));
    QCOMPARE(facts.cudaVersion.at(0).value, nccl.substr(nccl.find("+cuda") + 5));
    QCOMPARE(facts.cudaVersion.at(0).source.line, lineOf(own0, "NCCL version"));
    QCOMPARE(facts.ncclNetwork.at(0).value, std::string("Socket eth0"));
    QCOMPARE(facts.lastLogStep.at(0).value, statedAfter(own0, "step="));
    QCOMPARE(facts.lastLogStep.at(0).source.line, lineOf(own0, "step="));
    QCOMPARE(facts.ranksWithout(facts.ncclVersion), std::vector<int>{1});
}

// The same lines through ConfigCheck and the version and rendezvous auto-checks: a setting
// ConfigCheck reports as differing fails its auto-check, and one it does not report does not
// fail it. Before the facts were shared, an NCCL build suffix (+cuda11.8 against +cuda12.1) was a
// CUDA difference to the auto-check only, and a communicator size one to WORLD_SIZE's.
void TestConfigCheck::configCheckAndAutoCheckAgree_data()
{
    QTest::addColumn<QByteArray>("line0");
    QTest::addColumn<QByteArray>("line1");
    QTest::addColumn<QString>("check");
    QTest::addColumn<bool>("differ");
    const QString versions = QStringLiteral("same_framework_version");
    const QString rendezvous = QStringLiteral("rendezvous_env_consistent");
    QTest::newRow("nccl build suffix only")
        << QByteArray("n:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n")
        << QByteArray("n:2:2 [1] NCCL INFO NCCL version 2.18.1\n") << versions << false;
    QTest::newRow("nccl built for two cudas")
        << QByteArray("n:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n")
        << QByteArray("n:2:2 [1] NCCL INFO NCCL version 2.18.1+cuda11.8\n") << versions << true;
    QTest::newRow("two nccl versions")
        << QByteArray("n:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n")
        << QByteArray("n:2:2 [1] NCCL INFO NCCL version 2.19.3+cuda12.1\n") << versions << true;
    QTest::newRow("a subgroup's communicator is no world size")
        << QByteArray("2026-01-01 10:00:00.000 INFO job: WORLD_SIZE=2\n")
        << QByteArray("n:2:2 [1] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 1 busId 0 commId "
                      "0x2 - Init COMPLETE\n")
        << rendezvous << false;
    QTest::newRow("two world sizes")
        << QByteArray("2026-01-01 10:00:00.000 INFO job: WORLD_SIZE=2\n")
        << QByteArray("2026-01-01 10:00:00.000 INFO job: WORLD_SIZE=3\n") << rendezvous << true;
}

void TestConfigCheck::configCheckAndAutoCheckAgree()
{
    QFETCH(QByteArray, line0);
    QFETCH(QByteArray, line1);
    QFETCH(QString, check);
    QFETCH(bool, differ);
    TraceRead read;
    read.logs.push_back(logOf(0, line0));
    read.logs.push_back(logOf(1, line1));
    const RankFacts facts = RankFacts::build(read.logs);
    const std::vector<Finding> found = ConfigCheck::check(facts);
    QCOMPARE(!found.empty(), differ);
    AnalysisResult analysis;
    analysis.findings = found;
    for (const AutoCheckResult& r : AutoCheckEvaluator::evaluateAll(read, facts, analysis, {})) {
        if (r.checkId != check) continue;
        QVERIFY2((r.outcome == AutoCheckOutcome::Failed) == differ, qPrintable(r.evidenceText()));
        return;
    }
    QFAIL("the check was not evaluated");
}

QTEST_GUILESS_MAIN(TestConfigCheck)
#include "tst_configcheck.moc"
