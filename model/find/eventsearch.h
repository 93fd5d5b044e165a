#pragma once

#include "model/tracesession.h"
#include "model/zoomstate.h"

#include <QFutureWatcher>
#include <QObject>
#include <QTimer>
#include <atomic>
#include <cstdint>
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

// The events whose name holds a text.
struct EventSearchResult {
    QString text;
    // By start on the clock searched with; equal starts by lane, then event.
    std::vector<EventHit> hits;
    // Per lane of the store, the matching events' indices, ascending.
    std::vector<std::vector<std::int64_t>> byLane;
};

// Every event of `store` whose name contains `text` (case-insensitive), ordered by start on
// `clock`. nullopt when `cancelled` returns true before the search is done (it is polled per
// lane and every 64 Ki events), or for an empty text.
std::optional<EventSearchResult> searchEvents(const EventStore& store, const QString& text,
                                              const TimelineClock& clock,
                                              const CancelFn& cancelled = {});

// Runs searchEvents in a worker so that typing never waits for a scan: a search starts after
// the text has been left alone for debounceMs; a newer search or cancel() supersedes the running
// one (a generation counter the worker polls) and only the newest result is delivered.
class EventSearch : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultDebounceMs = 120;

    explicit EventSearch(QObject* parent = nullptr);
    ~EventSearch() override;

    void setDebounceMs(int ms);
    // Searches `session`'s events (kept alive until the worker is done) for `text`.
    void search(SessionPtr session, const QString& text, const TimelineClock& clock);
    // Drops the pending or running search; nothing is delivered for it.
    void cancel();
    // A search is waiting for its debounce or running.
    bool isBusy() const { return m_timer.isActive() || m_busy; }

Q_SIGNALS:
    void found(const rankscope::EventSearchResult& result);

private:
    struct Outcome {
        std::uint64_t generation = 0;
        std::optional<EventSearchResult> result;
    };
    void start();

    QTimer m_timer;
    SessionPtr m_session;
    QString m_text;
    TimelineClock m_clock;
    // Shared with the workers, which may outlive a superseded search.
    std::shared_ptr<std::atomic<std::uint64_t>> m_generation;
    QFutureWatcher<Outcome> m_watcher;
    bool m_busy = false;
};

} // namespace rankscope
