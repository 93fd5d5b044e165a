#include "model/analysis/collectivematcher.h"
#include "tests/support/syntheticjob.h"

#include <QTest>

using namespace rankscope;
using namespace rankscope::test;

Q_DECLARE_METATYPE(MismatchKind)
Q_DECLARE_METATYPE(CollectiveRecord::State)

class TestCollectiveMatcher : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matchesHealthyRun_data();
    void matchesHealthyRun();
    void findsMismatch_data();
    void findsMismatch();
    void ordinalGapLeavesTheGroupUnpaired();
    void duplicateSourcesAreMerged();
    void unknownStateTakesNoPartInStateRule_data();
    void unknownStateTakesNoPartInStateRule();
    void knownStateWinsOverUnknown_data();
    void knownStateWinsOverUnknown();
    void separateGroupsAreKeyedByMembers();
    void largeStoreMatchesAcrossSlices();
    void recordsOutOfSeqOrderAcrossASliceBorder();
};

static SyntheticJob healthy(int world, bool groups, int steps = 5)
{
    SyntheticJob job(world, groups);
    for (int s = 0; s < steps; ++s)
        job.step(uniform(world, 2'000'000), {"all_reduce", "broadcast"});
    job.finish();
    return job;
}

// Enough records to cross the matcher's slice borders: `steps` steps of `perStep` all_reduce.
static SyntheticJob allReduceSteps(int world, int steps, int perStep)
{
    SyntheticJob job(world, true);
    for (int s = 0; s < steps; ++s)
        job.step(uniform(world, 2'000'000),
                 std::vector<std::string>(std::size_t(perStep), "all_reduce"));
    job.finish();
    return job;
}

static CollectiveRecord& recordOf(EventStore& store, int rank, int ordinal)
{
    int n = 0;
    for (CollectiveRecord& c : store.collectives)
        if (c.rank == rank && n++ == ordinal) return c;
    qFatal("no such record");
}

void TestCollectiveMatcher::matchesHealthyRun_data()
{
    QTest::addColumn<bool>("groups");
    QTest::newRow("process groups and seq") << true;
    QTest::newRow("legacy trace, by ordinal") << false;
}

void TestCollectiveMatcher::matchesHealthyRun()
{
    QFETCH(bool, groups);
    SyntheticJob job = healthy(3, groups);
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(1));
    QCOMPARE(matched[0].byOrdinal, !groups);
    QCOMPARE(matched[0].members, (std::vector<int>{0, 1, 2}));
    QCOMPARE(matched[0].collectives.size(), std::size_t(10));
    QCOMPARE(matched[0].firstMismatch, -1);
    for (const auto& row : matched[0].collectives)
        for (std::int32_t i : row.records)
            QVERIFY(i >= 0);
}

void TestCollectiveMatcher::findsMismatch_data()
{
    QTest::addColumn<bool>("groups");
    QTest::addColumn<QString>("change");
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("ordinal");
    QTest::addColumn<MismatchKind>("kind");
    QTest::addColumn<std::vector<int>>("culprits");
    for (bool g : {true, false}) {
        const char* mode = g ? "seq" : "ordinal";
        QTest::addRow("%s op type", mode)
            << g << "op" << 1 << 4 << MismatchKind::OpType << std::vector<int>{1};
        QTest::addRow("%s input size", mode)
            << g << "size" << 2 << 6 << MismatchKind::Size << std::vector<int>{2};
        QTest::addRow("%s dtype", mode)
            << g << "dtype" << 0 << 3 << MismatchKind::Dtype << std::vector<int>{0};
        QTest::addRow("%s state", mode)
            << g << "state" << 1 << 5 << MismatchKind::State << std::vector<int>{1};
    }
    QTest::newRow("seq group size")
        << true << "group size" << 2 << 3 << MismatchKind::GroupSize << std::vector<int>{2};
    QTest::newRow("seq missing rank")
        << true << "drop" << 2 << 7 << MismatchKind::Participation << std::vector<int>{2};
}

void TestCollectiveMatcher::findsMismatch()
{
    QFETCH(bool, groups);
    QFETCH(QString, change);
    QFETCH(int, rank);
    QFETCH(int, ordinal);
    QFETCH(MismatchKind, kind);
    QFETCH(std::vector<int>, culprits);
    SyntheticJob job = healthy(3, groups);
    CollectiveRecord& c = recordOf(job.store, rank, ordinal);
    if (change == QLatin1String("op"))
        c.op = job.store.strings.intern("reduce_scatter");
    else if (change == QLatin1String("size"))
        c.inNelems = c.outNelems = 512;
    else if (change == QLatin1String("dtype"))
        c.dtype = job.store.strings.intern("Half");
    else if (change == QLatin1String("group size"))
        c.groupSize = 2;
    else if (change == QLatin1String("state"))
        c.state = CollectiveRecord::State::Started;
    else if (change == QLatin1String("drop"))
        job.store.collectives.erase(job.store.collectives.begin() +
                                    (&c - job.store.collectives.data()));
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(1));
    const CollectiveGroup& g = matched[0];
    QCOMPARE(g.firstMismatch, ordinal);
    QCOMPARE(g.collectives[std::size_t(ordinal)].mismatch, kind);
    QCOMPARE(g.collectives[std::size_t(ordinal)].culprits, culprits);
    QCOMPARE(g.mismatchCount, 1);
}

void TestCollectiveMatcher::ordinalGapLeavesTheGroupUnpaired()
{
    // Rank 1's trace lacks one broadcast in the middle while its later collectives go on: its
    // events were dropped (a sampled or partial trace), so no row is a sound pair.
    SyntheticJob job = healthy(3, false, 6);
    auto& recs = job.store.collectives;
    recs.erase(recs.begin() + (&recordOf(job.store, 1, 5) - recs.data()));
    const auto matched = CollectiveMatcher::match(job.store);
    const CollectiveGroup& g = matched[0];
    QVERIFY2(g.unpairedReason.find("rank 1 has no collective at position 6") != std::string::npos,
             g.unpairedReason.c_str());
    QVERIFY(g.collectives.empty());
    QCOMPARE(g.firstMismatch, -1);
    QCOMPARE(g.mismatchCount, 0);
}

void TestCollectiveMatcher::duplicateSourcesAreMerged()
{
    SyntheticJob job = healthy(2, true, 2);
    CollectiveRecord dup = recordOf(job.store, 0, 1);
    dup.state = CollectiveRecord::State::Issued;
    dup.execStartNs = dup.execEndNs = -1;
    job.store.collectives.push_back(dup);
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched[0].collectives.size(), std::size_t(4));
    QCOMPARE(matched[0].firstMismatch, -1);
    const CollectiveRecord& kept =
        job.store.collectives[std::size_t(matched[0].collectives[1].records[0])];
    QCOMPARE(kept.state, CollectiveRecord::State::Completed);
}

void TestCollectiveMatcher::unknownStateTakesNoPartInStateRule_data()
{
    QTest::addColumn<CollectiveRecord::State>("others"); // the state of ranks 0 and 1
    QTest::addColumn<bool>("unknown");                   // rank 2's record cannot see its state
    QTest::addColumn<bool>("mismatch");
    using State = CollectiveRecord::State;
    QTest::newRow("next to completed") << State::Completed << true << false;
    QTest::newRow("next to started") << State::Started << true << false;
    QTest::newRow("known, next to completed") << State::Completed << false << true;
    QTest::newRow("known, next to started") << State::Started << false << true;
}

void TestCollectiveMatcher::unknownStateTakesNoPartInStateRule()
{
    // Rank 2's record of collective 4 is from a source that shows the call issued only (an
    // NCCL COLL line): its Issued says nothing about whether the call ran.
    QFETCH(CollectiveRecord::State, others);
    QFETCH(bool, unknown);
    QFETCH(bool, mismatch);
    SyntheticJob job = healthy(3, true);
    for (int r : {0, 1})
        recordOf(job.store, r, 4).state = others;
    CollectiveRecord& c = recordOf(job.store, 2, 4);
    c.state = CollectiveRecord::State::Issued;
    c.stateUnknown = unknown;
    c.execStartNs = c.execEndNs = -1;
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(1));
    const CollectiveGroup& g = matched[0];
    QCOMPARE(g.mismatchCount, mismatch ? 1 : 0);
    if (mismatch) {
        QCOMPARE(g.collectives[4].mismatch, MismatchKind::State);
        QCOMPARE(g.collectives[4].culprits, std::vector<int>{2});
    }
}

void TestCollectiveMatcher::knownStateWinsOverUnknown_data()
{
    QTest::addColumn<CollectiveRecord::State>("known");
    using State = CollectiveRecord::State;
    QTest::newRow("completed") << State::Completed;
    QTest::newRow("started") << State::Started;
    QTest::newRow("issued") << State::Issued; // e.g. a dump's entry still scheduled
}

void TestCollectiveMatcher::knownStateWinsOverUnknown()
{
    // Rank 0's collective 1 is also in a log that cannot see execution, read before the
    // other source: the row keeps the record whose state is known, whatever that state is.
    QFETCH(CollectiveRecord::State, known);
    SyntheticJob job = healthy(2, true, 2);
    auto& recs = job.store.collectives;
    CollectiveRecord& c = recordOf(job.store, 0, 1);
    c.state = known;
    CollectiveRecord logged = c;
    logged.state = CollectiveRecord::State::Issued;
    logged.stateUnknown = true;
    logged.execStartNs = logged.execEndNs = -1;
    recs.insert(recs.begin() + (&c - recs.data()), logged);
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(1));
    QCOMPARE(matched[0].collectives.size(), std::size_t(4));
    const CollectiveRecord& kept = recs[std::size_t(matched[0].collectives[1].records[0])];
    QVERIFY(!kept.stateUnknown);
    QCOMPARE(kept.state, known);
}

void TestCollectiveMatcher::separateGroupsAreKeyedByMembers()
{
    SyntheticJob job = healthy(4, true, 2);
    // Ranks 2 and 3 also run a sub-group of their own, with its own sequence numbers.
    for (int r : {2, 3}) {
        CollectiveRecord c = recordOf(job.store, r, 0);
        c.processGroupName = job.store.strings.intern("1");
        c.groupRanks = job.store.rankLists.intern({2, 3});
        c.groupSize = 2;
        c.seq = 0;
        job.store.collectives.push_back(c);
    }
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(2));
    for (const auto& g : matched) {
        QCOMPARE(g.firstMismatch, -1);
        if (g.name == "1") QCOMPARE(g.members, (std::vector<int>{2, 3}));
    }
}

// More records than one slice of the matcher's parallel scan (65,536), so ranks' runs cross
// slice borders and rows are filled by several tasks: the result must be that of one pass.
void TestCollectiveMatcher::largeStoreMatchesAcrossSlices()
{
    constexpr int kWorld = 8, kSteps = 1200, kPerStep = 10;
    SyntheticJob job = allReduceSteps(kWorld, kSteps, kPerStep);
    QVERIFY(job.store.collectives.size() > 65'536);
    recordOf(job.store, 5, 9000).inNelems = 7;
    auto& recs = job.store.collectives;
    const std::int64_t droppedEnd = recordOf(job.store, 3, 11000).execEndNs;
    QVERIFY(droppedEnd >= 0);
    recs.erase(recs.begin() + (&recordOf(job.store, 3, 11000) - recs.data()));
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(1));
    const CollectiveGroup& g = matched[0];
    const std::size_t rows = std::size_t(kSteps * kPerStep);
    QCOMPARE(g.collectives.size(), rows);
    QCOMPARE(g.mismatchCount, 2);
    QCOMPARE(g.firstMismatch, 9000);
    QCOMPARE(g.collectives[9000].mismatch, MismatchKind::Size);
    QCOMPARE(g.collectives[9000].culprits, std::vector<int>{5});
    QCOMPARE(g.collectives[11000].mismatch, MismatchKind::Participation);
    QCOMPARE(g.collectives[11000].culprits, std::vector<int>{3});
    for (std::size_t k = 0; k < rows; ++k) {
        QCOMPARE(g.collectives[k].seq, std::int64_t(k + 1));
        for (std::size_t m = 0; m < g.members.size(); ++m) {
            const std::int32_t i = g.collectives[k].records[m];
            const std::int64_t end = g.completedEndNs[m * rows + k];
            if (i < 0) {
                QVERIFY(m == 3 && k == 11000);
                QCOMPARE(end, std::int64_t(-1));
                continue;
            }
            const CollectiveRecord& c = recs[std::size_t(i)];
            QCOMPARE(c.rank, g.members[m]);
            QCOMPARE(c.seq, g.collectives[k].seq);
            QCOMPARE(end, c.execEndNs);
        }
    }
}

// A rank whose records are one run of the store but not in seq order, with the two records out
// of order on either side of a slice border (65,536) and a duplicate of one of them that only
// shows it issued: the run must not be taken as already in seq order. Every row still holds
// each member's record of its seq, the completed one of the duplicates.
void TestCollectiveMatcher::recordsOutOfSeqOrderAcrossASliceBorder()
{
    constexpr int kWorld = 4, kSteps = 2000, kPerStep = 10;
    SyntheticJob job = allReduceSteps(kWorld, kSteps, kPerStep);
    auto& recs = job.store.collectives;
    constexpr std::size_t kBorder = 1 << 16;
    QVERIFY(recs.size() > kBorder);
    QCOMPARE(recs[kBorder - 1].rank, recs[kBorder].rank);
    std::swap(recs[kBorder - 1], recs[kBorder]);
    CollectiveRecord issued = recs[kBorder + 1];
    issued.state = CollectiveRecord::State::Issued;
    issued.execStartNs = issued.execEndNs = -1;
    recs.insert(recs.begin() + std::ptrdiff_t(kBorder + 2), issued);
    const auto matched = CollectiveMatcher::match(job.store);
    QCOMPARE(matched.size(), std::size_t(1));
    const CollectiveGroup& g = matched[0];
    QCOMPARE(g.collectives.size(), std::size_t(kSteps * kPerStep));
    QCOMPARE(g.mismatchCount, 0);
    for (const MatchedCollective& row : g.collectives)
        for (std::size_t m = 0; m < g.members.size(); ++m) {
            QVERIFY(row.records[m] >= 0);
            const CollectiveRecord& c = recs[std::size_t(row.records[m])];
            QCOMPARE(c.rank, g.members[m]);
            QCOMPARE(c.seq, row.seq);
            QCOMPARE(c.state, CollectiveRecord::State::Completed);
        }
}

QTEST_GUILESS_MAIN(TestCollectiveMatcher)
#include "tst_collectivematcher.moc"
