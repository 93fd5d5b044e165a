#include "model/analysis/configcheck.h"
#include "model/trace/logreader.h"
#include "tests/support/findings.h"

#include <QTest>

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
    void ncclBuildSuffixIsNotAVersion();
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

QByteArray start(const char* port, const char* torch = "2.1.0")
{
    return QByteArray("2026-01-01 10:00:00.000 INFO job: MASTER_ADDR=10.0.0.1 MASTER_PORT=") +
           port + " WORLD_SIZE=3\n2026-01-01 10:00:00.001 INFO job: torch==" + torch + "\n";
}

} // namespace

void TestConfigCheck::agreeingRanksYieldNothing()
{
    std::vector<RankLog> logs;
    for (int r = 0; r < 3; ++r)
        logs.push_back(logOf(r, start("29500")));
    QVERIFY(ConfigCheck::check(logs).empty());
}

void TestConfigCheck::minorityPortIsBlamed()
{
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500")));
    logs.push_back(logOf(1, start("29500")));
    logs.push_back(logOf(2, start("29501")));
    const std::vector<Finding> found = ConfigCheck::check(logs);
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
            QByteArray text = start(port);
            if (r == wrong)
                text += QByteArray("E20260101 10:00:10.000 1 socket.cpp:860] [c10d] The client "
                                   "socket has timed out after 10s while trying to connect to "
                                   "(10.0.0.1, ") +
                        port + ").\n";
            else
                text += "RuntimeError: Socket Timeout\n";
            logs.push_back(logOf(r, text));
        }
        const std::vector<Finding> found = ConfigCheck::check(logs);
        QCOMPARE(found.size(), std::size_t(1));
        QCOMPARE(found.front().ranks, std::vector<int>{wrong});
        QVERIFY(found.front().confidence < 0.95);
    }
    // Without such a line no rank can be told: both are named.
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500")));
    logs.push_back(logOf(1, start("31000")));
    const std::vector<Finding> found = ConfigCheck::check(logs);
    QCOMPARE(found.size(), std::size_t(1));
    QCOMPARE(found.front().ranks, (std::vector<int>{0, 1}));
}

void TestConfigCheck::tieOnVersionNamesEveryRank()
{
    std::vector<RankLog> logs;
    logs.push_back(logOf(0, start("29500", "2.1.0")));
    logs.push_back(logOf(1, start("29500", "2.2.1")));
    const std::vector<Finding> found = ConfigCheck::check(logs);
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
    const std::vector<Finding> found = ConfigCheck::check(logs);
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
    const std::vector<Finding> found = ConfigCheck::check(logs);
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
    const std::vector<Finding> found = ConfigCheck::check(logs, {0, 1});
    QCOMPARE(found.size(), std::size_t(1));
    const Finding& f = found.front();
    QCOMPARE(f.ranks, std::vector<int>{2});
    QCOMPARE(f.conditions, std::vector<std::string>{"world_size_not_launched"});
    QVERIFY2(f.summary.rfind("WORLD_SIZE is 3 but 2 processes were launched", 0) == 0,
             f.summary.c_str());
    QCOMPARE(f.evidence.size(), std::size_t(2));
    // Launched as many as it says: nothing.
    QVERIFY(ConfigCheck::check(logs, {0, 1, 2}).empty());
}

void TestConfigCheck::ncclBuildSuffixIsNotAVersion()
{
    QCOMPARE(ConfigCheck::comparableVersion("2.18.1+cuda12.1"), std::string("2.18.1"));
    QCOMPARE(ConfigCheck::comparableVersion("2.18.1"), std::string("2.18.1"));
    // Two ranks on one NCCL built for two CUDA versions: the CUDA check tells them apart, the
    // NCCL one does not.
    std::vector<RankLog> logs;
    logs.push_back(
        logOf(0, start("29500") + "node1:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"));
    logs.push_back(
        logOf(1, start("29500") + "node1:2:2 [1] NCCL INFO NCCL version 2.18.1+cuda11.8\n"));
    for (const Finding& f : ConfigCheck::check(logs))
        QVERIFY2(f.summary.find("NCCL version") == std::string::npos, f.summary.c_str());
    // The same lines with two NCCL versions: found, so the lines above were read.
    logs[1] = logOf(1, start("29500") + "node1:2:2 [1] NCCL INFO NCCL version 2.19.3+cuda12.1\n");
    const std::vector<Finding> found = ConfigCheck::check(logs);
    QCOMPARE(found.size(), std::size_t(1));
    QVERIFY2(found.front().detail.find("2.18.1 on rank 0; 2.19.3 on rank 1") != std::string::npos,
             found.front().detail.c_str());
}

QTEST_GUILESS_MAIN(TestConfigCheck)
#include "tst_configcheck.moc"
