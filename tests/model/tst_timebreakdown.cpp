#include "model/analysis/steptimeline.h"
#include "model/analysis/timebreakdown.h"
#include "tests/support/findings.h"
#include "tests/support/syntheticjob.h"

#include <QTest>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace rankscope;
using namespace rankscope::test;

class TestTimeBreakdown : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gpuLanes();
    void gpuTimeIsDeviceWorkOnly();
    void cpuOnlyTrace();
    void idleGpuRankIsFlagged();
    void busyGpusAreNotFlagged();
    void windowSumsToItsLength();
    void stepCommTimeUnitesARanksLanes();
};

static void add(EventStore& s, Lane& lane, std::int64_t a, std::int64_t b, const char* name,
                EventCategory c, std::uint8_t depth = 0)
{
    lane.startNs.push_back(a);
    lane.endNs.push_back(b);
    lane.nameId.push_back(s.strings.intern(name));
    lane.category.push_back(c);
    lane.depth.push_back(depth);
    lane.sourceOffset.push_back(0);
    lane.maxDepth = std::max(lane.maxDepth, depth);
}

// Rank 0's two GPU streams: compute with a memcpy between, and a communication kernel half
// under the first kernel.
static std::pair<Lane, Lane> rank0Streams(EventStore& s)
{
    Lane a, b;
    a.rank = b.rank = 0;
    a.kind = b.kind = LaneKind::GpuStream;
    add(s, a, 0, 100, "sgemm", EventCategory::Kernel);
    add(s, a, 200, 250, "Memcpy HtoD", EventCategory::Memcpy);
    add(s, a, 400, 500, "sgemm", EventCategory::Kernel);
    add(s, b, 50, 150, "ncclKernel_AllReduce", EventCategory::CommKernel);
    return {a, b};
}

void TestTimeBreakdown::gpuLanes()
{
    EventStore s;
    Lane cpu;
    cpu.rank = 0;
    add(s, cpu, 0, 10'000, "aten::mm",
        EventCategory::CpuOp); // CPU lanes do not count when GPUs exist
    auto [a, b] = rank0Streams(s);
    s.lanes = {cpu, a, b};
    const auto bd = TimeBreakdown::compute(s);
    QCOMPARE(bd.size(), std::size_t(1));
    const RankTimeBreakdown& r = bd[0];
    QVERIFY(r.gpu);
    QCOMPARE(r.windowStartNs, std::int64_t(0));
    QCOMPARE(r.windowEndNs, std::int64_t(500));
    QCOMPARE(r.computeNs, std::int64_t(200));
    QCOMPARE(r.commNs, std::int64_t(100));
    QCOMPARE(r.overlapNs, std::int64_t(50));
    QCOMPARE(r.memNs, std::int64_t(50));
    QCOMPARE(r.idleNs, std::int64_t(200));
    QCOMPARE(r.largestGaps.size(), std::size_t(2));
    QCOMPARE(r.largestGaps[0].startNs, std::int64_t(250));
    QCOMPARE(r.largestGaps[0].endNs, std::int64_t(400));
}

void TestTimeBreakdown::gpuTimeIsDeviceWorkOnly()
{
    // On a GPU rank only kernels, copies and sets are work: an operator or runtime call that a
    // trace writes on a device lane and a device annotation neither widen the window nor fill it.
    EventStore s;
    auto [a, b] = rank0Streams(s);
    add(s, b, 600, 900, "aten::mm", EventCategory::CpuOp);
    add(s, b, 900, 950, "runFunction", EventCategory::Runtime);
    add(s, a, 0, 1000, "nccl:all_reduce", EventCategory::UserAnnotation);
    s.lanes = {a, b};
    const auto bd = TimeBreakdown::compute(s);
    QCOMPARE(bd.size(), std::size_t(1));
    QVERIFY(bd[0].gpu);
    QCOMPARE(bd[0].windowNs(), std::int64_t(500));
    QCOMPARE(bd[0].computeNs, std::int64_t(200));
    QCOMPARE(bd[0].idleNs, std::int64_t(200));
}

void TestTimeBreakdown::cpuOnlyTrace()
{
    EventStore s;
    Lane main, gloo;
    main.rank = gloo.rank = 3;
    add(s, main, 0, 1000, "ProfilerStep#0", EventCategory::UserAnnotation);
    add(s, main, 10, 400, "aten::mm", EventCategory::CpuOp);
    add(s, main, 400, 420, "c10d::allreduce_", EventCategory::CpuOp);
    add(s, main, 600, 700, "aten::add", EventCategory::CpuOp);
    add(s, gloo, 420, 900, "gloo:all_reduce", EventCategory::CommKernel);
    s.lanes = {main, gloo};
    const auto bd = TimeBreakdown::compute(s);
    QCOMPARE(bd.size(), std::size_t(1));
    const RankTimeBreakdown& r = bd[0];
    QVERIFY(!r.gpu);
    QCOMPARE(r.rank, 3);
    QCOMPARE(r.computeNs, std::int64_t(490));
    QCOMPARE(r.commNs, std::int64_t(500));
    QCOMPARE(r.overlapNs, std::int64_t(100));
    QCOMPARE(r.windowNs(), std::int64_t(890));
    QCOMPARE(r.idleNs, std::int64_t(0));
    QVERIFY(TimeBreakdown::idleFindings(bd).empty()); // idle-GPU checks need GPUs
}

void TestTimeBreakdown::idleGpuRankIsFlagged()
{
    SyntheticJob job(4, true, true);
    for (int s = 0; s < 5; ++s)
        job.step(uniform(4, 10'000'000), {"all_reduce"}, 1'000'000);
    job.finish();
    // Rank 3's kernels are a fifth as long: its GPU waits for the host.
    for (Lane& lane : job.store.lanes)
        if (lane.rank == 3 && lane.kind == LaneKind::GpuStream)
            for (std::size_t i = 0; i < lane.size(); ++i)
                if (lane.category[i] == EventCategory::Kernel)
                    lane.endNs[i] = lane.startNs[i] + (lane.endNs[i] - lane.startNs[i]) / 5;
    const auto bd = TimeBreakdown::compute(job.store);
    QCOMPARE(bd.size(), std::size_t(4));
    QVERIFY(bd[3].idleFraction() > 0.5);
    QVERIFY(bd[0].idleFraction() < 0.2);
    const auto findings = TimeBreakdown::idleFindings(bd);
    QCOMPARE(findings.size(), std::size_t(1));
    QCOMPARE(findings[0].kind, FindingKind::IdleGpu);
    QCOMPARE(findings[0].ranks, std::vector<int>{3});
    // The idle shares to a tenth of a percent, from the idle and window times; the median of
    // four is the third smallest.
    const auto share = [](const RankTimeBreakdown& b) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f %%",
                      100.0 * double(b.idleNs) / double(b.windowNs()));
        return std::string(text);
    };
    std::vector<const RankTimeBreakdown*> byIdle;
    for (const RankTimeBreakdown& b : bd)
        byIdle.push_back(&b);
    std::sort(byIdle.begin(), byIdle.end(), [](const auto* a, const auto* b) {
        return a->idleNs * b->windowNs() < b->idleNs * a->windowNs();
    });
    const std::string expected = "rank 3's GPU is idle " + share(bd[3]) +
                                 " of the time (median rank " + share(*byIdle[2]) + ")";
    QVERIFY2(findings[0].summary.rfind(expected, 0) == 0, findings[0].summary.c_str());
}

void TestTimeBreakdown::busyGpusAreNotFlagged()
{
    SyntheticJob job(4, true, true);
    for (int s = 0; s < 5; ++s)
        job.step(uniform(4, 10'000'000), {"all_reduce"}, 1'000'000);
    job.finish();
    QVERIFY(TimeBreakdown::idleFindings(TimeBreakdown::compute(job.store)).empty());
}

void TestTimeBreakdown::windowSumsToItsLength()
{
    EventStore s;
    auto [a, b] = rank0Streams(s);
    // Rank 1: one long kernel, its clock 100 ns behind the common one; its CPU lane does not
    // count (it has a GPU).
    Lane c, cpu1;
    c.rank = cpu1.rank = 1;
    c.kind = LaneKind::GpuStream;
    add(s, c, 0, 300, "sgemm", EventCategory::Kernel);
    add(s, cpu1, 0, 1000, "aten::mm", EventCategory::CpuOp);
    // Rank 2: CPU only, an op spanning the whole window (DDP's forward) that runs a matmul and
    // an all-reduce and then waits: its own time is no computation, the matmul's is.
    Lane d;
    d.rank = 2;
    add(s, d, 0, 500, "DistributedDataParallel.forward", EventCategory::CpuOp);
    add(s, d, 50, 150, "aten::mm", EventCategory::CpuOp, 1);
    add(s, d, 150, 200, "c10d::allreduce_", EventCategory::CpuOp, 1);
    // Rank 3: GPU work only outside the window.
    Lane e;
    e.rank = 3;
    e.kind = LaneKind::GpuStream;
    add(s, e, 0, 50, "sgemm", EventCategory::Kernel);
    add(s, e, 450, 500, "sgemm", EventCategory::Kernel);
    s.lanes = {a, b, c, cpu1, d, e};

    const std::int64_t t0 = 80, t1 = 420;
    const auto bd = TimeBreakdown::computeWindow(s, t0, t1, {{1, 100}});
    QCOMPARE(bd.size(), std::size_t(4));
    for (const RankTimeBreakdown& r : bd) {
        QCOMPARE(r.windowNs(), t1 - t0);
        // Memory never overlaps compute or communication here, so the categories less the
        // overlap counted twice, plus idle, are the window.
        QCOMPARE(r.computeNs + r.commNs - r.overlapNs + r.memNs + r.idleNs, t1 - t0);
    }
    QVERIFY(bd[0].gpu);
    QCOMPARE(bd[0].computeNs, std::int64_t(40)); // [80,100) and [400,420)
    QCOMPARE(bd[0].commNs, std::int64_t(70));    // [80,150)
    QCOMPARE(bd[0].overlapNs, std::int64_t(20));
    QCOMPARE(bd[0].memNs, std::int64_t(50));
    QCOMPARE(bd[0].idleNs, std::int64_t(200));
    QCOMPARE(bd[0].largestGaps.front().startNs, std::int64_t(250));
    QCOMPARE(bd[0].largestGaps.front().endNs, std::int64_t(400));
    // Rank 1's window in its own clock is [-20, 320): the kernel covers 300 of it.
    QVERIFY(bd[1].gpu);
    QCOMPARE(bd[1].windowStartNs, std::int64_t(-20));
    QCOMPARE(bd[1].computeNs, std::int64_t(300));
    QCOMPARE(bd[1].idleNs, std::int64_t(40));
    QVERIFY(!bd[2].gpu);
    QCOMPARE(bd[2].computeNs, std::int64_t(70)); // the matmul's [80,150)
    QCOMPARE(bd[2].commNs, std::int64_t(50));
    QCOMPARE(bd[2].overlapNs, std::int64_t(0));
    QCOMPARE(bd[2].idleNs, t1 - t0 - 120);
    QCOMPARE(bd[3].idleNs, t1 - t0);
    QCOMPARE(bd[3].largestGaps.size(), std::size_t(1));
    QCOMPARE(bd[3].largestGaps[0].startNs, t0);
    QCOMPARE(bd[3].largestGaps[0].endNs, t1);

    // The whole-run breakdown is unchanged by the windowed one: rank 0 from 0 to 500.
    const auto whole = TimeBreakdown::compute(s);
    QCOMPARE(whole[0].windowNs(), std::int64_t(500));
    QCOMPARE(whole[0].idleNs, std::int64_t(200));
}

// A step's communication time is the union of the rank's collective executions on all its
// lanes (a gloo span on a CPU thread, NCCL kernels on two streams), overlaps counted once,
// clipped to the step; compute kernels and other ranks' collectives do not count.
void TestTimeBreakdown::stepCommTimeUnitesARanksLanes()
{
    EventStore s;
    const auto lane = [](int rank, LaneKind kind) {
        Lane l;
        l.rank = rank;
        l.kind = kind;
        return l;
    };
    Lane cpu = lane(0, LaneKind::CpuThread);
    add(s, cpu, 0, 1'000, "ProfilerStep#1", EventCategory::UserAnnotation);
    add(s, cpu, 100, 200, "gloo:all_reduce", EventCategory::CommKernel, 1);
    Lane stream7 = lane(0, LaneKind::GpuStream), stream8 = stream7;
    add(s, stream7, 150, 300, "ncclKernel_AllReduce", EventCategory::CommKernel);
    add(s, stream7, 400, 500, "volta_sgemm", EventCategory::Kernel);
    add(s, stream8, 900, 1'100, "ncclKernel_Broadcast", EventCategory::CommKernel);
    Lane other = lane(1, LaneKind::GpuStream);
    add(s, other, 0, 50, "ncclKernel_AllReduce", EventCategory::CommKernel);
    s.lanes = {cpu, stream7, stream8, other};
    const StepTimeline t = StepTimeline::build(s);
    QCOMPARE(t.stepsOf(0).size(), std::size_t(1));
    QCOMPARE(t.stepsOf(0).front().commNs, std::int64_t(300)); // [100,300) + [900,1000)
    QVERIFY(t.stepsOf(1).empty());                            // no CPU lane, no steps
}

QTEST_GUILESS_MAIN(TestTimeBreakdown)
#include "tst_timebreakdown.moc"
