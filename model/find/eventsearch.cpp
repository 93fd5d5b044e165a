#include "model/find/eventsearch.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <limits>

namespace rankscope {

EventHit EventSearchResult::hit(std::size_t i) const
{
    const auto b = std::size_t(std::upper_bound(m_ends.begin(), m_ends.end(), i) - m_ends.begin());
    return m_batches[b].hits[i - (b == 0 ? 0 : m_ends[b - 1])];
}

std::vector<EventHit> EventSearchResult::allHits() const
{
    std::vector<EventHit> all;
    all.reserve(hitCount());
    for (const EventSearchBatch& batch : m_batches)
        all.insert(all.end(), batch.hits.begin(), batch.hits.end());
    return all;
}

std::vector<std::int64_t> EventSearchResult::laneHits(int lane, std::int64_t first,
                                                      std::int64_t last) const
{
    // Batches follow each other in time, so a lane's hits ascend from one batch to the next.
    std::vector<std::int64_t> out;
    for (const EventSearchBatch& batch : m_batches) {
        const auto it = std::lower_bound(batch.byLane.begin(), batch.byLane.end(), lane,
                                         [](const auto& entry, int l) { return entry.first < l; });
        if (it == batch.byLane.end() || it->first != lane) continue;
        const std::vector<std::int64_t>& events = it->second;
        if (events.front() >= last) break;
        if (events.back() < first) continue;
        for (auto e = std::lower_bound(events.begin(), events.end(), first);
             e != events.end() && *e < last; ++e)
            out.push_back(*e);
    }
    return out;
}

void EventSearchResult::append(EventSearchBatch&& batch)
{
    if (batch.hits.empty()) return;
    m_ends.push_back(hitCount() + batch.hits.size());
    m_batches.push_back(std::move(batch));
}

namespace {

// The ends of the search's time windows on the clock, one at a time: a window ends before the
// bound next() returns (and starts at the previous one); after the last bound, the window holding
// the rest. Each bound is the earliest time before which about the number of events asked for
// (at least that many) start, found by bisecting the time and counting by binary search in every
// lane searched: exact whatever the spread in time and however many lanes (a sample of starts
// every k-th event of each lane cannot cut a window finer than k events of every lane, a million
// events at 1,024 ranks).
class WindowBounds {
public:
    WindowBounds(const EventStore& store, const std::vector<std::int64_t>& offsets,
                 const std::vector<char>& searched)
        : m_store(store), m_offsets(offsets), m_searched(searched)
    {
        for (std::size_t l = 0; l < store.lanes.size(); ++l) {
            const Lane& lane = store.lanes[l];
            if (!searched[l] || lane.size() == 0) continue;
            m_total += std::int64_t(lane.size());
            m_first = std::min(m_first, lane.startNs.front() + offsets[l]);
            m_latest = std::max(m_latest, lane.startNs.back() + offsets[l]);
        }
    }
    // The end of the next window, of about `events` events; nullopt for the last window.
    std::optional<std::int64_t> next(std::int64_t events)
    {
        const std::int64_t target = m_before + std::max<std::int64_t>(1, events);
        if (target >= m_total || m_last > m_latest) return std::nullopt;
        // The earliest t in (last, latest + 1] before which `target` events start.
        std::int64_t lo = std::max(m_first, m_last + 1), hi = m_latest + 1;
        while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            if (startingBefore(mid) >= target)
                hi = mid;
            else
                lo = mid + 1;
        }
        m_before = startingBefore(lo);
        m_last = lo;
        return lo;
    }

private:
    std::int64_t startingBefore(std::int64_t t) const
    {
        std::int64_t n = 0;
        for (std::size_t l = 0; l < m_store.lanes.size(); ++l) {
            if (!m_searched[l]) continue;
            const std::vector<std::int64_t>& starts = m_store.lanes[l].startNs;
            n += std::lower_bound(starts.begin(), starts.end(), t - m_offsets[l]) - starts.begin();
        }
        return n;
    }

    const EventStore& m_store;
    const std::vector<std::int64_t>& m_offsets;
    const std::vector<char>& m_searched;
    std::int64_t m_total = 0;
    std::int64_t m_first = std::numeric_limits<std::int64_t>::max();
    std::int64_t m_latest = std::numeric_limits<std::int64_t>::min();
    std::int64_t m_before = 0;                                      // events starting before m_last
    std::int64_t m_last = std::numeric_limits<std::int64_t>::min(); // none yet
};

} // namespace

bool searchEventsInBatches(const EventStore& store, const QString& text, const TimelineClock& clock,
                           const DeliverBatchFn& deliver, const CancelFn& cancelled,
                           std::int64_t firstBatchEvents, const std::vector<char>& lanes)
{
    const auto stop = [&] { return cancelled && cancelled(); };
    if (text.isEmpty() || stop()) return false;
    // Names are interned: test each name once, then each event is a table lookup.
    std::vector<char> match(store.strings.size(), 0);
    bool anyName = false;
    for (std::size_t id = 1; id < store.strings.size(); ++id) {
        const std::string_view name = store.strings.view(StringId(id));
        match[id] = QString::fromUtf8(name.data(), qsizetype(name.size()))
                        .contains(text, Qt::CaseInsensitive);
        anyName = anyName || match[id];
        if (id % 65536 == 0 && stop()) return false;
    }
    if (!anyName) {
        deliver({}, true);
        return true;
    }
    std::vector<char> searched(store.lanes.size(), 1);
    for (std::size_t l = 0; l < std::min(lanes.size(), searched.size()); ++l)
        searched[l] = lanes[l] != 0;
    std::vector<std::int64_t> offsets(store.lanes.size());
    for (std::size_t l = 0; l < store.lanes.size(); ++l)
        offsets[l] = clock.toDisplay(store.lanes[l].rank, 0);
    WindowBounds windows(store, offsets, searched);
    if (stop()) return false;

    struct Keyed {
        std::int64_t startNs;
        EventHit hit;
    };
    std::vector<Keyed> keyed;
    std::vector<std::size_t> cursor(store.lanes.size(), 0); // first event of the next window
    std::int64_t scanned = 0;
    // The window grows only once it has delivered: the windows before the first hit (e.g. the
    // compute before the first collective) keep the first size, so the first batch stays small.
    std::int64_t budget = std::max<std::int64_t>(1, firstBatchEvents);
    const std::int64_t maxBudget = std::max(kMaxBatchEvents, budget);
    for (bool last = false; !last;) {
        const std::optional<std::int64_t> bound = windows.next(budget);
        last = !bound;
        EventSearchBatch batch;
        keyed.clear();
        for (std::size_t l = 0; l < store.lanes.size(); ++l) {
            if (!searched[l]) continue;
            const Lane& lane = store.lanes[l];
            std::size_t i = cursor[l];
            const std::size_t end =
                last ? lane.size()
                     : std::size_t(std::lower_bound(lane.startNs.begin() + std::ptrdiff_t(i),
                                                    lane.startNs.end(), *bound - offsets[l]) -
                                   lane.startNs.begin());
            cursor[l] = end;
            std::vector<std::int64_t> hits;
            for (; i < end; ++i) {
                if (match[std::size_t(lane.nameId[i])]) {
                    hits.push_back(std::int64_t(i));
                    keyed.push_back({lane.startNs[i] + offsets[l], {int(l), std::int64_t(i)}});
                }
                if (++scanned % 65536 == 0 && stop()) return false;
            }
            if (!hits.empty()) batch.byLane.emplace_back(int(l), std::move(hits));
        }
        if (keyed.empty() && !last) continue;
        // Ordered by (start on the clock, lane, event).
        std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
            if (a.startNs != b.startNs) return a.startNs < b.startNs;
            return a.hit.lane != b.hit.lane ? a.hit.lane < b.hit.lane : a.hit.event < b.hit.event;
        });
        batch.hits.reserve(keyed.size());
        for (const Keyed& k : keyed)
            batch.hits.push_back(k.hit);
        if (stop()) return false;
        deliver(std::move(batch), last);
        budget = std::min(budget * 2, maxBudget);
    }
    return true;
}

std::optional<EventSearchResult> searchEvents(const EventStore& store, const QString& text,
                                              const TimelineClock& clock, const CancelFn& cancelled)
{
    EventSearchResult result;
    result.text = text;
    const bool done = searchEventsInBatches(
        store, text, clock,
        [&](EventSearchBatch&& batch, bool last) {
            result.append(std::move(batch));
            result.complete = last;
        },
        cancelled);
    if (!done) return std::nullopt;
    return result;
}

EventSearch::EventSearch(QObject* parent)
    : QObject(parent), m_generation(std::make_shared<std::atomic<std::uint64_t>>(0))
{
    m_timer.setSingleShot(true);
    m_timer.setInterval(kDefaultDebounceMs);
    connect(&m_timer, &QTimer::timeout, this, &EventSearch::start);
}

EventSearch::~EventSearch()
{
    cancel();
    // A worker posts its batches to this object: none may be left running once it is gone.
    for (QFuture<void>& worker : m_workers)
        worker.waitForFinished();
}

void EventSearch::setDebounceMs(int ms)
{
    m_timer.setInterval(ms);
}

void EventSearch::search(SessionPtr session, const QString& text, const TimelineClock& clock,
                         std::vector<char> lanes)
{
    cancel();
    m_session = std::move(session);
    m_text = text;
    m_clock = clock;
    m_lanes = std::move(lanes);
    if (m_session && !m_text.isEmpty()) m_timer.start();
}

void EventSearch::cancel()
{
    m_timer.stop();
    ++*m_generation;
    m_busy = false;
}

void EventSearch::clear()
{
    cancel();
    m_result = {};
    m_resultGeneration = 0;
}

void EventSearch::start()
{
    const std::uint64_t mine = ++*m_generation;
    m_busy = true;
    std::erase_if(m_workers, [](const QFuture<void>& w) { return w.isFinished(); });
    m_workers.push_back(
        QtConcurrent::run([this, session = m_session, text = m_text, clock = m_clock,
                           lanes = m_lanes, generation = m_generation, mine] {
            const auto stale = [&] { return generation->load() != mine; };
            searchEventsInBatches(
                session->events, text, clock,
                [&](EventSearchBatch&& batch, bool last) {
                    if (stale()) return;
                    auto moved = std::make_shared<EventSearchBatch>(std::move(batch));
                    QMetaObject::invokeMethod(
                        this, [this, mine, moved, last] { receive(mine, std::move(*moved), last); },
                        Qt::QueuedConnection);
                },
                stale, kFirstBatchEvents, lanes);
        }));
}

void EventSearch::receive(std::uint64_t generation, EventSearchBatch&& batch, bool last)
{
    // A search superseded or cancelled since the batch was posted delivers nothing more.
    if (generation != m_generation->load()) return;
    const bool restarted = generation != m_resultGeneration;
    if (restarted) {
        m_result = {};
        m_result.text = m_text;
        m_resultGeneration = generation;
    }
    m_result.append(std::move(batch));
    if (last) {
        m_result.complete = true;
        m_busy = false;
    }
    Q_EMIT hitsChanged(restarted);
}

} // namespace rankscope
