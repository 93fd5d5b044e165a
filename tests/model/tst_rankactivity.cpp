// RankActivity: what each rank does over time, checked against states worked out by hand from
// the events and records each test builds.
#include "model/overview/rankactivity.h"
#include "model/trace/traceread.h"
#include "tests/support/gzip.h"
#include "tests/support/syntheticjob.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <map>
#include <set>

using namespace rankscope;

namespace {

Lane lane(int rank, LaneKind kind,
          std::vector<std::tuple<std::int64_t, std::int64_t, EventCategory>> spans)
{
    Lane l;
    l.rank = rank;
    l.kind = kind;
    for (const auto& [s, e, c] : spans) {
        l.startNs.push_back(s);
        l.endNs.push_back(e);
        l.nameId.push_back(0);
        l.category.push_back(c);
        l.depth.push_back(0);
        l.sourceOffset.push_back(0);
    }
    return l;
}

CollectiveRecord record(int rank, std::int64_t seq, std::int64_t start, std::int64_t end,
                        CollectiveRecord::State state = CollectiveRecord::State::Completed)
{
    CollectiveRecord c;
    c.rank = rank;
    c.seq = seq;
    c.execStartNs = start;
    c.execEndNs = end;
    c.state = state;
    return c;
}

std::vector<RankState> raster(const RankActivity& a, int rank, std::int64_t t0, double npp,
                              int width, std::int64_t jobEnd, bool crashed = false)
{
    std::vector<RankState> out(static_cast<std::size_t>(width));
    a.rasterise(std::size_t(a.rowOf(rank)), t0, npp, width, jobEnd, crashed, out.data());
    return out;
}

// Pixels [from, to) of `states` hold `s`.
bool holds(const std::vector<RankState>& states, int from, int to, RankState s)
{
    for (int x = from; x < to; ++x)
        if (states[std::size_t(x)] != s) return false;
    return true;
}

} // namespace

class TestRankActivity : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void waitingIsTheTimeBeforeTheLastMemberArrived();
    void stoppedAfterTheLastEventAndCrashedWhenToldSo();
    void hangShowsEveryoneWaitingButTheHungRank_data();
    void hangShowsEveryoneWaitingButTheHungRank();
    void completedWithoutEveryMemberIsWaiting();
    void lateness();
    void cpuOnlyRanksComputeOnTheirOps();
    void hostCodeIsNotIdle();
    void realHangShowsTheHungRankInItsOwnCode();
    void collectiveThatNeverRanIsWaiting();
    void glooSpansAreCommunication();
};

// Rank 0 computes 0-100 and enters the all_reduce at 100, rank 1 computes 0-200 and enters at
// 200; it ends at 300 on both. Rank 0 waits 100-200, both communicate 200-300.
void TestRankActivity::waitingIsTheTimeBeforeTheLastMemberArrived()
{
    EventStore store;
    store.lanes.push_back(
        lane(0, LaneKind::GpuStream,
             {{0, 100, EventCategory::Kernel}, {100, 300, EventCategory::CommKernel}}));
    store.lanes.push_back(
        lane(1, LaneKind::GpuStream,
             {{0, 200, EventCategory::Kernel}, {200, 300, EventCategory::CommKernel}}));
    // The CPU thread's ops do not count as compute on a rank with a GPU.
    store.lanes.push_back(lane(1, LaneKind::CpuThread, {{200, 300, EventCategory::CpuOp}}));
    store.collectives = {record(0, 1, 100, 300), record(1, 1, 200, 300)};
    const RankActivity a = RankActivity::build(store);
    QCOMPARE(a.rows().size(), std::size_t(2));
    // Zoomed in (10 ns a pixel) and out (100 ns a pixel, whole buckets of the pyramid).
    const std::vector<RankState> r0 = raster(a, 0, 0, 10, 30, 300);
    QVERIFY(holds(r0, 0, 10, RankState::Computing));
    QVERIFY(holds(r0, 10, 20, RankState::Waiting));
    QVERIFY(holds(r0, 20, 30, RankState::Communicating));
    const std::vector<RankState> r1 = raster(a, 1, 0, 10, 30, 300);
    QVERIFY(holds(r1, 0, 20, RankState::Computing));
    QVERIFY(holds(r1, 20, 30, RankState::Communicating));
    const std::vector<RankState> coarse = raster(a, 0, 0, 100, 3, 300);
    QCOMPARE(coarse, (std::vector<RankState>{RankState::Computing, RankState::Waiting,
                                             RankState::Communicating}));
    // A clock offset does not matter: waiting comes from durations on each rank's own clock.
    EventStore shifted = store;
    for (std::int64_t& t : shifted.lanes[1].startNs)
        t += 1'000'000;
    for (std::int64_t& t : shifted.lanes[1].endNs)
        t += 1'000'000;
    shifted.collectives[1].execStartNs += 1'000'000;
    shifted.collectives[1].execEndNs += 1'000'000;
    QCOMPARE(raster(RankActivity::build(shifted), 0, 0, 10, 30, 300), r0);
}

void TestRankActivity::stoppedAfterTheLastEventAndCrashedWhenToldSo()
{
    EventStore store;
    store.lanes.push_back(lane(0, LaneKind::GpuStream, {{0, 500, EventCategory::Kernel}}));
    store.lanes.push_back(lane(1, LaneKind::GpuStream, {{0, 300, EventCategory::Kernel}}));
    const RankActivity a = RankActivity::build(store);
    QCOMPARE(a.traceEndNs(), std::int64_t(500));
    const std::vector<RankState> r1 = raster(a, 1, 0, 10, 60, 500);
    QVERIFY(holds(r1, 0, 30, RankState::Computing));
    QVERIFY(holds(r1, 30, 50, RankState::Stopped));
    QVERIFY(holds(r1, 50, 60, RankState::Idle)); // after the job's end nothing is stopped
    QVERIFY(holds(raster(a, 1, 0, 10, 50, 500, true), 30, 50, RankState::Crashed));
}

void TestRankActivity::hangShowsEveryoneWaitingButTheHungRank_data()
{
    QTest::addColumn<int>("ranks");
    QTest::addColumn<bool>("gpu");
    QTest::addRow("8 ranks, GPU") << 8 << true;
    QTest::addRow("64 ranks, gloo") << 64 << false;
}

// Three healthy steps, then a step whose all_reduce `hung` never reaches: the others sit in it
// for 10 s (still running when the trace ends), the hung rank's step span goes on 4 s longer
// with nothing else running (host code, not idle).
void TestRankActivity::hangShowsEveryoneWaitingButTheHungRank()
{
    QFETCH(int, ranks);
    QFETCH(bool, gpu);
    test::SyntheticJob job(ranks, true, gpu);
    const int hung = ranks - 3;
    for (int s = 0; s < 3; ++s)
        job.step(test::uniform(ranks, 1'000'000), {"all_reduce"});
    const std::int64_t hangStepNs = job.nowNs();
    const std::int64_t hangNs = 10'000'000'000;
    job.step(test::uniform(ranks, 1'000'000), {"all_reduce"}, 200'000, {hung}, hangNs);
    const RankActivity a = RankActivity::build(job.finish());
    const std::int64_t arrive = hangStepNs + 1'000'000,
                       jobEnd = hangStepNs + hangNs + 4'000'000'000;
    QCOMPARE(a.traceEndNs(), jobEnd);
    // 1 s a pixel across the whole job (the pyramid) and 10 us a pixel at the arrival.
    for (int r = 0; r < ranks; ++r) {
        const std::vector<RankState> whole = raster(a, r, 0, 1e9, 15, jobEnd);
        const std::vector<RankState> near = raster(a, r, arrive - 500'000, 1e4, 100, jobEnd);
        if (r == hung) {
            // Its step span goes on: it runs its own code, the GPU idle.
            QVERIFY(holds(whole, 1, 14, RankState::HostBusy));
            QVERIFY(holds(whole, 14, 15, RankState::Idle)); // after the job's end
            QVERIFY(holds(near, 50, 100, RankState::HostBusy));
        } else {
            QVERIFY2(holds(whole, 1, 10, RankState::Waiting), qPrintable(QString::number(r)));
            QVERIFY(holds(whole, 11, 14, RankState::Stopped));
            QVERIFY(holds(near, 50, 100, RankState::Waiting));
        }
        // Everyone computes up to the arrival (the hung rank too: it hangs after it).
        QVERIFY(holds(near, 0, 50, RankState::Computing));
    }
}

// A gloo hang: the span of the collective the others sat in is closed by the timeout, so it
// looks completed; the group has 3 members and only 2 records, so all of it is waiting.
void TestRankActivity::completedWithoutEveryMemberIsWaiting()
{
    EventStore store;
    for (int r = 0; r < 2; ++r) {
        store.lanes.push_back(
            lane(r, LaneKind::CpuThread, {{0, 100 + 10 * r, EventCategory::CommKernel}}));
        store.collectives.push_back(record(r, 1, 0, 100 + 10 * r));
        store.collectives.back().groupSize = 3;
    }
    store.lanes.push_back(lane(2, LaneKind::CpuThread, {{0, 50, EventCategory::CpuOp}}));
    const RankActivity a = RankActivity::build(store);
    QVERIFY(holds(raster(a, 0, 0, 10, 10, 110), 0, 10, RankState::Waiting));
    QVERIFY(holds(raster(a, 1, 0, 10, 11, 110), 0, 11, RankState::Waiting));
    // Records without a group size (gloo traces): the group is every rank that issued in it,
    // here rank 2 with an earlier collective.
    for (CollectiveRecord& c : store.collectives)
        c.groupSize = -1;
    store.collectives.push_back(record(2, 0, 0, 40));
    const RankActivity b = RankActivity::build(store);
    QVERIFY(holds(raster(b, 0, 0, 10, 10, 110), 0, 10, RankState::Waiting));
}

// Rank 2 reaches every collective 3 ms after the others, every arrival jittered by up to 0.4 ms.
// Truth from the records' execution starts (one true clock here): per collective, each member's
// start minus the earliest; per rank, the upper middle of those; the typical rank's, the upper
// middle of the ranks'.
void TestRankActivity::lateness()
{
    constexpr int kRanks = 5;
    test::SyntheticJob job(kRanks, true, true);
    job.setArrivalDelay(2, 3'000'000);
    job.setArrivalJitter(400'000, 7);
    for (int s = 0; s < 7; ++s)
        job.step(test::uniform(kRanks, 1'000'000), {"all_reduce", "all_gather"});
    const EventStore& store = job.finish();
    std::map<std::pair<StringId, std::int64_t>, std::int64_t> firstStart;
    for (const CollectiveRecord& c : store.collectives) {
        auto [it, fresh] = firstStart.try_emplace({c.processGroupName, c.seq}, c.execStartNs);
        if (!fresh) it->second = std::min(it->second, c.execStartNs);
    }
    std::map<int, std::vector<std::int64_t>> lateOf;
    for (const CollectiveRecord& c : store.collectives)
        lateOf[c.rank].push_back(c.execStartNs - firstStart.at({c.processGroupName, c.seq}));
    const auto upperMiddle = [](std::vector<std::int64_t> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::vector<std::int64_t> medians;
    const RankActivity a = RankActivity::build(store);
    QCOMPARE(int(a.rows().size()), kRanks);
    for (const RankActivity::Row& row : a.rows()) {
        QCOMPARE(row.latenessSamples, int(lateOf[row.rank].size()));
        QCOMPARE(row.medianLatenessNs, upperMiddle(lateOf[row.rank]));
        medians.push_back(row.medianLatenessNs);
    }
    QVERIFY(a.rows()[2].medianLatenessNs > 3'000'000 - 400'000);
    QCOMPARE(a.typicalLatenessNs(-1), upperMiddle(medians));
    QVERIFY(a.typicalLatenessNs(-1) < 400'000);
}

// Gloo ranks have no GPU lane: their CPU ops are what computing means; an annotation with no op
// under it is host code; nothing open is idle.
void TestRankActivity::cpuOnlyRanksComputeOnTheirOps()
{
    EventStore store;
    store.lanes.push_back(lane(0, LaneKind::CpuThread,
                               {{0, 100, EventCategory::CpuOp},
                                {100, 200, EventCategory::UserAnnotation},
                                {250, 300, EventCategory::CpuOp}}));
    const std::vector<RankState> r = raster(RankActivity::build(store), 0, 0, 10, 30, 300);
    QVERIFY(holds(r, 0, 10, RankState::Computing));
    QVERIFY(holds(r, 10, 20, RankState::HostBusy));
    QVERIFY(holds(r, 20, 25, RankState::Idle));
    QVERIFY(holds(r, 25, 30, RankState::Computing));
}

// A GPU rank: a CPU op open while its GPU runs nothing is host code; the GPU's kernel wins over
// it; a gap with nothing open on any lane is idle. The open span found is the outermost.
void TestRankActivity::hostCodeIsNotIdle()
{
    EventStore store;
    store.lanes.push_back(lane(0, LaneKind::GpuStream, {{0, 100, EventCategory::Kernel}}));
    Lane cpu = lane(0, LaneKind::CpuThread,
                    {{0, 400, EventCategory::UserAnnotation},
                     {150, 250, EventCategory::CpuOp},
                     {500, 600, EventCategory::CpuOp}});
    cpu.depth = {0, 1, 0};
    store.lanes.push_back(cpu);
    const RankActivity a = RankActivity::build(store);
    const std::vector<RankState> r = raster(a, 0, 0, 10, 60, 600);
    QVERIFY(holds(r, 0, 10, RankState::Computing));
    QVERIFY(holds(r, 10, 40, RankState::HostBusy));
    QVERIFY(holds(r, 40, 50, RankState::Idle));
    QVERIFY(holds(r, 50, 60, RankState::HostBusy));
    // Zoomed out to one pixel: host code dominates (300 of 600 ns against 100 computing).
    QCOMPARE(raster(a, 0, 0, 600, 1, 600).front(), RankState::HostBusy);
    const RankActivity::OpenSpan open = RankActivity::openHostSpan(store, 0, 200);
    QCOMPARE(open.lane, 1);
    QCOMPARE(open.event, std::int64_t(0));
    QCOMPARE(RankActivity::openHostSpan(store, 0, 450).lane, -1);
    QCOMPARE(RankActivity::openHostSpan(store, 0, 550).event, std::int64_t(2));
}

namespace {

struct RawEvent {
    std::int64_t startNs, endNs; // the trace's microseconds, in ns
    QString name;
};

// The complete events of a Kineto trace file, read with Qt's JSON parser (not the app's).
std::vector<RawEvent> rawEvents(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    const QJsonArray list =
        doc.isArray() ? doc.array() : doc.object().value(QStringLiteral("traceEvents")).toArray();
    std::vector<RawEvent> out;
    for (const QJsonValue& v : list) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("ph")).toString() != QStringLiteral("X")) continue;
        const double ts = e.value(QStringLiteral("ts")).toDouble();
        const double dur = e.value(QStringLiteral("dur")).toDouble();
        out.push_back({std::llround(ts * 1000), std::llround((ts + dur) * 1000),
                       e.value(QStringLiteral("name")).toString()});
    }
    return out;
}

} // namespace

// The real gloo hang (tests/data/traces/hang_timeout): rank 1 stalls inside ProfilerStep#2
// (its own code, a hung data loader) and never joins the all_reduce that ranks 0 and 2 sit in
// for 10 s. Truth from the raw JSON: at the middle of every stretch between two event
// boundaries of a rank, a gloo span open means a collective (waiting or communicating), another
// span open means host code or computing, nothing open means idle, after its last event stopped.
// Rank 1 is in host code all the while the others wait.
void TestRankActivity::realHangShowsTheHungRankInItsOwnCode()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout");
    const TraceRead read = readFolder(dir);
    const RankActivity a = RankActivity::build(read.events);
    QCOMPARE(a.rows().size(), std::size_t(3));
    std::vector<std::vector<RawEvent>> raw(3);
    std::vector<std::int64_t> base(3); // the trace's time 0 on the rank's clock in the store
    std::int64_t jobEnd = 0;
    for (int r = 0; r < 3; ++r) {
        raw[std::size_t(r)] = rawEvents(dir + QStringLiteral("/rank%1.pt.trace.json").arg(r));
        QVERIFY(!raw[std::size_t(r)].empty());
        std::int64_t first = raw[std::size_t(r)].front().startNs, last = 0;
        for (const RawEvent& e : raw[std::size_t(r)]) {
            first = std::min(first, e.startNs);
            last = std::max(last, e.endNs);
        }
        const RankActivity::Row& row = a.rows()[std::size_t(a.rowOf(r))];
        base[std::size_t(r)] = row.firstNs - first;
        QCOMPARE(row.lastNs - row.firstNs, last - first);
        jobEnd = std::max(jobEnd, row.lastNs); // one clock: the three traces start together
    }
    const auto stateAt = [&](int r, std::int64_t rawNs) {
        RankState s;
        a.rasterise(std::size_t(a.rowOf(r)), base[std::size_t(r)] + rawNs, 1.0, 1, jobEnd, false,
                    &s);
        return s;
    };
    int checked = 0;
    for (int r = 0; r < 3; ++r) {
        const std::vector<RawEvent>& events = raw[std::size_t(r)];
        std::set<std::int64_t> cuts;
        for (const RawEvent& e : events) {
            cuts.insert(e.startNs);
            cuts.insert(e.endNs);
        }
        const std::int64_t last = *cuts.rbegin();
        cuts.insert((jobEnd - base[std::size_t(r)] + last) / 2); // a time after it stopped
        for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) {
            const std::int64_t t = (*it + *std::next(it)) / 2;
            bool gloo = false, open = false;
            for (const RawEvent& e : events)
                if (e.startNs <= t && t < e.endNs) {
                    open = true;
                    gloo |= e.name.startsWith(QStringLiteral("gloo:"));
                }
            const RankState s = stateAt(r, t);
            const QByteArray where =
                QStringLiteral("rank %1 at %2 ns: state %3").arg(r).arg(t).arg(int(s)).toUtf8();
            if (t >= last)
                QVERIFY2(s == RankState::Stopped, where.constData());
            else if (gloo)
                QVERIFY2(s == RankState::Waiting || s == RankState::Communicating,
                         where.constData());
            else if (open)
                QVERIFY2(s == RankState::HostBusy || s == RankState::Computing, where.constData());
            else
                QVERIFY2(s == RankState::Idle, where.constData());
            ++checked;
        }
    }
    QVERIFY(checked > 1000);

    // The stall: rank 1's longest span (ProfilerStep#2) covers the whole time the other two sit
    // in their longest gloo span, and in its middle rank 1 is in host code, the others waiting.
    const auto longest = [&](int r, const QString& prefix) {
        RawEvent best{0, 0, {}};
        for (const RawEvent& e : raw[std::size_t(r)])
            if (e.name.startsWith(prefix) && e.endNs - e.startNs > best.endNs - best.startNs)
                best = e;
        return best;
    };
    const RawEvent stuck = longest(1, QString());
    QCOMPARE(stuck.name, QStringLiteral("ProfilerStep#2"));
    for (int r : {0, 2}) {
        const RawEvent wait = longest(r, QStringLiteral("gloo:"));
        QVERIFY(wait.endNs - wait.startNs > 9'000'000'000);
        // The traces' times are from each process's start, a few ms apart (ground_truth.json):
        // the wait but its first and last tenth lies inside rank 1's stuck step.
        const std::int64_t tenth = (wait.endNs - wait.startNs) / 10;
        QVERIFY(wait.startNs + tenth > stuck.startNs && wait.endNs - tenth < stuck.endNs);
        for (int k = 1; k < 10; ++k) {
            const std::int64_t t = wait.startNs + (wait.endNs - wait.startNs) * k / 10;
            QCOMPARE(stateAt(r, t), RankState::Waiting);
            QCOMPARE(stateAt(1, t), RankState::HostBusy);
        }
    }
}

// The real uneven-inputs run (tests/data/traces/uneven_inputs): rank 1 ran out of batches and
// waits in a barrier; rank 0 issued the next gradient all_reduce (c10d::allreduce_) that rank 1
// never joined, and gloo never ran it (no gloo:all_reduce span after the call). Truth from the
// raw JSON: from that call to its last event rank 0 sits in the collective, which is waiting,
// not its own host code (that is what a rank stuck in its own code looks like).
void TestRankActivity::collectiveThatNeverRanIsWaiting()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/uneven_inputs");
    const TraceRead read = readFolder(dir);
    const RankActivity a = RankActivity::build(read.events);
    const std::vector<RawEvent> raw = rawEvents(dir + QStringLiteral("/rank0.pt.trace.json"));
    QVERIFY(!raw.empty());
    std::int64_t first = raw.front().startNs, last = 0, issued = -1;
    for (const RawEvent& e : raw) {
        first = std::min(first, e.startNs);
        last = std::max(last, e.endNs);
        if (e.name == QStringLiteral("c10d::allreduce_")) issued = std::max(issued, e.startNs);
    }
    QVERIFY(issued > 0);
    for (const RawEvent& e : raw)
        QVERIFY(!(e.name == QStringLiteral("gloo:all_reduce") && e.startNs >= issued));
    QVERIFY(last - issued > 5'000'000'000); // it sat there until the 10 s timeout
    const RankActivity::Row& row = a.rows()[std::size_t(a.rowOf(0))];
    const std::int64_t base = row.firstNs - first;
    for (int k = 1; k < 10; ++k) {
        const std::int64_t t = issued + (last - issued) * k / 10;
        RankState s;
        a.rasterise(std::size_t(a.rowOf(0)), base + t, 1.0, 1, row.lastNs, false, &s);
        QCOMPARE(s, RankState::Waiting);
    }
}

// A real CPU-only Kineto trace (HTA's cpu_only sample, rank 34 of a gloo job): gloo records each
// collective's work on its own thread as a span named after it ("gloo:all_reduce", category
// user_annotation). Truth from the raw JSON: in the middle of each such span the rank
// communicates (or waits in the collective), not "in host code".
void TestRankActivity::glooSpansAreCommunication()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-real-hta/cpu_only");
    const QString file = dir + QStringLiteral("/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(inflate(file)));
    std::int64_t first = INT64_MAX;
    std::vector<std::pair<std::int64_t, std::int64_t>> gloo;
    for (const QJsonValue& v : doc[QStringLiteral("traceEvents")].toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("ph")).toString() != QStringLiteral("X")) continue;
        const std::int64_t ts = std::llround(e.value(QStringLiteral("ts")).toDouble() * 1000);
        const std::int64_t end =
            ts + std::llround(e.value(QStringLiteral("dur")).toDouble() * 1000);
        first = std::min(first, ts);
        if (e.value(QStringLiteral("name")).toString().startsWith(QStringLiteral("gloo:")) &&
            e.value(QStringLiteral("cat")).toString() == QStringLiteral("user_annotation"))
            gloo.emplace_back(ts, end);
    }
    QVERIFY(gloo.size() >= 5);
    const TraceRead read = readFolder(dir);
    const RankActivity a = RankActivity::build(read.events);
    QVERIFY(a.rowOf(34) >= 0);
    const RankActivity::Row& row = a.rows()[std::size_t(a.rowOf(34))];
    for (const auto& [start, end] : gloo) {
        RankState s;
        a.rasterise(std::size_t(a.rowOf(34)), row.firstNs - first + (start + end) / 2, 1.0, 1,
                    row.lastNs, false, &s);
        QVERIFY2(s == RankState::Communicating || s == RankState::Waiting,
                 qPrintable(QString::number(int(s))));
    }
}

QTEST_GUILESS_MAIN(TestRankActivity)
#include "tst_rankactivity.moc"
