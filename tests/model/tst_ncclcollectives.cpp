#include "model/analysis/collectivematcher.h"
#include "model/trace/logreader.h"
#include "model/trace/ncclcollectives.h"
#include "model/trace/ncclgroupmapper.h"
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
    void c10dGroupTakesCommunicator_data();
    void c10dGroupTakesCommunicator();
    void allToAllBatchIsOneCollective();
    void sizeMismatchReportedOnce();
    void separateWhenNotTheSame_data();
    void separateWhenNotTheSame();
    void folderReportsMismatchOnce();
    void folderWithLogOnlyRank_data();
    void folderWithLogOnlyRank();
    void dtypeSpellingsOfOneNcclType_data();
    void dtypeSpellingsOfOneNcclType();
    void folderWithBoolTensors();
    void unlistedGroupIsTheListedWorld_data();
    void unlistedGroupIsTheListedWorld();
    void windowWithoutSeq_data();
    void windowWithoutSeq();
    void folderTraceWithoutSeq_data();
    void folderTraceWithoutSeq();
};

namespace {

struct Call {
    const char* op = "AllReduce";
    long count = 1024;
    int dtype = 7;
    int redOp = 0;
    int root = 0;
    bool batchedWithPrevious = false; // in one ncclGroupStart/End batch with the previous call
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
    qulonglong opCount = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const Call& c = calls[i];
        if (i > 0 && !c.batchedWithPrevious) ++opCount;
        out += prefix + c.op + ": opCount " + QByteArray::number(opCount, 16) +
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

bool isPointToPoint(const Call& c)
{
    return std::string_view(c.op) == "Send" || std::string_view(c.op) == "Recv";
}

// c10d's records of the collectives among `calls` numbered `from` to `to` - 1 (point-to-point
// calls have no number, a batch is one collective of the summed size), with c10d's seq (from 1),
// as a trace or a dump of rank `rank` holds them.
void appendC10d(EventStore& store, int rank, int world, const std::vector<Call>& calls,
                std::int64_t from, std::int64_t to, const char* group = "0",
                std::vector<int> groupRanks = {})
{
    std::int64_t seq = 0;
    bool previousHeld = false;
    for (const Call& call : calls) {
        if (isPointToPoint(call)) continue;
        if (call.batchedWithPrevious) {
            if (previousHeld) {
                store.collectives.back().inNelems += call.count;
                store.collectives.back().outNelems += call.count;
            }
            continue;
        }
        previousHeld = seq >= from && seq < to;
        ++seq;
        if (!previousHeld) continue;
        CollectiveRecord c;
        c.rank = rank;
        c.op = store.strings.intern(NcclCollectives::opName(call.op));
        c.processGroupName = store.strings.intern(group);
        c.groupRanks = store.rankLists.intern(groupRanks);
        c.groupSize = groupRanks.empty() ? world : int(groupRanks.size());
        c.seq = seq;
        c.seqFromSource = true;
        c.inNelems = c.outNelems = call.count;
        c.dtype = store.strings.intern(NcclCollectives::dtypeName(std::to_string(call.dtype)));
        c.issueStartNs = 1'000'000 * seq;
        c.execStartNs = c.issueStartNs + 1000;
        c.execEndNs = c.issueStartNs + 5000;
        c.state = CollectiveRecord::State::Completed;
        store.collectives.push_back(std::move(c));
    }
}

// How a trace writes its calls: PyTorch names a uint8 tensor's dtype by the tensor's, and
// older versions write no Seq.
struct TraceStyle {
    const char* uint8 = "Byte";
    bool seqArgs = true;
};

// The same collectives as a Kineto trace's record_param_comms events (args as PyTorch writes),
// each launching its NCCL kernel, which completes.
QByteArray kinetoTrace(int world, const std::vector<Call>& calls, std::int64_t from,
                       std::int64_t to, TraceStyle style = {})
{
    QByteArray out = R"({"schemaVersion":1,"traceEvents":[)";
    std::int64_t seq = 0;
    bool first = true;
    for (const Call& call : calls) {
        if (isPointToPoint(call) || seq++ < from || seq > to) continue;
        if (!first) out += ',';
        first = false;
        const QByteArray id = QByteArray::number(qlonglong(seq));
        const QByteArray kernelTs = QByteArray::number(qlonglong(1000 * seq + 30));
        out += R"({"ph":"s","cat":"ac2g","name":"ac2g","pid":7,"tid":7,"id":)" + id + R"(,"ts":)" +
               QByteArray::number(qlonglong(1000 * seq + 10)) + "},";
        out += R"({"ph":"X","cat":"kernel","name":"ncclDevKernel_)" + QByteArray(call.op) +
               R"(_RING_LL","pid":0,"tid":7,"ts":)" + kernelTs + R"(,"dur":200},)";
        out += R"({"ph":"f","cat":"ac2g","name":"ac2g","pid":0,"tid":7,"bp":"e","id":)" + id +
               R"(,"ts":)" + kernelTs + "},";
        out += R"({"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":7,"tid":7,"ts":)" +
               QByteArray::number(qlonglong(1000 * seq)) +
               R"(,"dur":20,"args":{"Collective name":")" +
               QByteArray::fromStdString(NcclCollectives::opName(call.op)) + R"(","dtype":")" +
               (call.dtype == 1 ? QByteArray(style.uint8)
                                : QByteArray::fromStdString(
                                      NcclCollectives::dtypeName(std::to_string(call.dtype)))) +
               R"(","In msg nelems":)" + QByteArray::number(qlonglong(call.count)) +
               R"(,"Out msg nelems":)" + QByteArray::number(qlonglong(call.count)) +
               R"(,"Group size":)" + QByteArray::number(world) + R"(,"Process Group Name":"0")" +
               (style.seqArgs ? R"(,"Seq":)" + QByteArray::number(qlonglong(seq)) : QByteArray()) +
               "}}";
    }
    return out + "]}";
}

// Writes a rank's NCCL log into `dir` and, unless `trace` is empty, its Kineto trace.
bool writeRankFiles(const QTemporaryDir& dir, int rank, const QByteArray& log,
                    const QByteArray& trace)
{
    QFile logFile(dir.filePath(QStringLiteral("nccl_rank%1.log").arg(rank)));
    if (!logFile.open(QIODevice::WriteOnly) || logFile.write(log) != log.size()) return false;
    if (trace.isEmpty()) return true;
    QFile traceFile(dir.filePath(QStringLiteral("rank%1.pt.trace.json").arg(rank)));
    return traceFile.open(QIODevice::WriteOnly) && traceFile.write(trace) == trace.size();
}

// A batched send to and receive from the next rank, which NCCL numbers like any launch.
void insertPointToPoint(std::vector<Call>& calls, std::size_t at, int rank, int world)
{
    calls.insert(calls.begin() + std::ptrdiff_t(at),
                 {{"Send", 64, 7, 0, (rank + 1) % world}, {"Recv", 64, 7, 0, (rank + 1) % world}});
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
    QVERIFY(NcclCollectives::launchedAs("Bool", "Byte"));
    QVERIFY(NcclCollectives::launchedAs("c10::Half", "Half"));
    QVERIFY(NcclCollectives::launchedAs("Float8_e5m2", "Float8_e5m2"));
    QVERIFY(NcclCollectives::launchedAs("Float8_e5m2", "Byte"));
    QVERIFY(!NcclCollectives::launchedAs("Bool", "Char"));
    QVERIFY(!NcclCollectives::launchedAs("Byte", "Bool")); // "Bool" is no NCCL datatype's name
    QVERIFY(!NcclCollectives::launchedAs("ComplexFloat", "Float"));
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

void TestNcclCollectives::c10dGroupTakesCommunicator_data()
{
    QTest::addColumn<int>("from"); // every rank has c10d records of collectives from .. to - 1
    QTest::addColumn<int>("to");
    QTest::addColumn<int>("pointToPointAt"); // -1: no point-to-point launch in the log
    QTest::addColumn<int>("batchedAt");      // -1: no call batched with the one before it
    QTest::addColumn<bool>("membersListed"); // the c10d records list the group's ranks
    QTest::addColumn<int>("untraced");       // the rank that has only its log, -1: none
    QTest::addRow("trace window inside the log") << 4 << 8 << -1 << -1 << false << -1;
    QTest::addRow("dump of the whole run") << 0 << 12 << -1 << -1 << true << -1;
    QTest::addRow("log ends first") << 8 << 14 << -1 << -1 << false << -1;
    QTest::addRow("send and recv move opCount") << 4 << 8 << 3 << -1 << false << -1;
    QTest::addRow("a batch is one collective") << 2 << 8 << -1 << 5 << true << -1;
    QTest::addRow("a rank with the log only") << 4 << 8 << -1 << -1 << false << 2;
    QTest::addRow("a rank with the log only, send and recv") << 4 << 8 << 3 << -1 << true << 3;
    QTest::addRow("a rank with the log only, a batch") << 2 << 8 << -1 << 5 << false << 1;
}

void TestNcclCollectives::c10dGroupTakesCommunicator()
{
    QFETCH(int, from);
    QFETCH(int, to);
    QFETCH(int, pointToPointAt);
    QFETCH(int, batchedAt);
    QFETCH(bool, membersListed);
    QFETCH(int, untraced);
    constexpr int kWorld = 4;
    const auto batched = [batchedAt](std::vector<Call> calls) {
        if (batchedAt >= 0) calls[std::size_t(batchedAt)] = {"AllReduce", 100, 7, 0, 0, true};
        return calls;
    };
    EventStore store;
    std::vector<RankLog> logs;
    for (int r = 0; r < kWorld; ++r) {
        // The trace may run past the log: the log of a run killed early, a dump written later.
        if (r != untraced)
            appendC10d(store, r, kWorld, batched(steps(7)), from, to, "0",
                       membersListed ? std::vector<int>{3, 2, 1, 0} : std::vector<int>{});
        std::vector<Call> calls = batched(steps(6));
        if (pointToPointAt >= 0) insertPointToPoint(calls, std::size_t(pointToPointAt), r, kWorld);
        logs.push_back(readLog(ncclLog(r, kWorld, calls), r));
    }
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    const NcclGroupMapper::Result mapped = NcclGroupMapper::map(store, firstNccl);
    QCOMPARE(mapped.mappedCommunicators, std::size_t(1));
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(1));
    const CollectiveGroup& g = groups[0];
    QCOMPARE(g.name, std::string("0"));
    QCOMPARE(g.members, (std::vector<int>{0, 1, 2, 3}));
    QCOMPARE(g.collectives.size(), std::size_t(std::max(to, batchedAt >= 0 ? 11 : 12)));
    QCOMPARE(g.mismatchCount, 0);
    for (const MatchedCollective& row : g.collectives) {
        QVERIFY(std::all_of(row.records.begin(), row.records.end(),
                            [](std::int32_t i) { return i >= 0; }));
        // The rank's c10d record wins where it has one: it carries the execution.
        const CollectiveRecord& rank0 = store.collectives[std::size_t(row.records[0])];
        QCOMPARE(rank0.state == CollectiveRecord::State::Completed,
                 row.seq > from && row.seq <= to);
    }
}

void TestNcclCollectives::allToAllBatchIsOneCollective()
{
    // c10d's all_to_all is, before NCCL 2.28, a batch of a send to and a receive from every
    // member: one launch, one c10d seq.
    constexpr int kWorld = 4;
    EventStore store;
    std::vector<RankLog> logs;
    for (int r = 0; r < kWorld; ++r) {
        appendC10d(store, r, kWorld, {{}, {"AlltoAll", 4 * 64}, {}}, 0, 3);
        std::vector<Call> calls = {{}};
        for (int peer = 0; peer < kWorld; ++peer) {
            calls.push_back({"Send", 64, 7, 0, peer, true});
            calls.push_back({"Recv", 64, 7, 0, peer, true});
        }
        calls[1].batchedWithPrevious = false; // the batch is a launch of its own
        calls.push_back({});
        logs.push_back(readLog(ncclLog(r, kWorld, calls), r));
    }
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    QCOMPARE(NcclGroupMapper::map(store, firstNccl).mappedCommunicators, std::size_t(1));
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(1));
    QCOMPARE(groups[0].collectives.size(), std::size_t(3));
    QCOMPARE(groups[0].mismatchCount, 0);
    QCOMPARE(store.strings.view(groups[0].collectives[1].op), std::string_view("all_to_all"));
}

void TestNcclCollectives::sizeMismatchReportedOnce()
{
    // Rank 2 reduces twice the elements in its 7th collective: its trace and its log say so.
    constexpr int kWorld = 4;
    EventStore store;
    std::vector<RankLog> logs;
    for (int r = 0; r < kWorld; ++r) {
        std::vector<Call> calls = steps(6);
        if (r == 2) calls[6].count *= 2;
        appendC10d(store, r, kWorld, calls, 4, 8);
        logs.push_back(readLog(ncclLog(r, kWorld, calls), r));
    }
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    NcclGroupMapper::map(store, firstNccl);
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(1));
    QCOMPARE(groups[0].mismatchCount, 1);
    const MatchedCollective& row = groups[0].collectives[std::size_t(groups[0].firstMismatch)];
    QCOMPARE(row.seq, 7);
    QCOMPARE(row.mismatch, MismatchKind::Size);
    QCOMPARE(row.culprits, std::vector<int>{2});
}

void TestNcclCollectives::separateWhenNotTheSame_data()
{
    QTest::addColumn<int>("variant");
    QTest::addColumn<QStringList>("groups");
    // Part of the reason the load gives, empty when no c10d group could be the communicator.
    QTest::addColumn<QString>("reason");
    const QString comm = QStringLiteral("nccl:0xabc123");
    const QString logOnly = QStringLiteral("rank 3 has only its NCCL log");
    QTest::addRow("logs only") << 0 << QStringList{comm} << QString();
    QTest::addRow("other members") << 1 << QStringList{QStringLiteral("0"), comm} << QString();
    QTest::addRow("other calls") << 2 << QStringList{QStringLiteral("0"), comm} << QString();
    QTest::addRow("two groups fit")
        << 3 << QStringList{QStringLiteral("0"), QStringLiteral("1"), comm}
        << QStringLiteral("2 c10d groups fit");
    QTest::addRow("two numberings fit") << 4 << QStringList{QStringLiteral("0"), comm}
                                        << QStringLiteral("both numberings of opCount");
    QTest::addRow("one rank contradicts")
        << 5 << QStringList{QStringLiteral("0"), comm}
        << QStringLiteral("rank 3's c10d records do not fit its NCCL log");
    QTest::addRow("untraced rank's log starts late")
        << 6 << QStringList{QStringLiteral("0"), comm} << logOnly;
    QTest::addRow("untraced rank of another size")
        << 7 << QStringList{QStringLiteral("0"), comm} << logOnly;
}

void TestNcclCollectives::separateWhenNotTheSame()
{
    QFETCH(int, variant);
    QFETCH(QStringList, groups);
    QFETCH(QString, reason);
    constexpr int kWorld = 4;
    EventStore store;
    std::vector<RankLog> logs;
    for (int r = 0; r < kWorld; ++r) {
        std::vector<Call> calls = steps(6);
        if (variant == 4) // every call alike: only the numbering could place the window
            calls.assign(12, Call{});
        std::vector<Call> traced = calls;
        if (variant == 2)
            for (Call& c : traced)
                c.count += 1;
        if (variant == 1)
            appendC10d(store, r, kWorld, traced, 4, 8, "0", {0, 1, 2, 3, 4, 5, 6, 7});
        else if (variant == 5)
            appendC10d(store, r, kWorld, traced, r == 3 ? 5 : 4, 8); // rank 3 numbers one later
        else if (variant != 0 && !(variant >= 6 && r == 3))
            appendC10d(store, r, kWorld, traced, 4, 8);
        if (variant == 3) appendC10d(store, r, kWorld, traced, 4, 8, "1");
        if (variant == 4) insertPointToPoint(calls, 1, r, kWorld);
        QByteArray log = ncclLog(r, variant == 7 && r == 3 ? 2 * kWorld : kWorld, calls);
        if (variant == 6 && r == 3) {
            // Its first two launches are lost: whether one of them was point-to-point, which
            // c10d would not have counted, nothing tells.
            QList<QByteArray> lines = log.split('\n');
            lines.remove(1, 2);
            log = lines.join('\n');
        }
        logs.push_back(readLog(log, r));
    }
    if (variant == 5) // rank 3's records numbered one higher than its calls
        for (CollectiveRecord& c : store.collectives)
            if (c.rank == 3) c.seq -= 1;
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    const NcclGroupMapper::Result mapped = NcclGroupMapper::map(store, firstNccl);
    QCOMPARE(mapped.mappedCommunicators, std::size_t(0));
    QCOMPARE(mapped.mappedRecords, std::size_t(0));
    QCOMPARE(mapped.separate.size(), std::size_t(reason.isEmpty() ? 0 : 1));
    if (!reason.isEmpty()) {
        QCOMPARE(mapped.separate[0].communicator, std::string("nccl:0xabc123"));
        QVERIFY2(QString::fromStdString(mapped.separate[0].reason).contains(reason),
                 mapped.separate[0].reason.c_str());
    }
    QStringList names;
    for (const CollectiveGroup& g : CollectiveMatcher::match(store))
        names.append(QString::fromStdString(g.name));
    names.sort();
    QCOMPARE(names, groups);
}

void TestNcclCollectives::folderReportsMismatchOnce()
{
    // Every rank has a trace of collectives 5 to 8 and its NCCL log of the whole run; rank 2's
    // 7th collective reduces twice the elements.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    constexpr int kWorld = 3;
    for (int r = 0; r < kWorld; ++r) {
        std::vector<Call> calls = steps(6);
        if (r == 2) calls[6].count *= 2;
        QFile log(dir.filePath(QStringLiteral("nccl_rank%1.log").arg(r)));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write(ncclLog(r, kWorld, calls));
        QFile trace(dir.filePath(QStringLiteral("rank%1.pt.trace.json").arg(r)));
        QVERIFY(trace.open(QIODevice::WriteOnly));
        trace.write(kinetoTrace(kWorld, calls, 4, 8));
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QCOMPARE(session->analysis.groups.size(), std::size_t(1));
    std::vector<const Finding*> mismatches;
    for (const Finding& f : session->analysis.findings)
        if (f.kind == FindingKind::CollectiveMismatch) mismatches.push_back(&f);
    QCOMPARE(mismatches.size(), std::size_t(1));
    QCOMPARE(mismatches[0]->ranks, std::vector<int>{2});
    QCOMPARE(mismatches[0]->processGroup, std::string("0"));
    QCOMPARE(mismatches[0]->seq, 7);
}

void TestNcclCollectives::folderWithLogOnlyRank_data()
{
    QTest::addColumn<int>("deviantCall"); // the call rank 2 makes with twice the count, -1: none
    QTest::addColumn<int>("traceEnd");    // the traces hold calls [4, traceEnd)
    QTest::addRow("healthy") << -1 << 8;
    // The last call is known from the logs only: no rank can be seen not completing it.
    QTest::addRow("healthy, traced up to the last call") << -1 << 11;
    QTest::addRow("size mismatch where the others are traced") << 6 << 8;
    QTest::addRow("size mismatch past the traces") << 10 << 8;
}

void TestNcclCollectives::folderWithLogOnlyRank()
{
    // Ranks 0 and 1 have a trace of collectives 5 to 8 and their NCCL logs; rank 2 has only
    // its log, whose lines never say that a call completed.
    QFETCH(int, deviantCall);
    QFETCH(int, traceEnd);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    constexpr int kWorld = 3;
    for (int r = 0; r < kWorld; ++r) {
        std::vector<Call> calls = steps(6);
        if (r == 2 && deviantCall >= 0) calls[std::size_t(deviantCall)].count *= 2;
        QVERIFY(writeRankFiles(dir, r, ncclLog(r, kWorld, calls),
                               r == 2 ? QByteArray() : kinetoTrace(kWorld, calls, 4, traceEnd)));
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QVERIFY2(session->warnings.isEmpty(), qPrintable(session->warnings.join(u'\n')));
    QCOMPARE(session->analysis.groups.size(), std::size_t(1));
    const CollectiveGroup& g = session->analysis.groups[0];
    QCOMPARE(g.name, std::string("0"));
    QCOMPARE(g.members, (std::vector<int>{0, 1, 2}));
    QCOMPARE(g.collectives.size(), std::size_t(12));
    QCOMPARE(g.mismatchCount, deviantCall >= 0 ? 1 : 0);
    // Where the traces are, ranks 0 and 1 completed every collective; rank 2's log cannot say.
    const auto& recs = session->events.collectives;
    for (std::size_t k = 4; k < 8; ++k) {
        const MatchedCollective& row = g.collectives[k];
        QCOMPARE(recs[std::size_t(row.records[1])].state, CollectiveRecord::State::Completed);
        QVERIFY(recs[std::size_t(row.records[2])].stateUnknown);
    }
    std::vector<const Finding*> errors, mismatches;
    for (const Finding& f : session->analysis.findings) {
        if (f.severity == Severity::Error) errors.push_back(&f);
        if (f.kind == FindingKind::CollectiveMismatch) mismatches.push_back(&f);
        // The calls past the traces' window are known from the logs only, which cannot show
        // completion: they are no hang.
        QVERIFY2(f.kind != FindingKind::Hang, f.summary.c_str());
    }
    if (deviantCall < 0) {
        for (const Finding* f : errors)
            qWarning("unexpected error: %s", f->summary.c_str());
        QVERIFY(errors.empty());
        return;
    }
    QCOMPARE(g.collectives[std::size_t(deviantCall)].mismatch, MismatchKind::Size);
    QCOMPARE(mismatches.size(), std::size_t(1));
    QCOMPARE(mismatches[0]->ranks, std::vector<int>{2});
    QCOMPARE(mismatches[0]->processGroup, std::string("0"));
    QCOMPARE(mismatches[0]->seq, deviantCall + 1);
}

void TestNcclCollectives::dtypeSpellingsOfOneNcclType_data()
{
    QTest::addColumn<QString>("c10dDtype"); // how the traces name the broadcasts' dtype
    QTest::addColumn<int>("ncclDtype");     // the ncclDataType_t the logs give them
    QTest::addColumn<bool>("sameType");
    QTest::addRow("Bool goes as uint8") << "Bool" << 1 << true;
    QTest::addRow("the profiler's input type") << "float" << 7 << true;
    QTest::addRow("fp8 as uint8, before NCCL 2.24") << "Float8_e4m3fn" << 1 << true;
    QTest::addRow("fp8 as NCCL's fp8") << "Float8_e4m3fn" << 10 << true;
    QTest::addRow("Bool is no int8") << "Bool" << 0 << false;
    QTest::addRow("Half is no BFloat16") << "Half" << 9 << false;
}

void TestNcclCollectives::dtypeSpellingsOfOneNcclType()
{
    // Ranks 0 to 2 have c10d records of collectives 5 to 8, rank 3 only its log.
    QFETCH(QString, c10dDtype);
    QFETCH(int, ncclDtype);
    QFETCH(bool, sameType);
    constexpr int kWorld = 4;
    std::vector<Call> calls = steps(6);
    for (Call& c : calls)
        if (std::string_view(c.op) == "Broadcast") c.dtype = ncclDtype;
    EventStore store;
    std::vector<RankLog> logs;
    const StringId broadcast = store.strings.intern("broadcast");
    const StringId spelling = store.strings.intern(c10dDtype.toStdString());
    for (int r = 0; r < kWorld; ++r) {
        if (r < 3) appendC10d(store, r, kWorld, calls, 4, 8);
        logs.push_back(readLog(ncclLog(r, kWorld, calls), r));
    }
    for (CollectiveRecord& c : store.collectives)
        if (c.op == broadcast) c.dtype = spelling;
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    const NcclGroupMapper::Result mapped = NcclGroupMapper::map(store, firstNccl);
    QCOMPARE(mapped.mappedCommunicators, std::size_t(sameType ? 1 : 0));
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    if (!sameType) { // no rank's trace is its log: the log stays a group of its own
        QCOMPARE(groups.size(), std::size_t(2));
        return;
    }
    QCOMPARE(groups.size(), std::size_t(1));
    QCOMPARE(groups[0].name, std::string("0"));
    QCOMPARE(groups[0].collectives.size(), std::size_t(12));
    // Rank 3's log names the type as NCCL does; where the others' traces name it, it is theirs.
    QCOMPARE(groups[0].mismatchCount, 0);
}

void TestNcclCollectives::folderWithBoolTensors()
{
    // The broadcasts are of Bool tensors, which NCCL moves as uint8: ranks 0 and 1 have a trace
    // of collectives 5 to 8 and their NCCL logs, rank 2 only its log.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    constexpr int kWorld = 3;
    std::vector<Call> calls = steps(6);
    for (Call& c : calls)
        if (std::string_view(c.op) == "Broadcast") c.dtype = 1;
    for (int r = 0; r < kWorld; ++r)
        QVERIFY(writeRankFiles(dir, r, ncclLog(r, kWorld, calls),
                               r == 2 ? QByteArray() : kinetoTrace(kWorld, calls, 4, 8, {"Bool"})));
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QVERIFY2(session->warnings.isEmpty(), qPrintable(session->warnings.join(u'\n')));
    QCOMPARE(session->analysis.groups.size(), std::size_t(1));
    QCOMPARE(session->analysis.groups[0].name, std::string("0"));
    QCOMPARE(session->analysis.groups[0].mismatchCount, 0);
}

void TestNcclCollectives::unlistedGroupIsTheListedWorld_data()
{
    QTest::addColumn<bool>("sameRank"); // true: each rank's dump lists members, its trace not;
                                        // false: ranks 0 and 1 list them, ranks 2 and 3 not
    QTest::addRow("two sources of a rank") << true;
    QTest::addRow("two ranks' sources") << false;
}

void TestNcclCollectives::unlistedGroupIsTheListedWorld()
{
    QFETCH(bool, sameRank);
    constexpr int kWorld = 4;
    const std::vector<int> listed = {3, 2, 1, 0};
    EventStore store;
    std::vector<RankLog> logs;
    for (int r = 0; r < kWorld; ++r) {
        if (sameRank) {
            appendC10d(store, r, kWorld, steps(6), 0, 4, "0", listed);
            appendC10d(store, r, kWorld, steps(6), 4, 8, "0");
        } else {
            appendC10d(store, r, kWorld, steps(6), 4, 8, "0", r < 2 ? listed : std::vector<int>{});
        }
        logs.push_back(readLog(ncclLog(r, kWorld, steps(6)), r));
    }
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    const NcclGroupMapper::Result mapped = NcclGroupMapper::map(store, firstNccl);
    QCOMPARE(mapped.mappedCommunicators, std::size_t(1));
    // The log joins the group as the sources that list its members key it.
    for (const CollectiveGroup& g : CollectiveMatcher::match(store)) {
        QCOMPARE(g.name, std::string("0"));
        if (!g.membersFromSource) continue;
        QCOMPARE(g.collectives.size(), std::size_t(12));
        QVERIFY(std::all_of(g.collectives.begin(), g.collectives.end(),
                            [](const auto& row) { return row.mismatch == MismatchKind::None; }));
    }
}

// Steps of a run in which call `distinctAt` (-1: none) reduces an odd count, as a run's first
// parameter sync or an evaluation step does: where it falls tells a window's place.
std::vector<Call> stepsWithOddCall(int n, int distinctAt)
{
    std::vector<Call> calls = steps(n);
    if (distinctAt >= 0) calls[std::size_t(distinctAt)] = {"AllReduce", 999, 7, 0, 0};
    return calls;
}

void TestNcclCollectives::windowWithoutSeq_data()
{
    QTest::addColumn<int>("from"); // the traces hold collectives from .. to - 1 of 14; logs 12
    QTest::addColumn<int>("to");
    QTest::addColumn<int>("distinctAt");    // the odd call, -1: none
    QTest::addColumn<int>("seqRank");       // the rank whose records carry c10d's seq, -1: none
    QTest::addColumn<int>("untraced");      // the rank with only its log, -1: none
    QTest::addColumn<int>("logless");       // the rank with only its trace, -1: none
    QTest::addColumn<bool>("pointToPoint"); // a send and recv after the 2nd call in the logs
    QTest::addColumn<bool>("placed");
    QTest::addColumn<std::string>("reason"); // part of why, when not placed
    const std::string none;
    QTest::addRow("from the first collective")
        << 0 << 8 << 0 << -1 << -1 << -1 << false << true << none;
    QTest::addRow("opening on a call met once")
        << 3 << 9 << 3 << -1 << 2 << -1 << false << true << none;
    QTest::addRow("next to a dump's seqs") << 3 << 9 << 3 << 0 << -1 << -1 << false << true << none;
    // Without a seq from any source, the two numberings of the launches are as good.
    QTest::addRow("send and recv, no seq anywhere")
        << 0 << 8 << 0 << -1 << -1 << -1 << true << true << none;
    QTest::addRow("next to a dump's seqs, send and recv")
        << 3 << 9 << 3 << 0 << -1 << -1 << true << true << none;
    const std::string severalPlaces = "rank 0's trace has no Seq and fits its NCCL log at several";
    QTest::addRow("steady steps fit every step")
        << 4 << 8 << -1 << -1 << -1 << -1 << false << false << severalPlaces;
    QTest::addRow("its one place runs past the log")
        << 8 << 14 << 8 << -1 << -1 << -1 << false << false << severalPlaces;
    // The window also fits where its opening steps meet the log's last ones.
    QTest::addRow("odd call inside, steps around it")
        << 2 << 10 << 6 << -1 << -1 << -1 << false << false << severalPlaces;
    // Its records could not be renumbered with the others'.
    QTest::addRow("a rank without the log")
        << 0 << 8 << 0 << -1 << -1 << 3 << false << false
        << std::string("rank 3's trace has no Seq and no NCCL log of this communicator");
}

void TestNcclCollectives::windowWithoutSeq()
{
    QFETCH(int, from);
    QFETCH(int, to);
    QFETCH(int, distinctAt);
    QFETCH(int, seqRank);
    QFETCH(int, untraced);
    QFETCH(int, logless);
    QFETCH(bool, pointToPoint);
    QFETCH(bool, placed);
    QFETCH(std::string, reason);
    constexpr int kWorld = 4;
    const std::vector<Call> calls = stepsWithOddCall(7, distinctAt);
    std::vector<Call> logged(calls.begin(), calls.begin() + 12);
    EventStore store;
    std::vector<RankLog> logs;
    for (int r = 0; r < kWorld; ++r) {
        const std::size_t before = store.collectives.size();
        if (r != untraced) appendC10d(store, r, kWorld, calls, from, to);
        if (r != seqRank) // numbered by the reader: 1 at the first collective the trace saw
            for (std::size_t i = before; i < store.collectives.size(); ++i) {
                store.collectives[i].seq = std::int64_t(i - before) + 1;
                store.collectives[i].seqFromSource = false;
            }
        if (r == logless) continue;
        std::vector<Call> rankLogged = logged;
        if (pointToPoint) insertPointToPoint(rankLogged, 2, r, kWorld);
        logs.push_back(readLog(ncclLog(r, kWorld, rankLogged), r));
    }
    const std::size_t firstNccl = store.collectives.size();
    NcclCollectives::append(logs, store);
    const NcclGroupMapper::Result mapped = NcclGroupMapper::map(store, firstNccl);
    QCOMPARE(mapped.mappedCommunicators, std::size_t(placed ? 1 : 0));
    QCOMPARE(mapped.separate.size(), std::size_t(placed ? 0 : 1));
    if (!placed)
        QVERIFY2(mapped.separate[0].reason.find(reason) != std::string::npos,
                 mapped.separate[0].reason.c_str());
    if (!placed) return;
    const std::vector<CollectiveGroup> groups = CollectiveMatcher::match(store);
    QCOMPARE(groups.size(), std::size_t(1));
    const CollectiveGroup& g = groups[0];
    QCOMPARE(g.name, std::string("0"));
    QCOMPARE(g.collectives.size(), std::size_t(12));
    QCOMPARE(g.mismatchCount, 0);
    // Each traced record now has the seq of its call: the odd one is where it was made.
    for (const MatchedCollective& row : g.collectives)
        for (const std::int32_t i : row.records) {
            const CollectiveRecord& c = store.collectives[std::size_t(i)];
            QCOMPARE(c.inNelems == 999, row.seq == distinctAt + 1);
            QCOMPARE(c.state == CollectiveRecord::State::Completed,
                     c.rank != untraced && row.seq > from && row.seq <= to);
        }
}

void TestNcclCollectives::folderTraceWithoutSeq_data()
{
    QTest::addColumn<int>("from"); // the traces hold collectives from .. to - 1
    QTest::addColumn<int>("to");
    QTest::addColumn<int>("distinctAt");
    QTest::addColumn<bool>("merged");
    QTest::addRow("from the first collective") << 0 << 8 << 0 << true;
    QTest::addRow("steady steps") << 4 << 8 << -1 << false;
}

void TestNcclCollectives::folderTraceWithoutSeq()
{
    // Ranks 0 and 1 have a trace whose collectives carry no Seq and their NCCL logs; rank 2
    // has only its log.
    QFETCH(int, from);
    QFETCH(int, to);
    QFETCH(int, distinctAt);
    QFETCH(bool, merged);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    constexpr int kWorld = 3;
    const std::vector<Call> calls = stepsWithOddCall(6, distinctAt);
    TraceStyle withoutSeq;
    withoutSeq.seqArgs = false;
    for (int r = 0; r < kWorld; ++r)
        QVERIFY(writeRankFiles(dir, r, ncclLog(r, kWorld, calls),
                               r == 2 ? QByteArray()
                                      : kinetoTrace(kWorld, calls, from, to, withoutSeq)));
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    // Where the window's place cannot be told, the log stays apart and the load says so.
    QCOMPARE(session->warnings.isEmpty(), merged);
    QCOMPARE(session->analysis.groups.size(), std::size_t(merged ? 1 : 2));
    if (merged) QCOMPARE(session->analysis.groups[0].mismatchCount, 0);
}

QTEST_GUILESS_MAIN(TestNcclCollectives)
#include "tst_ncclcollectives.moc"
