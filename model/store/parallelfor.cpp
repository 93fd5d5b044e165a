#include "model/store/parallelfor.h"

#include <QThread>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace rankscope {

std::size_t parallelWorkers(std::size_t count)
{
    const auto ideal = std::size_t(std::max(1, QThread::idealThreadCount()));
    return std::max<std::size_t>(1, std::min(ideal, count));
}

void parallelFor(std::size_t count,
                 const std::function<void(std::size_t item, std::size_t worker)>& body,
                 const ParallelControl& control)
{
    std::atomic<std::size_t> next{0};
    const auto stopped = [&] { return control.stop && control.stop->load(); };
    const auto work = [&](std::size_t worker) {
        for (std::size_t i;
             !stopped() && (i = next.fetch_add(1, std::memory_order_relaxed)) < count;)
            body(i, worker);
    };
    const std::size_t workers = parallelWorkers(count);
    std::vector<std::thread> threads;
    if (!control.poll) {
        for (std::size_t w = 1; w < workers; ++w)
            threads.emplace_back(work, w);
        work(0);
    } else {
        // Polls every 20 ms, and returns as soon as the last worker is done (a fixed sleep
        // made every short run, such as `rankscope analyze` of an empty folder, last 20 ms).
        std::mutex mutex;
        std::condition_variable finished;
        std::size_t running = workers;
        for (std::size_t w = 0; w < workers; ++w)
            threads.emplace_back([&, w] {
                work(w);
                const std::lock_guard<std::mutex> lock(mutex);
                if (--running == 0) finished.notify_all();
            });
        std::unique_lock<std::mutex> lock(mutex);
        while (running > 0) {
            lock.unlock();
            control.poll();
            lock.lock();
            finished.wait_for(lock, std::chrono::milliseconds(20), [&] { return running == 0; });
        }
    }
    for (std::thread& t : threads)
        t.join();
}

} // namespace rankscope
