#include "model/analysis/collectivematcher.h"
#include "model/trace/logreader.h"
#include "model/trace/ncclcollectives.h"
#include "model/tracesession.h"
#include "tests/support/findings.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace rankscope;

// Collectives from NCCL_DEBUG_SUBSYS=COLL lines: commId mapping, opCount sequence, sizes, and
// what the matcher finds when one rank's calls differ.
class TestNcclCollectives : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void names();
    void recordsCarryTheLine();
    void healthyRunMatches();
    void deviations_data();
    void deviations();
    void subCommunicatorMembership();
    void commWithoutCommIdIsCounted();
    void folderYieldsHangOnLaggingRank();
};

namespace {

struct Call {
    const char* op = "AllReduce";
    long count = 1024;
    int dtype = 7;
    int redOp = 0;
    int root = 0;
};

// One rank's NCCL log: an init line for the world communicator (and optionally a second one),
// then one COLL line per call. Pointers differ per rank, as they do between processes.
QByteArray ncclLog(int rank, int world, const std::vector<Call>& calls,
                   const char* commId = "0xabc123")
{
    const QByteArray host = "node" + QByteArray::number(rank / 8);
    const QByteArray pid = QByteArray::number(1000 + rank);
    const QByteArray prefix =
        host + ":" + pid + ":" + pid + " [" + QByteArray::number(rank % 8) + "] NCCL INFO ";
    const QByteArray comm = "0x55" + QByteArray::number(rank) + "a0";
    QByteArray out = prefix + "comm " + comm + " rank " + QByteArray::number(rank) + " nranks " +
                     QByteArray::number(world) + " cudaDev " + QByteArray::number(rank % 8) +
                     " busId 1b000";
    if (commId) out += QByteArray(" commId ") + commId;
    out += " - Init COMPLETE\n";
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const Call& c = calls[i];
        out += prefix + c.op + ": opCount " + QByteArray::number(qulonglong(i), 16) +
               " sendbuff 0x7f00 recvbuff 0x7f10 count " + QByteArray::number(c.count) +
               " datatype " + QByteArray::number(c.dtype) + " op " + QByteArray::number(c.redOp) +
               " root " + QByteArray::number(c.root) + " comm " + comm +
               " [nranks=" + QByteArray::number(world) + "] stream 0x5600\n";
    }
    return out;
}

RankLog readLog(const QByteArray& text, int rank)
{
    LogReader::Result r = LogReader::read(text, QStringLiteral("rank%1.log").arg(rank), rank, rank,
                                          /*splitByTag=*/false);
    return std::move(r.streams.front());
}

std::vector<Call> steps(int n)
{
    std::vector<Call> calls;
    for (int i = 0; i < n; ++i) {
        calls.push_back({"AllReduce", 6792, 7, 0, 0});
        calls.push_back({"Broadcast", 16, 4, 0, 0});
    }
    return calls;
}

} // namespace

void TestNcclCollectives::names()
{
    QCOMPARE(NcclCollectives::opName("AllReduce"), std::string("all_reduce"));
    QCOMPARE(NcclCollectives::opName("ReduceScatter"), std::string("reduce_scatter"));
    QCOMPARE(NcclCollectives::opName("AlltoAll"), std::string("all_to_all"));
    QCOMPARE(NcclCollectives::opName("FutureOp"), std::string("futureop"));
    QCOMPARE(NcclCollectives::dtypeName("7"), std::string("Float"));
    QCOMPARE(NcclCollectives::dtypeName("9"), std::string("BFloat16"));
    QCOMPARE(NcclCollectives::dtypeName("42"), std::string("nccl dtype 42"));
    QCOMPARE(NcclCollectives::reduceOpName("2"), std::string("max"));
    QCOMPARE(NcclCollectives::reduceOpName("7"), std::string("custom op 7"));
}

void TestNcclCollectives::recordsCarryTheLine()
{
    std::vector<RankLog> logs;
    logs.push_back(readLog(ncclLog(3, 4,
                                   {{"AllReduce", 6792, 7, 0, 0},
                                    {"AllGather", 100, 6, 0, 0},
                                    {"ReduceScatter", 25, 9, 2, 0},
                                    {"Broadcast", 8, 4, 0, 1}}),
                           3));
    EventStore store;
    const NcclCollectives::Result r = NcclCollectives::append(logs, store);
    QCOMPARE(r.appended, std::size_t(4));
    QCOMPARE(store.collectives.size(), std::size_t(4));
    const CollectiveRecord& ar = store.collectives[0];
    QCOMPARE(ar.rank, 3);
    QCOMPARE(store.strings.view(ar.op), std::string_view("all_reduce"));
    QCOMPARE(store.strings.view(ar.processGroupName), std::string_view("nccl:0xabc123"));
    QCOMPARE(ar.groupSize, 4);
    QCOMPARE(ar.seq, 0);
    QVERIFY(ar.seqFromSource);
    QCOMPARE(ar.inNelems, 6792);
    QCOMPARE(ar.outNelems, 6792);
    QCOMPARE(store.strings.view(ar.dtype), std::string_view("Float"));
    QCOMPARE(store.strings.view(ar.reduceOp), std::string_view("sum"));
    QCOMPARE(ar.sourceLine, 2);
    QCOMPARE(ar.sourceIndex, 3);
    // all_gather: NCCL's count is what each rank sends; reduce_scatter: what each receives.
    QCOMPARE(store.collectives[1].inNelems, 100);
    QCOMPARE(store.collectives[1].outNelems, 400);
    QCOMPARE(store.collectives[2].inNelems, 100);
    QCOMPARE(store.collectives[2].outNelems, 25);
    QCOMPARE(store.strings.view(store.collectives[2].reduceOp), std::string_view("max"));
    QCOMPARE(store.collectives[3].root, 1);
    QCOMPARE(store.collectives[3].seq, 3);
}

void TestNcclCollectives::healthyRunMatches()
{
    std::vector<RankLog> logs;
    for (int r = 0; r < 4; ++r)
        logs.push_back(readLog(ncclLog(r, 4, steps(5)), r));
    EventStore store;
    NcclCollectives::append(logs, store);
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(1));
    QCOMPARE(groups[0].members, (std::vector<int>{0, 1, 2, 3}));
    QVERIFY(groups[0].membersFromSource);
    QCOMPARE(groups[0].collectives.size(), std::size_t(10));
    QCOMPARE(groups[0].mismatchCount, 0);
}

void TestNcclCollectives::deviations_data()
{
    QTest::addColumn<int>("call");  // index of the call rank 2 makes differently
    QTest::addColumn<int>("field"); // 0 count, 1 dtype, 2 reduce op, 3 root, 4 op name
    QTest::addColumn<QString>("kind");
    QTest::addRow("count") << 4 << 0 << "size";
    QTest::addRow("dtype") << 6 << 1 << "dtype";
    QTest::addRow("reduce op") << 2 << 2 << "reduce_op";
    QTest::addRow("broadcast root") << 3 << 3 << "root";
    QTest::addRow("op") << 8 << 4 << "op_type";
}

void TestNcclCollectives::deviations()
{
    QFETCH(int, call);
    QFETCH(int, field);
    QFETCH(QString, kind);
    std::vector<RankLog> logs;
    for (int r = 0; r < 4; ++r) {
        std::vector<Call> calls = steps(6);
        if (r == 2) {
            Call& c = calls[std::size_t(call)];
            if (field == 0) c.count *= 2;
            if (field == 1) c.dtype = 6;
            if (field == 2) c.redOp = 2;
            if (field == 3) c.root = 3;
            if (field == 4) c.op = "AllGather";
        }
        logs.push_back(readLog(ncclLog(r, 4, calls), r));
    }
    EventStore store;
    NcclCollectives::append(logs, store);
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(1));
    const CollectiveGroup& g = groups[0];
    QCOMPARE(g.firstMismatch, call);
    const MatchedCollective& row = g.collectives[std::size_t(call)];
    QCOMPARE(QString::fromLatin1(mismatchKindName(row.mismatch)), kind);
    QCOMPARE(row.culprits, std::vector<int>{2});
}

void TestNcclCollectives::subCommunicatorMembership()
{
    // Ranks 0 and 1 also build a 2-rank communicator (a tensor-parallel pair): its group has
    // those two members, so ranks 2 and 3 are not missing from its collectives.
    std::vector<RankLog> logs;
    for (int r = 0; r < 4; ++r) {
        QByteArray text = ncclLog(r, 4, steps(2));
        if (r < 2) {
            const QByteArray prefix = "node0:" + QByteArray::number(1000 + r) + ":1 [" +
                                      QByteArray::number(r) + "] NCCL INFO ";
            text += prefix + "comm 0x99" + QByteArray::number(r) + " rank " +
                    QByteArray::number(r) + " nranks 2 cudaDev 0 busId 1b000 commId 0xpair" +
                    " - Init COMPLETE\n";
            text += prefix + "AllGather: opCount 0 sendbuff 0x1 recvbuff 0x2 count 8 datatype 7 " +
                    "op 0 root 0 comm 0x99" + QByteArray::number(r) + " [nranks=2] stream 0x3\n";
        }
        logs.push_back(readLog(text, r));
    }
    EventStore store;
    NcclCollectives::append(logs, store);
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(2));
    for (const CollectiveGroup& g : groups) {
        QCOMPARE(g.mismatchCount, 0);
        if (g.name == "nccl:0xpair") QCOMPARE(g.members, (std::vector<int>{0, 1}));
    }
}

void TestNcclCollectives::commWithoutCommIdIsCounted()
{
    std::vector<RankLog> logs;
    logs.push_back(readLog(ncclLog(0, 2, steps(3), nullptr), 0));
    EventStore store;
    const NcclCollectives::Result r = NcclCollectives::append(logs, store);
    QCOMPARE(r.appended, std::size_t(0));
    QCOMPARE(r.withoutCommId, std::size_t(6));
    QVERIFY(store.collectives.empty());
}

void TestNcclCollectives::folderYieldsHangOnLaggingRank()
{
    // Rank 1 stops issuing after 3 steps; the others go on to a 4th: the laggard is rank 1.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (int r = 0; r < 3; ++r) {
        QFile f(dir.filePath(QStringLiteral("nccl_rank%1.log").arg(r)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(ncclLog(r, 3, steps(r == 1 ? 3 : 4)));
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QCOMPARE(session->events.collectives.size(), std::size_t(8 + 6 + 8));
    const Finding* top = test::topError(session->analysis);
    QVERIFY(top);
    QCOMPARE(top->ranks, std::vector<int>{1});
    QCOMPARE(top->processGroup, std::string("nccl:0xabc123"));
    QCOMPARE(top->seq, 6);
    bool cites = false;
    for (const Evidence& e : top->evidence)
        cites = cites || (e.path.find("nccl_rank") == 0 && e.line > 0);
    QVERIFY2(cites, top->summary.c_str());
}

QTEST_GUILESS_MAIN(TestNcclCollectives)
#include "tst_ncclcollectives.moc"
