#include "model/analysis/timebreakdown.h"
#include "tests/support/syntheticjob.h"

#include <QTest>

using namespace rankscope;
using namespace rankscope::test;

class TestTimeBreakdown : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gpuLanes();
    void cpuOnlyTrace();
    void idleGpuRankIsFlagged();
    void busyGpusAreNotFlagged();
};

static void add(EventStore& s, Lane& lane, std::int64_t a, std::int64_t b, const char* name,
                EventCategory c)
{
    lane.startNs.push_back(a);
    lane.endNs.push_back(b);
    lane.nameId.push_back(s.strings.intern(name));
    lane.category.push_back(c);
    lane.depth.push_back(0);
    lane.sourceOffset.push_back(0);
}

void TestTimeBreakdown::gpuLanes()
{
    EventStore s;
    Lane cpu;
    cpu.rank = 0;
    add(s, cpu, 0, 10'000, "aten::mm",
        EventCategory::CpuOp); // CPU lanes do not count when GPUs exist
    Lane a, b;
    a.rank = b.rank = 0;
    a.kind = b.kind = LaneKind::GpuStream;
    add(s, a, 0, 100, "sgemm", EventCategory::Kernel);
    add(s, a, 200, 250, "Memcpy HtoD", EventCategory::Memcpy);
    add(s, a, 400, 500, "sgemm", EventCategory::Kernel);
    add(s, b, 50, 150, "ncclKernel_AllReduce", EventCategory::CommKernel);
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
    QCOMPARE(findings[0].kind, std::string("idle_gpu"));
    QCOMPARE(findings[0].ranks, std::vector<int>{3});
}

void TestTimeBreakdown::busyGpusAreNotFlagged()
{
    SyntheticJob job(4, true, true);
    for (int s = 0; s < 5; ++s)
        job.step(uniform(4, 10'000'000), {"all_reduce"}, 1'000'000);
    job.finish();
    QVERIFY(TimeBreakdown::idleFindings(TimeBreakdown::compute(job.store)).empty());
}

QTEST_GUILESS_MAIN(TestTimeBreakdown)
#include "tst_timebreakdown.moc"
