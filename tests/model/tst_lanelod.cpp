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
        // 8 events over 0..800 ns. A sparse row gets at least 64 buckets: base = bit_ceil(800 /
        // 64).
        std::vector<synthetic::Span> spans;
        for (int i = 0; i < 8; ++i)
            spans.push_back({i * 100, i * 100 + (i < 4 ? 90 : 10), i < 4 ? "long" : "short"});
        const Lane lane = synthetic::makeLane(strings, 0, LaneKind::GpuStream, 0, 7, spans);
        const LaneLod lod = buildLaneLod(lane);
        QCOMPARE(lod.rows.size(), std::size_t(1));
        const LodRow& row = lod.rows[0];
        QCOMPARE(row.originNs, qint64(0));
        QCOMPARE(row.baseNs, qint64(16));
        const auto& level0 = row.levels[0];
        QCOMPARE(level0.size(), std::size_t(45)); // span 0..710
        QCOMPARE(level0[0].busy, 1.0f);           // [0, 16) inside event 0
        QCOMPARE(level0[0].count, 1u);
        QCOMPARE(level0[5].busy, 10.0f / 16); // [80, 96): event 0 ends at 90
        QCOMPARE(level0[5].count, 0u);
        QCOMPARE(level0[6].busy, 12.0f / 16); // [96, 112): event 1 starts at 100
        QCOMPARE(level0[6].count, 1u);
        QCOMPARE(strings.view(level0[6].dominant), std::string_view("long"));
        QCOMPARE(strings.view(level0[43].dominant), std::string_view("short")); // [688, 704)
        QCOMPARE(row.levels.size(), std::size_t(7)); // 45, 23, 12, 6, 3, 2, 1
        const LodBucket& top = row.levels.back()[0];
        QCOMPARE(top.count, 8u);
        QCOMPARE(strings.view(top.dominant), std::string_view("long"));
        QCOMPARE(top.busy, 400.0f / 1024); // 4 * 90 + 4 * 10 ns busy over 64 buckets of 16 ns
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
        QCOMPARE(row.baseNs, qint64(64)); // bit_ceil(3007 / 64)
        QCOMPARE(row.levels[0].size(), std::size_t(47));
        QCOMPARE(row.levels[0][0].count, 1u);
        for (std::size_t b = 0; b < 46; ++b) {
            QCOMPARE(row.levels[0][b].busy, 1.0f);
            QCOMPARE(strings.view(row.levels[0][b].dominant), std::string_view("big"));
        }
        QCOMPARE(row.levels[0][20].count, 0u);
        QCOMPARE(row.levels[0][46].count, 7u);                   // [2944, 3008)
        QCOMPARE(row.levels[0][46].busy, float(56 + 7) / 64.0f); // the big one's tail + 7 tiny
        QCOMPARE(strings.view(row.levels[0][46].dominant), std::string_view("big"));
    }

    void denseRowsHoldAboutFourEventsPerBaseBucket()
    {
        StringTable strings;
        std::vector<synthetic::Span> spans;
        for (int i = 0; i < 4096; ++i)
            spans.push_back({i * 10, i * 10 + 5, "k"});
        const LaneLod lod =
            buildLaneLod(synthetic::makeLane(strings, 0, LaneKind::GpuStream, 0, 7, spans));
        QCOMPARE(lod.rows[0].baseNs, qint64(64));     // bit_ceil(40955 * 4 / 4096)
        QCOMPARE(lod.rows[0].levels[0][1].count, 6u); // starts 70, 80, ..., 120 lie in [64, 128)
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

    void instantEventsKeepTheirNameAtEveryLevel()
    {
        StringTable strings;
        // Long spans early, then two zero-duration markers alone in the second half.
        std::vector<synthetic::Span> spans;
        for (int i = 0; i < 50; ++i)
            spans.push_back({i * 1'000, i * 1'000 + 900, "kernel"});
        spans.push_back({70'000, 70'000, "instant"});
        spans.push_back({90'000, 90'000, "instant"});
        spans.push_back({100'000, 100'100, "tail"});
        const Lane lane = synthetic::makeLane(strings, 0, LaneKind::GpuStream, 0, 7, spans);
        const LaneLod lod = buildLaneLod(lane);
        const LodRow& row = lod.rows[0];
        const StringId instant = strings.find("instant");
        for (std::size_t level = 0; level + 1 < row.levels.size(); ++level) {
            const std::int64_t bw = row.bucketNs(int(level));
            const LodBucket& b = row.levels[level][std::size_t((70'000 - row.originNs) / bw)];
            QVERIFY2(b.count >= 1, qPrintable(QString::number(level)));
            // Where nothing busier shares the bucket, the instant names it.
            if (b.busy == 0.0f) QCOMPARE(b.dominant, instant);
        }
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
