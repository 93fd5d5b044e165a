#pragma once

#include <atomic>
#include <cstddef>
#include <functional>

namespace rankscope {

// How many threads parallelFor(count, ...) runs on: QThread::idealThreadCount(), at most
// `count`, at least 1. Callers size per-worker scratch with it.
std::size_t parallelWorkers(std::size_t count);

// What a long parallelFor (reading a folder) adds: a stop flag, and a poll on the calling thread.
struct ParallelControl {
    // Once set, no further item starts (bodies that read the same flag can stop early).
    const std::atomic<bool>* stop = nullptr;
    // Called on the calling thread every 20 ms while items run (progress, cancellation); the
    // calling thread then runs no item itself.
    std::function<void()> poll;
};

// For a long loop on the calling thread (outside parallelFor): runs the poll, when there is one,
// and says whether the stop flag is set. Called every few thousand items, not on each.
inline bool stopRequested(const ParallelControl& control)
{
    if (control.poll) control.poll();
    return control.stop && control.stop->load(std::memory_order_relaxed);
}

// Calls body(item, worker) for every item in [0, count) on parallelWorkers(count) threads, the
// calling thread being worker 0 unless it polls; items are handed out one at a time, so uneven
// items balance.
// Its own threads, not the global QThreadPool: loading and analysis themselves run on that
// pool, and nested pool tasks deadlock once every pool thread waits for its children.
// Whatever a body writes must be its item's own (or its worker's own) memory.
void parallelFor(std::size_t count,
                 const std::function<void(std::size_t item, std::size_t worker)>& body,
                 const ParallelControl& control = {});

} // namespace rankscope
