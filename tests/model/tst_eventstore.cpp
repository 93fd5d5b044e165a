#include "model/store/eventstore.h"

#include <QTest>

using namespace rankscope;

namespace {

// A lane from (start, end, depth) triples, sorted by start.
Lane makeLane(StringTable& strings, std::initializer_list<std::tuple<int, int, int>> events,
              const char* name = "op")
{
    Lane lane;
    for (const auto& [s, e, d] : events) {
        lane.startNs.push_back(s);
        lane.endNs.push_back(e);
        lane.depth.push_back(std::uint8_t(d));
        lane.nameId.push_back(strings.intern(name));
        lane.category.push_back(EventCategory::CpuOp);
        lane.sourceOffset.push_back(0);
    }
    return lane;
}

} // namespace

class TestEventStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void firstEndingAfter_data();
    void firstEndingAfter();
    void innermostAt_data();
    void innermostAt();
    void mergeRemapsStringsAndIndices();
    void mergeKeepsNamesInEveryOrder();
    void countsAndRange();
    void bytesPerEvent();
};

void TestEventStore::firstEndingAfter_data()
{
    QTest::addColumn<qint64>("t");
    QTest::addColumn<int>("expected");
    // [0,100] d0 ⊃ [10,20] d1, [30,90] d1 ⊃ [40,50] d2; [200,300] d0
    QTest::newRow("before all") << qint64(-5) << 0;
    QTest::newRow("inside the long parent") << qint64(60) << 0;
    QTest::newRow("between top-level spans") << qint64(150) << 4;
    QTest::newRow("after all") << qint64(400) << 5;
}

void TestEventStore::firstEndingAfter()
{
    QFETCH(qint64, t);
    QFETCH(int, expected);
    StringTable st;
    const Lane lane =
        makeLane(st, {{0, 100, 0}, {10, 20, 1}, {30, 90, 1}, {40, 50, 2}, {200, 300, 0}});
    QCOMPARE(int(rankscope::firstEndingAfter(lane, t)), expected);
}

void TestEventStore::innermostAt_data()
{
    QTest::addColumn<qint64>("t");
    QTest::addColumn<int>("expected");
    QTest::newRow("deepest") << qint64(45) << 3;
    QTest::newRow("middle") << qint64(60) << 2;
    QTest::newRow("parent only") << qint64(25) << 0;
    QTest::newRow("gap") << qint64(150) << -1;
    QTest::newRow("start edge") << qint64(200) << 4;
}

void TestEventStore::innermostAt()
{
    QFETCH(qint64, t);
    QFETCH(int, expected);
    StringTable st;
    const Lane lane =
        makeLane(st, {{0, 100, 0}, {10, 20, 1}, {30, 90, 1}, {40, 50, 2}, {200, 300, 0}});
    QCOMPARE(int(rankscope::innermostAt(lane, t)), expected);
}

void TestEventStore::mergeRemapsStringsAndIndices()
{
    EventStore a;
    a.lanes.push_back(makeLane(a.strings, {{0, 10, 0}}, "alpha"));
    a.strings.intern("max");
    const RankListId pairInA = a.rankLists.intern({0, 1});
    EventStore b;
    b.strings.intern("zzz");
    b.rankLists.intern({4, 5, 6});
    b.lanes.push_back(makeLane(b.strings, {{5, 6, 0}}, "beta"));
    b.lanes.push_back(makeLane(b.strings, {{7, 8, 0}}, "alpha"));
    CollectiveRecord c;
    c.rank = 3;
    c.op = b.strings.intern("all_reduce");
    c.dtype = b.strings.intern("Float");
    c.reduceOp = b.strings.intern("max");
    c.groupRanks = b.rankLists.intern({0, 1});
    c.laneIndex = 1;
    c.eventIndex = 0;
    b.collectives.push_back(c);
    b.flows.push_back({0, 1, 0u, 0u, b.strings.intern("ac2g")});
    a.merge(std::move(b));
    QCOMPARE(a.lanes.size(), std::size_t(3));
    QVERIFY(b.lanes.empty());
    QCOMPARE(a.strings.view(a.lanes[1].nameId[0]), std::string_view("beta"));
    QCOMPARE(a.lanes[2].nameId[0], a.lanes[0].nameId[0]); // "alpha" interned once
    QCOMPARE(a.strings.view(a.collectives[0].op), std::string_view("all_reduce"));
    QCOMPARE(a.strings.view(a.collectives[0].dtype), std::string_view("Float"));
    QCOMPARE(a.strings.view(a.collectives[0].reduceOp), std::string_view("max"));
    QCOMPARE(a.collectives[0].groupRanks, pairInA); // one id per member list
    QCOMPARE(a.rankLists.ranks(a.rankLists.intern({4, 5, 6})), (std::vector<int>{4, 5, 6}));
    QCOMPARE(a.collectives[0].laneIndex, 2);
    QCOMPARE(a.flows[0].fromLane, 1);
    QCOMPARE(a.flows[0].toLane, 2);
    QVERIFY(a.flowInto(2, 0));
    QVERIFY(!a.flowInto(1, 0));
    QCOMPARE(a.strings.view(a.flows[0].category), std::string_view("ac2g"));
}

// The names of merged events, whether their table matches the store's (the first source, or
// one naming the same things in the same order) or not (another order, a name more).
void TestEventStore::mergeKeepsNamesInEveryOrder()
{
    const auto source = [](const std::vector<std::string>& names) {
        EventStore s;
        Lane lane;
        for (std::size_t i = 0; i < names.size(); ++i) {
            lane.startNs.push_back(std::int64_t(10 * i));
            lane.endNs.push_back(std::int64_t(10 * i + 5));
            lane.nameId.push_back(s.strings.intern(names[i]));
            lane.category.push_back(EventCategory::CpuOp);
            lane.depth.push_back(0);
            lane.sourceOffset.push_back(0);
        }
        s.lanes.push_back(std::move(lane));
        return s;
    };
    const std::vector<std::vector<std::string>> names = {
        {"a", "b", "c", "a"}, {"a", "b", "c", "c"}, {"c", "x", "a", "b"}, {"b", "b"}};
    EventStore merged;
    for (const auto& n : names)
        merged.merge(source(n));
    QCOMPARE(merged.lanes.size(), names.size());
    for (std::size_t l = 0; l < names.size(); ++l)
        for (std::size_t i = 0; i < names[l].size(); ++i)
            QCOMPARE(std::string(merged.strings.view(merged.lanes[l].nameId[i])), names[l][i]);
    QCOMPARE(merged.strings.size(), std::size_t(5)); // "", a, b, c, x
}

void TestEventStore::countsAndRange()
{
    EventStore s;
    s.lanes.push_back(makeLane(s.strings, {{5, 50, 0}, {6, 7, 1}}));
    s.lanes.back().rank = 0;
    s.lanes.push_back(makeLane(s.strings, {{1, 9, 0}}));
    s.lanes.back().rank = 1;
    CollectiveRecord c;
    c.rank = 1;
    s.collectives.push_back(c);
    QCOMPARE(s.eventCount(), std::int64_t(3));
    QCOMPARE(s.eventCountOfRank(0), std::int64_t(2));
    QCOMPARE(s.collectiveCountOfRank(1), std::int64_t(1));
    QCOMPARE(s.timeRangeNs(), (std::pair<std::int64_t, std::int64_t>{1, 50}));
    QCOMPARE(EventStore().timeRangeNs(), (std::pair<std::int64_t, std::int64_t>{0, 0}));
}

void TestEventStore::bytesPerEvent()
{
    // The per-event arrays of a lane: the style guide's budget is 64 bytes per event.
    const std::size_t perEvent =
        sizeof(std::int64_t) * 3 + sizeof(StringId) + sizeof(EventCategory) + sizeof(std::uint8_t);
    QVERIFY(perEvent <= 64);
    QCOMPARE(perEvent, std::size_t(30));
}

QTEST_GUILESS_MAIN(TestEventStore)
#include "tst_eventstore.moc"
