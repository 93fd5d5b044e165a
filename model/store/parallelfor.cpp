#include "model/store/parallelfor.h"

#include <QThread>
#include <algorithm>
#include <chrono>
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
        std::atomic<std::size_t> running{workers};
        for (std::size_t w = 0; w < workers; ++w)
            threads.emplace_back([&, w] {
                work(w);
                running.fetch_sub(1);
            });
        while (running.load() > 0) {
            control.poll();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    for (std::thread& t : threads)
        t.join();
}

} // namespace rankscope
