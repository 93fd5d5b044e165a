#include "model/store/parallelfor.h"

#include <QThread>
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace rankscope {

std::size_t parallelWorkers(std::size_t count)
{
    const auto ideal = std::size_t(std::max(1, QThread::idealThreadCount()));
    return std::max<std::size_t>(1, std::min(ideal, count));
}

void parallelFor(std::size_t count,
                 const std::function<void(std::size_t item, std::size_t worker)>& body)
{
    std::atomic<std::size_t> next{0};
    const auto work = [&](std::size_t worker) {
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;)
            body(i, worker);
    };
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < parallelWorkers(count); ++w)
        threads.emplace_back(work, w);
    work(0);
    for (std::thread& t : threads)
        t.join();
}

} // namespace rankscope
