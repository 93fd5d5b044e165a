#include "model/analysis/clockaligner.h"
#include "tests/support/syntheticjob.h"

#include <QTest>

using namespace rankscope;
using namespace rankscope::test;

class TestClockAligner : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void recoversOffsets_data();
    void recoversOffsets();
    void robustToOutliers();
    void rankWithoutCompletionsIsUnknown();
    void chainsThroughSubgroups();
};

void TestClockAligner::recoversOffsets_data()
{
    QTest::addColumn<bool>("groups");
    QTest::newRow("seq") << true;
    QTest::newRow("ordinal") << false;
}

void TestClockAligner::recoversOffsets()
{
    QFETCH(bool, groups);
    SyntheticJob job(4, groups);
    const std::vector<std::int64_t> offsets{0, 5'000'000'000, -3'000'000'000, 123'456};
    for (int r = 0; r < 4; ++r)
        job.setClockOffset(r, offsets[std::size_t(r)]);
    job.advance(4'000'000'000); // keep every rank's times positive
    for (int s = 0; s < 8; ++s)
        job.step({2'000'000, 3'000'000 + s * 10'000, 2'500'000, 2'000'000}, {"all_reduce"});
    job.finish();
    const auto groupsFound = CollectiveMatcher::match(job.store);
    const ClockAlignment a = ClockAligner::align(groupsFound, {0, 1, 2, 3});
    QCOMPARE(a.referenceRank, 0);
    for (int r = 0; r < 4; ++r) {
        QVERIFY(a.offsetNs.at(r).has_value());
        QCOMPARE(*a.offsetNs.at(r), offsets[std::size_t(r)]);
    }
    QCOMPARE(a.samples.at(1), 8);
    QCOMPARE(a.toReference(1, 5'000'000'100), std::int64_t(100));
}

void TestClockAligner::robustToOutliers()
{
    SyntheticJob job(3);
    job.setClockOffset(2, 700'000'000);
    for (int s = 0; s < 9; ++s)
        job.step(uniform(3, 2'000'000), {"all_reduce"});
    job.finish();
    // Two collectives where rank 2's completion was seen late (descheduled).
    int n = 0;
    for (CollectiveRecord& c : job.store.collectives)
        if (c.rank == 2 && (c.seq == 1 || c.seq == 5) && ++n) c.execEndNs += 900'000'000;
    QCOMPARE(n, 2);
    const ClockAlignment a = ClockAligner::align(CollectiveMatcher::match(job.store), {});
    QCOMPARE(*a.offsetNs.at(2), std::int64_t(700'000'000));
}

void TestClockAligner::rankWithoutCompletionsIsUnknown()
{
    SyntheticJob job(3);
    for (int s = 0; s < 3; ++s)
        job.step(uniform(3, 2'000'000), {"all_reduce"});
    job.finish();
    for (CollectiveRecord& c : job.store.collectives)
        if (c.rank == 1) c.state = CollectiveRecord::State::Issued;
    const ClockAlignment a = ClockAligner::align(CollectiveMatcher::match(job.store), {0, 1, 2, 3});
    QVERIFY(a.offsetNs.at(0).has_value());
    QVERIFY(!a.offsetNs.at(1).has_value());
    QVERIFY(!a.notes.at(1).empty());
    QVERIFY(!a.offsetNs.at(3).has_value()); // a rank with no trace at all
    QCOMPARE(a.offsetOf(1), std::int64_t(0));
    QVERIFY(a.offsetNs.at(2).has_value());
}

void TestClockAligner::chainsThroughSubgroups()
{
    // Pipeline-style: ranks 0-1 share group "a", ranks 1-2 group "b"; rank 2 never meets rank 0.
    SyntheticJob job(3);
    job.setClockOffset(2, 2'000'000'000);
    job.setClockOffset(1, -1'000'000);
    for (int s = 0; s < 4; ++s)
        job.step(uniform(3, 2'000'000), {"all_reduce"});
    job.finish();
    auto& recs = job.store.collectives;
    std::vector<CollectiveRecord> extra;
    for (CollectiveRecord& c : recs) {
        if (c.rank == 2 || c.rank == 1) {
            CollectiveRecord b = c;
            b.processGroupName = job.store.strings.intern("b");
            b.groupRanks = job.store.rankLists.intern({1, 2});
            extra.push_back(b);
        }
        c.processGroupName = job.store.strings.intern("a");
        c.groupRanks = job.store.rankLists.intern({0, 1});
    }
    recs.erase(std::remove_if(recs.begin(), recs.end(),
                              [](const CollectiveRecord& c) { return c.rank == 2; }),
               recs.end());
    recs.insert(recs.end(), extra.begin(), extra.end());
    const ClockAlignment a = ClockAligner::align(CollectiveMatcher::match(job.store), {});
    QCOMPARE(*a.offsetNs.at(1), std::int64_t(-1'000'000));
    QCOMPARE(*a.offsetNs.at(2), std::int64_t(2'000'000'000));
}

QTEST_GUILESS_MAIN(TestClockAligner)
#include "tst_clockaligner.moc"
