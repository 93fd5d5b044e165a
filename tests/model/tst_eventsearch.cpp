// Find: searchEvents and its batches against a naive scan written here (every event's name
// lower-cased and searched, hits sorted by start on the clock), cancelling between batches, and
// EventSearch's worker delivering the newest search batch by batch.
#include "model/find/eventsearch.h"
#include "tests/support/syntheticsession.h"

#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <cctype>
#include <memory>
#include <numeric>
#include <random>

using namespace rankscope;

namespace {

// Four ranks, two lanes each, names from a small vocabulary in mixed case, many equal starts
// across lanes (ties) and per-rank clock offsets that reorder the ranks.
SessionPtr makeSession(int eventsPerLane = 500)
{
    auto s = std::make_shared<TraceSession>();
    const std::vector<std::string_view> names{"ncclKernel_AllReduce", "volta_sgemm", "aten::mm",
                                              "ALLREDUCE_sum",        "aten::copy_", "Memcpy HtoD"};
    std::mt19937 rng(7);
    for (int rank = 0; rank < 4; ++rank)
        for (int l = 0; l < 2; ++l) {
            std::vector<synthetic::Span> spans;
            std::int64_t t = 1000;
            for (int i = 0; i < eventsPerLane; ++i) {
                const std::int64_t len = 10 + std::int64_t(rng() % 40);
                spans.push_back({t, t + len, names[rng() % names.size()]});
                t += (rng() % 3 == 0) ? 50 : len + 5; // starts repeat across lanes
            }
            s->events.lanes.push_back(
                synthetic::makeLane(s->events.strings, rank, LaneKind::GpuStream, rank, l, spans));
        }
    return synthetic::finish(s);
}

TimelineClock skewedClock()
{
    TimelineClock clock;
    clock.offsetNs = {{0, 700}, {1, -300}, {2, 0}, {3, 1234}};
    return clock;
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

// The naive scan: every event, in lane then event order, stably sorted by start on `clock`.
std::vector<EventHit> naiveFind(const EventStore& store, const std::string& text,
                                const TimelineClock& clock)
{
    std::vector<EventHit> hits;
    for (std::size_t l = 0; l < store.lanes.size(); ++l) {
        const Lane& lane = store.lanes[l];
        for (std::size_t i = 0; i < lane.size(); ++i)
            if (lower(store.strings.view(lane.nameId[i])).find(lower(text)) != std::string::npos)
                hits.push_back({int(l), std::int64_t(i)});
    }
    const auto startOf = [&](const EventHit& h) {
        const Lane& lane = store.lanes[std::size_t(h.lane)];
        return clock.toDisplay(lane.rank, lane.startNs[std::size_t(h.event)]);
    };
    std::stable_sort(hits.begin(), hits.end(),
                     [&](const EventHit& a, const EventHit& b) { return startOf(a) < startOf(b); });
    return hits;
}

} // namespace

class TestEventSearch : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void equalsANaiveScan_data();
    void equalsANaiveScan();
    void batchesConcatenatedEqualANaiveScan_data();
    void batchesConcatenatedEqualANaiveScan();
    void firstBatchIsSmallWhenHitsStartLate();
    void onlyTheGivenLanesAreSearched();
    void cancelledReturnsNothing();
    void cancelBetweenBatchesStops();
    void onlyTheNewestSearchIsDelivered();
    void theWorkerDeliversBatchByBatch();
};

void TestEventSearch::equalsANaiveScan_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("skewed");
    QTest::addRow("allreduce, any case") << QStringLiteral("allreduce") << false;
    QTest::addRow("allreduce, skewed clocks") << QStringLiteral("AllReduce") << true;
    QTest::addRow("aten::") << QStringLiteral("aten::") << true;
    QTest::addRow("one letter") << QStringLiteral("m") << true;
    QTest::addRow("nothing") << QStringLiteral("no such kernel") << false;
}

void TestEventSearch::equalsANaiveScan()
{
    QFETCH(QString, text);
    QFETCH(bool, skewed);
    const SessionPtr session = makeSession();
    const TimelineClock clock = skewed ? skewedClock() : TimelineClock{};
    const std::optional<EventSearchResult> found = searchEvents(session->events, text, clock);
    QVERIFY(found);
    const std::vector<EventHit> truth = naiveFind(session->events, text.toStdString(), clock);
    QCOMPARE(found->hitCount(), truth.size());
    QVERIFY(found->complete);
    QVERIFY(found->allHits() == truth);
    for (std::size_t i = 0; i < truth.size(); i += 7)
        QCOMPARE(found->hit(i), truth[i]);
    for (std::size_t l = 0; l < session->events.lanes.size(); ++l) {
        std::vector<std::int64_t> lane;
        for (const EventHit& h : truth)
            if (h.lane == int(l)) lane.push_back(h.event);
        std::sort(lane.begin(), lane.end());
        QCOMPARE(found->laneHits(int(l)), lane);
        // A window of event indices: the hits inside it.
        const std::int64_t from = 100, to = 300;
        std::vector<std::int64_t> inside;
        std::copy_if(lane.begin(), lane.end(), std::back_inserter(inside),
                     [&](std::int64_t e) { return e >= from && e < to; });
        QCOMPARE(found->laneHits(int(l), from, to), inside);
    }
}

void TestEventSearch::batchesConcatenatedEqualANaiveScan_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("firstBatchEvents");
    QTest::addColumn<bool>("manyBatches"); // the test session must give more than one batch
    QTest::addRow("1 event first") << QStringLiteral("allreduce") << qint64(1) << true;
    QTest::addRow("16 events first") << QStringLiteral("aten::") << qint64(16) << true;
    QTest::addRow("rare name, 16 first") << QStringLiteral("htod") << qint64(16) << true;
    QTest::addRow("one letter, 100 first") << QStringLiteral("m") << qint64(100) << true;
    QTest::addRow("the default") << QStringLiteral("sgemm") << qint64(kFirstBatchEvents) << false;
    QTest::addRow("nothing") << QStringLiteral("no such kernel") << qint64(16) << false;
}

// The batches, concatenated in delivery order, are the naive scan's hits in its order; none but
// the last is empty, so the first batch holds hits whenever there are any; each batch's lanes
// hold exactly its hits.
void TestEventSearch::batchesConcatenatedEqualANaiveScan()
{
    QFETCH(QString, text);
    QFETCH(qint64, firstBatchEvents);
    QFETCH(bool, manyBatches);
    const SessionPtr session = makeSession();
    const TimelineClock clock = skewedClock();
    const std::vector<EventHit> truth = naiveFind(session->events, text.toStdString(), clock);
    std::vector<EventHit> concatenated;
    EventSearchResult appended;
    int batches = 0;
    bool sawLast = false;
    const bool done = searchEventsInBatches(
        session->events, text, clock,
        [&](EventSearchBatch&& batch, bool last) {
            QVERIFY(!sawLast);
            sawLast = last;
            ++batches;
            if (!last) QVERIFY(!batch.hits.empty());
            std::vector<EventHit> fromLanes;
            int previousLane = -1;
            for (const auto& [lane, events] : batch.byLane) {
                QVERIFY(lane > previousLane);
                previousLane = lane;
                QVERIFY(!events.empty());
                QVERIFY(std::is_sorted(events.begin(), events.end()));
                for (std::int64_t e : events)
                    fromLanes.push_back({lane, e});
            }
            std::vector<EventHit> sortedHits = batch.hits;
            const auto byLaneEvent = [](const EventHit& a, const EventHit& b) {
                return std::pair(a.lane, a.event) < std::pair(b.lane, b.event);
            };
            std::sort(sortedHits.begin(), sortedHits.end(), byLaneEvent);
            QVERIFY(sortedHits == fromLanes);
            concatenated.insert(concatenated.end(), batch.hits.begin(), batch.hits.end());
            appended.append(std::move(batch));
        },
        {}, firstBatchEvents);
    QVERIFY(done);
    QVERIFY(sawLast);
    QCOMPARE(concatenated.size(), truth.size());
    QVERIFY(concatenated == truth);
    if (manyBatches) QVERIFY2(batches > 2, qPrintable(QString::number(batches)));
    // The appended batches: hit by hit, and per lane over windows of event indices.
    QCOMPARE(appended.hitCount(), truth.size());
    for (std::size_t i = 0; i < truth.size(); ++i)
        QCOMPARE(appended.hit(i), truth[i]);
    for (int l = 0; l < int(session->events.lanes.size()); ++l)
        for (const auto& [from, to] :
             {std::pair<std::int64_t, std::int64_t>{0, INT64_MAX}, {0, 1}, {37, 211}, {250, 499}}) {
            std::vector<std::int64_t> inside;
            for (const EventHit& h : truth)
                if (h.lane == l && h.event >= from && h.event < to) inside.push_back(h.event);
            std::sort(inside.begin(), inside.end());
            QCOMPARE(appended.laneHits(l, from, to), inside);
        }
    if (truth.empty()) QCOMPARE(batches, 1);
}

// One lane of 150,000 "volta_sgemm" events, then 50,000 "ncclKernel" ones. Searched for "nccl"
// with first windows of 1,000 events, the windows before the first hit do not grow: the first
// batch holds at most about 1,000 hits (not the tens of thousands of a window grown while empty),
// and the batches still add up to every hit.
void TestEventSearch::firstBatchIsSmallWhenHitsStartLate()
{
    auto s = std::make_shared<TraceSession>();
    std::vector<synthetic::Span> spans;
    constexpr int kCompute = 150'000, kComm = 50'000;
    for (int i = 0; i < kCompute + kComm; ++i)
        spans.push_back({std::int64_t(i) * 10, std::int64_t(i) * 10 + 5,
                         i < kCompute ? "volta_sgemm" : "ncclKernel"});
    s->events.lanes.push_back(
        synthetic::makeLane(s->events.strings, 0, LaneKind::GpuStream, 0, 7, spans));
    const SessionPtr session = synthetic::finish(s);
    std::vector<std::size_t> sizes;
    QVERIFY(searchEventsInBatches(
        session->events, QStringLiteral("nccl"), {},
        [&](EventSearchBatch&& batch, bool) { sizes.push_back(batch.hits.size()); }, {}, 1000));
    QVERIFY(!sizes.empty());
    QVERIFY2(sizes.front() > 0 && sizes.front() <= 1100,
             qPrintable(QString::number(sizes.front())));
    QCOMPARE(std::accumulate(sizes.begin(), sizes.end(), std::size_t(0)), std::size_t(kComm));
}

// Only the flagged lanes are searched: the naive scan's hits in those lanes, in its order.
void TestEventSearch::onlyTheGivenLanesAreSearched()
{
    const SessionPtr session = makeSession();
    const TimelineClock clock = skewedClock();
    std::vector<char> lanes(session->events.lanes.size(), 0);
    for (std::size_t l = 0; l < lanes.size(); l += 3)
        lanes[l] = 1;
    std::vector<EventHit> truth;
    for (const EventHit& h : naiveFind(session->events, "nccl", clock))
        if (lanes[std::size_t(h.lane)]) truth.push_back(h);
    QVERIFY(!truth.empty());
    std::vector<EventHit> found;
    QVERIFY(searchEventsInBatches(
        session->events, QStringLiteral("NCCL"), clock,
        [&](EventSearchBatch&& batch, bool) {
            found.insert(found.end(), batch.hits.begin(), batch.hits.end());
        },
        {}, 64, lanes));
    QVERIFY(found == truth);
}

void TestEventSearch::cancelledReturnsNothing()
{
    const SessionPtr session = makeSession();
    QVERIFY(!searchEvents(session->events, QStringLiteral("aten"), {}, [] { return true; }));
    QVERIFY(!searchEvents(session->events, QString(), {}));
}

// Cancelled after the first batch: false, and no batch after it.
void TestEventSearch::cancelBetweenBatchesStops()
{
    const SessionPtr session = makeSession();
    int batches = 0;
    const bool done = searchEventsInBatches(
        session->events, QStringLiteral("a"), {},
        [&](EventSearchBatch&& batch, bool last) {
            ++batches;
            QVERIFY(!batch.hits.empty());
            QVERIFY(!last);
        },
        [&] { return batches > 0; }, 16);
    QVERIFY(!done);
    QCOMPARE(batches, 1);
}

// Typing "a", "at", "aten" quickly: one search runs, for "aten"; a cancelled search delivers
// nothing.
void TestEventSearch::onlyTheNewestSearchIsDelivered()
{
    const SessionPtr session = makeSession();
    EventSearch search;
    QSignalSpy found(&search, &EventSearch::hitsChanged);
    for (const char* typed : {"a", "at", "aten"})
        search.search(session, QString::fromLatin1(typed), {});
    QVERIFY(search.isBusy());
    QVERIFY(found.wait(10000));
    QCOMPARE(found.count(), 1);
    QCOMPARE(found.takeFirst().at(0).toBool(), true); // a new search's hits
    QCOMPARE(search.result().text, QStringLiteral("aten"));
    QVERIFY(search.result().complete);
    QVERIFY(search.result().allHits() == naiveFind(session->events, "aten", {}));
    QVERIFY(!search.isBusy());

    search.setDebounceMs(0);
    search.search(session, QStringLiteral("sgemm"), {});
    search.cancel();
    QVERIFY(!search.isBusy());
    QVERIFY(!found.wait(500));
}

// A session large enough for several windows (8 lanes x 60,000 events): the hits arrive in more
// than one batch, the first replacing the previous search's, the later ones appended; the count
// grows; concatenated, they are the naive scan; a new search then cancels this one.
void TestEventSearch::theWorkerDeliversBatchByBatch()
{
    const SessionPtr session = makeSession(60'000);
    QVERIFY(session->events.eventCount() > 4 * kFirstBatchEvents);
    const TimelineClock clock = skewedClock();
    EventSearch search;
    search.setDebounceMs(0);
    std::vector<std::size_t> counts;
    std::vector<bool> restarts, busy;
    connect(&search, &EventSearch::hitsChanged, this, [&](bool restarted) {
        counts.push_back(search.result().hitCount());
        restarts.push_back(restarted);
        busy.push_back(search.isBusy());
    });
    search.search(session, QStringLiteral("sgemm"), clock);
    QTRY_VERIFY_WITH_TIMEOUT(search.result().complete, 20000);
    QVERIFY2(counts.size() > 1, qPrintable(QString::number(counts.size())));
    QVERIFY(counts.front() > 0);
    QVERIFY(restarts.front());
    for (std::size_t i = 1; i < counts.size(); ++i) {
        QVERIFY(!restarts[i]);
        QVERIFY(counts[i] >= counts[i - 1]);
        QCOMPARE(bool(busy[i - 1]), true); // more was to come
    }
    QVERIFY(!busy.back());
    const std::vector<EventHit> truth = naiveFind(session->events, "sgemm", clock);
    QCOMPARE(search.result().hitCount(), truth.size());
    QVERIFY(search.result().allHits() == truth);

    // Typing again while a search runs cancels it: nothing of it arrives after the new one's
    // first batch, and the new one's hits are complete.
    std::vector<QString> texts;
    std::vector<bool> busyAtBatch; // read when each batch arrives, not when QTRY next polls
    connect(&search, &EventSearch::hitsChanged, this, [&] {
        texts.push_back(search.result().text);
        busyAtBatch.push_back(search.isBusy());
    });
    restarts.clear();
    search.search(session, QStringLiteral("aten::"), clock);
    QTRY_VERIFY_WITH_TIMEOUT(!texts.empty(), 20000);
    QVERIFY(busyAtBatch.front()); // "aten::" had more batches to come after its first
    search.search(session, QStringLiteral("memcpy"), clock);
    QVERIFY(search.isBusy());
    // result() holds the older search until the new one's first batch replaces it.
    QTRY_VERIFY_WITH_TIMEOUT(
        search.result().text == QStringLiteral("memcpy") && search.result().complete, 20000);
    const auto firstMemcpy = std::find(texts.begin(), texts.end(), QStringLiteral("memcpy"));
    QVERIFY(firstMemcpy != texts.end());
    QVERIFY(std::all_of(firstMemcpy, texts.end(),
                        [](const QString& t) { return t == QStringLiteral("memcpy"); }));
    QCOMPARE(std::count(restarts.begin(), restarts.end(), true), 2);
    QVERIFY(search.result().allHits() == naiveFind(session->events, "memcpy", clock));

    // Destroyed while its worker runs: the worker stops and posts nothing to the dead object.
    {
        auto running = std::make_unique<EventSearch>();
        running->setDebounceMs(0);
        bool first = false, busyAtFirst = false;
        connect(running.get(), &EventSearch::hitsChanged, this, [&] {
            if (!first) busyAtFirst = running->isBusy();
            first = true;
        });
        running->search(session, QStringLiteral("a"), clock);
        QTRY_VERIFY_WITH_TIMEOUT(first, 20000);
        QVERIFY(busyAtFirst); // the worker still had batches to go when the first arrived
        running.reset();
        QTest::qWait(200); // any batch still queued would be delivered here
    }
}

QTEST_GUILESS_MAIN(TestEventSearch)
#include "tst_eventsearch.moc"
