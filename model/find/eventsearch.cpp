#include "model/find/eventsearch.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace rankscope {

std::optional<EventSearchResult> searchEvents(const EventStore& store, const QString& text,
                                              const TimelineClock& clock, const CancelFn& cancelled)
{
    if (text.isEmpty()) return std::nullopt;
    const auto stop = [&] { return cancelled && cancelled(); };
    // Names are interned: test each name once, then each event is a table lookup.
    std::vector<char> match(store.strings.size(), 0);
    for (std::size_t id = 1; id < store.strings.size(); ++id) {
        const std::string_view name = store.strings.view(StringId(id));
        match[id] = QString::fromUtf8(name.data(), qsizetype(name.size()))
                        .contains(text, Qt::CaseInsensitive);
        if (id % 65536 == 0 && stop()) return std::nullopt;
    }
    EventSearchResult result;
    result.text = text;
    result.byLane.resize(store.lanes.size());
    std::size_t total = 0;
    for (std::size_t l = 0; l < store.lanes.size(); ++l) {
        const Lane& lane = store.lanes[l];
        std::vector<std::int64_t>& hits = result.byLane[l];
        for (std::size_t i = 0; i < lane.size(); ++i) {
            if (match[std::size_t(lane.nameId[i])]) hits.push_back(std::int64_t(i));
            if (i % 65536 == 65535 && stop()) return std::nullopt;
        }
        total += hits.size();
        if (stop()) return std::nullopt;
    }
    // Ordered by (start on the clock, lane, event): a stable sort by start of the hits in lane
    // order, since a lane's events are sorted by start.
    struct Keyed {
        std::int64_t startNs;
        EventHit hit;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(total);
    for (std::size_t l = 0; l < store.lanes.size(); ++l) {
        const Lane& lane = store.lanes[l];
        const std::int64_t offset = clock.toDisplay(lane.rank, 0);
        for (std::int64_t i : result.byLane[l])
            keyed.push_back({lane.startNs[std::size_t(i)] + offset, {int(l), i}});
    }
    if (stop()) return std::nullopt;
    std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
        if (a.startNs != b.startNs) return a.startNs < b.startNs;
        return a.hit.lane != b.hit.lane ? a.hit.lane < b.hit.lane : a.hit.event < b.hit.event;
    });
    result.hits.reserve(total);
    for (const Keyed& k : keyed)
        result.hits.push_back(k.hit);
    return result;
}

EventSearch::EventSearch(QObject* parent)
    : QObject(parent), m_generation(std::make_shared<std::atomic<std::uint64_t>>(0))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultDebounceMs);
    connect(&m_timer, &QTimer::timeout, this, &EventSearch::start);
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, [this] {
        const Outcome outcome = m_watcher.result();
        // A search superseded or cancelled since it started delivers nothing.
        if (outcome.generation != m_generation->load()) return;
        m_busy = false;
        if (outcome.result) Q_EMIT found(*outcome.result);
    });
}

EventSearch::~EventSearch()
{
    cancel();
}

void EventSearch::setDebounceMs(int ms)
{
    m_timer.setInterval(ms);
}

void EventSearch::search(SessionPtr session, const QString& text, const TimelineClock& clock)
{
    cancel();
    m_session = std::move(session);
    m_text = text;
    m_clock = clock;
    if (m_session && !m_text.isEmpty()) m_timer.start();
}

void EventSearch::cancel()
{
    m_timer.stop();
    ++*m_generation;
    m_busy = false;
}

void EventSearch::start()
{
    const std::uint64_t mine = ++*m_generation;
    m_busy = true;
    m_watcher.setFuture(QtConcurrent::run(
        [session = m_session, text = m_text, clock = m_clock, generation = m_generation, mine] {
            return Outcome{mine, searchEvents(session->events, text, clock,
                                              [&] { return generation->load() != mine; })};
        }));
}

} // namespace rankscope
