#include "model/store/lanelod.h"
#include "tests/support/syntheticsession.h"

#include <QtTest>

using namespace rankscope;

class TestLaneLod : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bucketsHoldBusyCountAndDominant()
    {
        StringTable strings;
        // 8 events over 0..800 ns: base bucket = bit_ceil(800 * 4 / 8) = 512 ns.
        std::vector<synthetic::Span> spans;
        for (int i = 0; i < 8; ++i)
            spans.push_back({i * 100, i * 100 + (i < 4 ? 90 : 10), i < 4 ? "long" : "short"});
        const Lane lane = synthetic::makeLane(strings, 0, LaneKind::GpuStream, 0, 7, spans);
        const LaneLod lod = buildLaneLod(lane);
        QCOMPARE(lod.rows.size(), std::size_t(1));
        const LodRow& row = lod.rows[0];
        QCOMPARE(row.originNs, qint64(0));
        QCOMPARE(row.baseNs, qint64(512));
        QCOMPARE(row.levels.size(), std::size_t(2));
        const LodBucket& b0 = row.levels[0][0];
        const LodBucket& b1 = row.levels[0][1];
        QCOMPARE(b0.count, 6u); // starts at 0..500
        QCOMPARE(b1.count, 2u);
        QCOMPARE(b0.busy, float(4 * 90 + 10 + 10) / 512.0f);
        QCOMPARE(b1.busy, float(20) / 512.0f);
        QCOMPARE(strings.view(b0.dominant), std::string_view("long"));
        QCOMPARE(strings.view(b1.dominant), std::string_view("short"));
        const LodBucket& top = row.levels[1][0];
        QCOMPARE(top.count, 8u);
        QCOMPARE(top.dominant, b0.dominant);
        QCOMPARE(top.busy, (b0.busy + b1.busy) / 2);
    }

    void spanAcrossBucketsCountsOnceAndFillsEach()
    {
        StringTable strings;
        std::vector<synthetic::Span> spans{{0, 3000, "big"}};
        for (int i = 0; i < 7; ++i)
            spans.push_back({3000 + i, 3001 + i, "tiny"});
        const Lane lane = synthetic::makeLane(strings, 0, LaneKind::GpuStream, 0, 7, spans);
        const LaneLod lod = buildLaneLod(lane);
        const LodRow& row = lod.rows.at(0);
        QCOMPARE(row.baseNs, qint64(2048)); // bit_ceil(3007 * 4 / 8)
        QCOMPARE(row.levels[0].size(), std::size_t(2));
        QCOMPARE(row.levels[0][0].busy, 1.0f);
        QCOMPARE(row.levels[0][0].count, 1u);
        QCOMPARE(row.levels[0][1].count, 7u);
        QCOMPARE(row.levels[0][1].busy, float(952 + 7) / 2048.0f);
        QCOMPARE(strings.view(row.levels[0][1].dominant), std::string_view("big"));
    }

    void levelsShrinkToOneBucketAndLevelForPicksTheCoarsestThatFits()
    {
        auto session = synthetic::makeSession({1, 1, 1, 5000, 10'000'000, 0, 0, 3});
        const LaneLod& lod = session->laneLods.at(0);
        const LodRow& row = lod.rows.at(0);
        QCOMPARE(row.levels.back().size(), std::size_t(1));
        for (std::size_t k = 1; k < row.levels.size(); ++k)
            QCOMPARE(row.levels[k].size(), (row.levels[k - 1].size() + 1) / 2);
        std::uint64_t count = 0;
        for (const LodBucket& b : row.levels[0]) {
            count += b.count;
            QVERIFY(b.busy >= 0 && b.busy <= 1);
        }
        QCOMPARE(count, std::uint64_t(session->events.lanes[0].size()));
        QCOMPARE(row.levelFor(double(row.baseNs) / 2), 0);
        QCOMPARE(row.levelFor(double(row.baseNs) * 4), 2);
        QCOMPARE(row.levelFor(double(row.baseNs) * 5), 2);
        QCOMPARE(row.levelFor(1e18), int(row.levels.size()) - 1);
        // The CPU lane nests three deep: one pyramid per depth row.
        QCOMPARE(session->laneLods.at(1).rows.size(), std::size_t(3));
        QVERIFY(memoryBytes(session->laneLods) > 0);
    }

    void emptyLaneHasNoRows()
    {
        Lane lane;
        QVERIFY(buildLaneLod(lane).rows.empty());
        LodRow row;
        QCOMPARE(row.levelFor(100), -1);
    }
};

QTEST_GUILESS_MAIN(TestLaneLod)
#include "tst_lanelod.moc"
