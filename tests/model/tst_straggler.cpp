#include "model/analysis/stragglerdetector.h"
#include "model/analysis/symptomids.h"
#include "tests/support/findings.h"
#include "tests/support/syntheticjob.h"

#include <QTest>
#include <random>

using namespace rankscope;
using namespace rankscope::test;

class TestStraggler : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void slowRankIsNamed_data();
    void slowRankIsNamed();
    void jitterIsNotAStraggler_data();
    void jitterIsNotAStraggler();
    void consistentTinyLagIsNotMaterial();
    void binomialTail();
};

static StragglerDetector::Result detect(SyntheticJob& job)
{
    const auto groups = CollectiveMatcher::match(job.store);
    AnalysisContext ctx(job.store, job.sourcePaths());
    ctx.clock = ClockAligner::align(groups, {});
    return StragglerDetector::detect(ctx, groups);
}

void TestStraggler::slowRankIsNamed_data()
{
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("slow");
    QTest::addColumn<bool>("groups");
    QTest::addColumn<bool>("skewedClocks");
    QTest::newRow("3 ranks, rank 1, gloo-like") << 3 << 1 << false << false;
    QTest::newRow("3 ranks, rank 1, skewed clocks") << 3 << 1 << false << true;
    QTest::newRow("8 ranks, rank 5, seq") << 8 << 5 << true << true;
    QTest::newRow("2 ranks, rank 0") << 2 << 0 << true << false;
}

void TestStraggler::slowRankIsNamed()
{
    QFETCH(int, world);
    QFETCH(int, slow);
    QFETCH(bool, groups);
    QFETCH(bool, skewedClocks);
    SyntheticJob job(world, groups);
    if (skewedClocks)
        for (int r = 0; r < world; ++r)
            job.setClockOffset(r, (r % 2 ? 1 : -1) * std::int64_t(r) * 3'000'000'000);
    job.advance(30'000'000'000);
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::int64_t> jitter(0, 2'000'000);
    for (int s = 0; s < 10; ++s) {
        std::vector<std::int64_t> compute(static_cast<std::size_t>(world));
        for (int r = 0; r < world; ++r)
            compute[std::size_t(r)] = 5'000'000 + jitter(rng) + (r == slow ? 250'000'000 : 0);
        job.step(compute, {"all_reduce", "all_reduce"});
    }
    job.finish();
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    const Finding& f = res.findings.front();
    QCOMPARE(f.kind, FindingKind::Straggler);
    QCOMPARE(f.symptom, std::string(symptoms::kLowEfficiency));
    QCOMPARE(f.ranks, std::vector<int>{slow});
    QCOMPARE(f.step, 0);
    const RankArrival& a = res.arrivals.at(slow);
    QCOMPARE(a.lastCount, 10); // the first op of each step; the second starts together
    QCOMPARE(a.steps.size(), std::size_t(10));
    QVERIFY(a.meanDelayNs > 200'000'000);
    QVERIFY(a.medianNonCommNs > 200'000'000);
    QVERIFY(res.arrivals.at((slow + 1) % world).medianNonCommNs < 20'000'000);
    QVERIFY(!f.evidence.empty());
}

void TestStraggler::jitterIsNotAStraggler_data()
{
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("seed");
    for (int seed = 1; seed <= 4; ++seed) {
        QTest::addRow("2 ranks seed %d", seed) << 2 << seed;
        QTest::addRow("6 ranks seed %d", seed) << 6 << seed;
    }
}

void TestStraggler::jitterIsNotAStraggler()
{
    QFETCH(int, world);
    QFETCH(int, seed);
    SyntheticJob job(world, false);
    std::mt19937 rng{static_cast<unsigned>(seed)};
    std::uniform_int_distribution<std::int64_t> compute(1'000'000, 12'000'000);
    for (int s = 0; s < 11; ++s) {
        std::vector<std::int64_t> c(static_cast<std::size_t>(world));
        for (auto& v : c)
            v = compute(rng);
        job.step(c, {"all_reduce", "all_reduce"});
    }
    job.finish();
    QVERIFY(detect(job).findings.empty());
}

void TestStraggler::consistentTinyLagIsNotMaterial()
{
    SyntheticJob job(2);
    for (int s = 0; s < 30; ++s)
        job.step({5'000'000, 5'050'000}, {"all_reduce"});
    job.finish();
    const auto res = detect(job);
    QVERIFY(res.findings.empty());
    QCOMPARE(res.arrivals.at(1).lastCount, 30);
    QVERIFY(res.arrivals.at(1).pValue < 1e-6);
}

void TestStraggler::binomialTail()
{
    SyntheticJob job(4);
    for (int s = 0; s < 40; ++s) {
        std::vector<std::int64_t> c = uniform(4, 5'000'000);
        c[std::size_t(s % 4)] += 9'000'000; // every rank is late as often as the others
        job.step(c, {"all_reduce"});
    }
    job.finish();
    const auto res = detect(job);
    // Last 10 of 40 times at p = 1/4 is what chance predicts.
    QVERIFY(res.arrivals.at(3).pValue > 0.3);
    QVERIFY(res.findings.empty());
}

QTEST_GUILESS_MAIN(TestStraggler)
#include "tst_straggler.moc"
