// Find: searchEvents against a naive scan written here (every event's name lower-cased and
// searched, hits sorted by start on the clock), and EventSearch's worker delivering only the
// newest search.
#include "model/find/eventsearch.h"
#include "tests/support/syntheticsession.h"

#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <cctype>
#include <random>

using namespace rankscope;

namespace {

// Four ranks, two lanes each, names from a small vocabulary in mixed case, many equal starts
// across lanes (ties) and per-rank clock offsets that reorder the ranks.
SessionPtr makeSession()
{
    auto s = std::make_shared<TraceSession>();
    const std::vector<std::string_view> names{"ncclKernel_AllReduce", "volta_sgemm", "aten::mm",
                                              "ALLREDUCE_sum",        "aten::copy_", "Memcpy HtoD"};
    std::mt19937 rng(7);
    for (int rank = 0; rank < 4; ++rank)
        for (int l = 0; l < 2; ++l) {
            std::vector<synthetic::Span> spans;
            std::int64_t t = 1000;
            for (int i = 0; i < 500; ++i) {
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
    void cancelledReturnsNothing();
    void onlyTheNewestSearchIsDelivered();
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
    QCOMPARE(found->hits.size(), truth.size());
    QVERIFY(found->hits == truth);
    QCOMPARE(found->byLane.size(), session->events.lanes.size());
    for (std::size_t l = 0; l < found->byLane.size(); ++l) {
        std::vector<std::int64_t> lane;
        for (const EventHit& h : truth)
            if (h.lane == int(l)) lane.push_back(h.event);
        std::sort(lane.begin(), lane.end());
        QCOMPARE(found->byLane[l], lane);
    }
}

void TestEventSearch::cancelledReturnsNothing()
{
    const SessionPtr session = makeSession();
    QVERIFY(!searchEvents(session->events, QStringLiteral("aten"), {}, [] { return true; }));
    QVERIFY(!searchEvents(session->events, QString(), {}));
}

// Typing "a", "at", "aten" quickly: one search runs, for "aten"; a cancelled search delivers
// nothing.
void TestEventSearch::onlyTheNewestSearchIsDelivered()
{
    const SessionPtr session = makeSession();
    EventSearch search;
    QSignalSpy found(&search, &EventSearch::found);
    for (const char* typed : {"a", "at", "aten"})
        search.search(session, QString::fromLatin1(typed), {});
    QVERIFY(search.isBusy());
    QVERIFY(found.wait(10000));
    QCOMPARE(found.count(), 1);
    const auto result = found.takeFirst().at(0).value<EventSearchResult>();
    QCOMPARE(result.text, QStringLiteral("aten"));
    QVERIFY(result.hits == naiveFind(session->events, "aten", {}));
    QVERIFY(!search.isBusy());

    search.setDebounceMs(0);
    search.search(session, QStringLiteral("sgemm"), {});
    search.cancel();
    QVERIFY(!search.isBusy());
    QVERIFY(!found.wait(500));
}

QTEST_GUILESS_MAIN(TestEventSearch)
#include "tst_eventsearch.moc"
