#pragma once

#include "model/tracesession.h"
#include "model/zoomstate.h"

#include <QFuture>
#include <QObject>
#include <QTimer>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace rankscope {

// One event of the store: lane index and event index inside the lane.
struct EventHit {
    int lane = -1;
    std::int64_t event = -1;
    bool operator==(const EventHit&) const = default;
};

// The hits of one time window of a search: every matching event whose start on the clock lies
// in the window. Windows follow each other in time, so batches concatenated in delivery order are
// the whole answer in order.
struct EventSearchBatch {
    // By start on the clock searched with; equal starts by lane, then event.
    std::vector<EventHit> hits;
    // The same hits per lane, for the lanes that have any: (lane, ascending event indices).
    std::vector<std::pair<int, std::vector<std::int64_t>>> byLane;
};

// The events whose name holds a text, as far as the search has got. Batches are kept as they
// arrive: appending one moves it in, so the thread that receives them never copies hits.
struct EventSearchResult {
    QString text;
    bool complete = false; // every event was searched

    std::size_t hitCount() const { return m_ends.empty() ? 0 : m_ends.back(); }
    // The i-th hit in time order (i < hitCount()).
    EventHit hit(std::size_t i) const;
    std::vector<EventHit> allHits() const;
    // The hits in `lane` whose event index is in [first, last), ascending.
    std::vector<std::int64_t> laneHits(int lane, std::int64_t first = 0,
                                       std::int64_t last = INT64_MAX) const;
    void append(EventSearchBatch&& batch);

private:
    std::vector<EventSearchBatch> m_batches; // those with hits
    std::vector<std::size_t> m_ends;         // hit count up to and including batch i
};

// The first window of a search holds about this many events, as does each next one until a window
// has hits; after each batch delivered, the windows hold twice as many, up to kMaxBatchEvents. So
// the first hits come after a short scan (however late in the trace they are) and later batches
// stay small enough to hand over without stalling the receiver.
constexpr std::int64_t kFirstBatchEvents = 64 * 1024;
constexpr std::int64_t kMaxBatchEvents = 1024 * 1024;

// Every event of `store` whose name contains `text` (case-insensitive), handed to `deliver` in
// batches by time windows on `clock`, earliest window first; windows without hits are skipped.
// `last` is true for the final call, whose batch is empty when the last window holds no hit
// (so when no event matches, `deliver` is called once, with an empty batch). Returns false, with no
// further call, when `cancelled` returns true (polled every 64 Ki events and names) or for an empty
// text. `firstBatchEvents` sets the first window's size (tests use small ones to get many batches).
// `lanes`, when not empty, holds a flag per lane of the store: only the flagged lanes are searched
// (the lanes of the job the timeline shows).
using DeliverBatchFn = std::function<void(EventSearchBatch&& batch, bool last)>;
bool searchEventsInBatches(const EventStore& store, const QString& text, const TimelineClock& clock,
                           const DeliverBatchFn& deliver, const CancelFn& cancelled = {},
                           std::int64_t firstBatchEvents = kFirstBatchEvents,
                           const std::vector<char>& lanes = {});

// searchEventsInBatches, all batches appended into one result; nullopt when cancelled.
std::optional<EventSearchResult> searchEvents(const EventStore& store, const QString& text,
                                              const TimelineClock& clock,
                                              const CancelFn& cancelled = {});

// Runs searchEventsInBatches in a worker so that typing never waits for a scan: a search starts
// after the text has been left alone for debounceMs; a newer search or cancel() supersedes the
// running one (a generation counter the worker polls) and nothing more of it is delivered. The
// hits are appended to result() batch by batch on the object's thread, each time announced by
// hitsChanged.
class EventSearch : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultDebounceMs = 120;

    explicit EventSearch(QObject* parent = nullptr);
    // Cancels and waits for the workers (they stop within 64 Ki events).
    ~EventSearch() override;

    void setDebounceMs(int ms);
    // Searches `session`'s events (kept alive until the worker is done) for `text`, in the lanes
    // flagged in `lanes` (empty: every lane). The previous search's hits stay in result() until
    // the new one delivers its first batch.
    void search(SessionPtr session, const QString& text, const TimelineClock& clock,
                std::vector<char> lanes = {});
    // Drops the pending or running search; nothing more is delivered for it. result() stays.
    void cancel();
    // cancel(), and result() emptied (e.g. the session it indexes is gone).
    void clear();
    // A search is waiting for its debounce or running.
    bool isBusy() const { return m_timer.isActive() || m_busy; }
    // The newest search's hits so far; result().complete once it is done.
    const EventSearchResult& result() const { return m_result; }

Q_SIGNALS:
    // result() changed: `restarted` when it now holds a newer search than before (the earlier
    // hits are gone), else hits were appended or the search completed.
    void hitsChanged(bool restarted);

private:
    void start();
    void receive(std::uint64_t generation, EventSearchBatch&& batch, bool last);

    QTimer m_timer;
    SessionPtr m_session;
    QString m_text;
    TimelineClock m_clock;
    std::vector<char> m_lanes;
    // Shared with the workers, which may outlive a superseded search.
    std::shared_ptr<std::atomic<std::uint64_t>> m_generation;
    std::uint64_t m_resultGeneration = 0; // the search result() holds
    std::vector<QFuture<void>> m_workers; // running or finished, pruned on start
    EventSearchResult m_result;
    bool m_busy = false;
};

} // namespace rankscope
