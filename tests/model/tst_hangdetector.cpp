#include "model/analysis/hangdetector.h"
#include "model/analysis/symptomids.h"
#include "tests/support/findings.h"
#include "tests/support/syntheticjob.h"

#include <QTest>

using namespace rankscope;
using namespace rankscope::test;

class TestHangDetector : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void healthyRunHasNoFinding();
    void rankThatNeverArrived_data();
    void rankThatNeverArrived();
    void shortWaitIsDesync();
    void ranksWaitInDifferentCollectives_data();
    void ranksWaitInDifferentCollectives();
    void stuckEverywhereBlamesNobody();
    void sizeMismatchIsCollectiveMismatch();
    void progressPerRank();
    void interleavedOrdersAreNotPaired();
};

static HangDetector::Result detect(SyntheticJob& job)
{
    const auto groups = CollectiveMatcher::match(job.store);
    AnalysisContext ctx(job.store, job.sourcePaths());
    ctx.clock = ClockAligner::align(groups, {});
    return HangDetector::detect(ctx, groups);
}

void TestHangDetector::healthyRunHasNoFinding()
{
    SyntheticJob job(4);
    for (int s = 0; s < 6; ++s)
        job.step(uniform(4, 3'000'000), {"all_reduce", "all_reduce"});
    job.finish();
    QVERIFY(detect(job).findings.empty());
}

void TestHangDetector::rankThatNeverArrived_data()
{
    QTest::addColumn<bool>("groups");
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("absent");
    QTest::addColumn<bool>("spanClosed");
    QTest::newRow("seq, 3 ranks, rank 1, still running") << true << 3 << 1 << false;
    QTest::newRow("ordinal, 3 ranks, rank 1, gloo span closed") << false << 3 << 1 << true;
    QTest::newRow("ordinal, 8 ranks, rank 6") << false << 8 << 6 << true;
    QTest::newRow("seq, 16 ranks, rank 0") << true << 16 << 0 << false;
}

void TestHangDetector::rankThatNeverArrived()
{
    QFETCH(bool, groups);
    QFETCH(int, world);
    QFETCH(int, absent);
    QFETCH(bool, spanClosed);
    SyntheticJob job(world, groups);
    job.hangState =
        spanClosed ? CollectiveRecord::State::Completed : CollectiveRecord::State::Started;
    for (int s = 0; s < 3; ++s)
        job.step(uniform(world, 2'000'000), {"broadcast", "all_reduce"});
    job.step(uniform(world, 2'000'000), {"broadcast"}, 200'000, {absent});
    job.finish();
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    const Finding& f = res.findings.front();
    QCOMPARE(f.kind, FindingKind::Hang);
    QCOMPARE(f.severity, Severity::Error);
    QCOMPARE(f.symptom, std::string(symptoms::kHang));
    QCOMPARE(f.ranks, std::vector<int>{absent});
    QCOMPARE(f.step, 3);
    QCOMPARE(f.seq, std::int64_t(7)); // numbered from 1, like c10d
    QVERIFY(f.evidence.size() >= std::size_t(world - 1));
    QVERIFY(!f.evidence.front().path.empty());
    QVERIFY(f.evidence.front().timeNs >= 0);
    QVERIFY2(f.summary.find("10.") != std::string::npos, f.summary.c_str());
}

void TestHangDetector::shortWaitIsDesync()
{
    // The missing rank crashed: the others were torn down after 100 ms, not after a timeout.
    SyntheticJob job(3, false);
    job.hangState = CollectiveRecord::State::Completed;
    for (int s = 0; s < 5; ++s)
        job.step(uniform(3, 2'000'000), {"all_reduce", "all_reduce"});
    job.step(uniform(3, 2'000'000), {"all_reduce"}, 200'000, {2}, 100'000'000);
    job.finish();
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    QCOMPARE(res.findings[0].kind, FindingKind::Desync);
    QCOMPARE(res.findings[0].ranks, std::vector<int>{2});
    QCOMPARE(res.findings[0].step, 5);
}

void TestHangDetector::ranksWaitInDifferentCollectives_data()
{
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("shortRank");
    QTest::addColumn<bool>("trailingStep");
    QTest::newRow("2 ranks, rank 1 out of data, no trailing step") << 2 << 1 << false;
    QTest::newRow("2 ranks, rank 1 out of data, trailing step span") << 2 << 1 << true;
    QTest::newRow("2 ranks, rank 0 out of data") << 2 << 0 << true;
    QTest::newRow("4 ranks, rank 2 out of data") << 4 << 2 << true;
}

void TestHangDetector::ranksWaitInDifferentCollectives()
{
    QFETCH(int, world);
    QFETCH(int, shortRank);
    QFETCH(bool, trailingStep);
    SyntheticJob job(world, false);
    for (int s = 0; s < 6; ++s)
        job.step(uniform(world, 2'000'000), {"all_reduce", "all_reduce"});
    const std::int64_t t = job.nowNs();
    const std::int64_t timeout = 10'000'000'000;
    for (int r = 0; r < world; ++r) {
        if (r == shortRank) {
            // Ran out of batches: goes to a barrier before checkpointing.
            if (trailingStep)
                job.event(r, true, t, t + timeout, "ProfilerStep#6", EventCategory::UserAnnotation);
            job.collective(r, "barrier", t + 100'000, t + 150'000, t + timeout,
                           CollectiveRecord::State::Completed, trailingStep ? 6 : -1);
        } else {
            job.event(r, true, t, t + timeout, "ProfilerStep#6", EventCategory::UserAnnotation);
            job.collective(r, "all_reduce", t + 2'000'000, -1, -1, CollectiveRecord::State::Issued,
                           6);
        }
    }
    job.finish();
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    const Finding& f = res.findings.front();
    QCOMPARE(f.kind, FindingKind::Desync);
    QCOMPARE(f.severity, Severity::Error);
    QCOMPARE(f.ranks, std::vector<int>{shortRank});
    QCOMPARE(f.seq, std::int64_t(13));
    QVERIFY(f.summary.find("barrier") != std::string::npos);
}

void TestHangDetector::stuckEverywhereBlamesNobody()
{
    SyntheticJob job(2);
    for (int s = 0; s < 3; ++s)
        job.step(uniform(2, 2'000'000), {"all_reduce"});
    const std::int64_t t = job.nowNs();
    for (int r = 0; r < 2; ++r)
        job.collective(r, "all_reduce", t, -1, -1, CollectiveRecord::State::Issued, 3);
    job.finish();
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    QCOMPARE(res.findings[0].kind, FindingKind::Hang);
    QVERIFY(res.findings[0].ranks.empty());
    QCOMPARE(res.findings[0].seq, std::int64_t(4));
}

void TestHangDetector::sizeMismatchIsCollectiveMismatch()
{
    SyntheticJob job(3);
    for (int s = 0; s < 4; ++s)
        job.step(uniform(3, 2'000'000), {"all_gather"});
    job.finish();
    for (CollectiveRecord& c : job.store.collectives)
        if (c.rank == 2 && c.seq == 3) c.outNelems = c.inNelems * 2; // gathered from 2 of 3 ranks
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    QCOMPARE(res.findings[0].kind, FindingKind::CollectiveMismatch);
    QCOMPARE(res.findings[0].symptom, std::string(symptoms::kTensorMismatch));
    QCOMPARE(res.findings[0].ranks, std::vector<int>{2});
    QCOMPARE(res.findings[0].seq, std::int64_t(3));
}

void TestHangDetector::progressPerRank()
{
    SyntheticJob job(3);
    for (int s = 0; s < 2; ++s)
        job.step(uniform(3, 2'000'000), {"all_reduce"});
    job.step(uniform(3, 2'000'000), {"all_reduce"}, 200'000, {2});
    job.finish();
    const auto res = detect(job);
    QCOMPARE(res.progress.size(), std::size_t(1));
    const auto& p = res.progress[0];
    QCOMPARE(p.wavefront, std::int64_t(3));
    QCOMPARE(p.ranks[0].lastIssued, std::int64_t(3));
    QCOMPARE(p.ranks[0].lastStarted, std::int64_t(3));
    QCOMPARE(p.ranks[0].lastCompleted, std::int64_t(2));
    QCOMPARE(p.ranks[2].lastIssued, std::int64_t(2));
}

// Traces without groups or seqs whose ranks call collectives in different orders throughout
// (two process groups interleaved differently): the rows are no pairs, and the one finding says
// so instead of guessing a mismatch.
void TestHangDetector::interleavedOrdersAreNotPaired()
{
    SyntheticJob job(2, /*groups=*/false);
    for (int s = 0; s < 6; ++s)
        job.step(uniform(2, 2'000'000), {"all_reduce", "all_to_all"});
    job.finish();
    const StringId reduce = job.store.strings.intern("all_reduce");
    const StringId toAll = job.store.strings.intern("all_to_all");
    int n = 0;
    for (CollectiveRecord& c : job.store.collectives)
        if (c.rank == 1 && n++ % 4 < 2) c.op = c.op == reduce ? toAll : reduce;
    const auto res = detect(job);
    QCOMPARE(res.findings.size(), std::size_t(1));
    QCOMPARE(res.findings[0].kind, FindingKind::UnpairedCollectives);
    QCOMPARE(res.findings[0].severity, Severity::Info);
    QVERIFY2(res.findings[0].summary.find("differ in op, size or type at 6 of 12 positions") !=
                 std::string::npos,
             res.findings[0].summary.c_str());
}

QTEST_GUILESS_MAIN(TestHangDetector)
#include "tst_hangdetector.moc"
