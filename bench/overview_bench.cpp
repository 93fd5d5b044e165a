// The rank overview on a large synthetic job: 1,024 ranks x 10,000 collectives (default), one
// rank 6 ms late at every collective and one that never reaches the last one (the others wait
// 600 s in it). Times RankActivity::build (and prints the ranks the lateness gutter shows 1 ms or
// more late), then frames of RankOverviewPainter (gutter included) at several zoom
// levels, 1 px a rank, 1,700 px of track; then find over every event of the store: the batches of
// searchEventsInBatches on this thread (time to the first batch and to the last), then the same
// through EventSearch, the worker the Timeline uses, with a 1 ms timer on this (the GUI) thread
// whose longest gap says how long the GUI thread was kept from its events.
// Usage: overview_bench [ranks] [collectives] [frames]
#include "model/find/eventsearch.h"
#include "model/overview/rankactivity.h"
#include "tests/support/syntheticjob.h"
#include "views/timeline/rankoverviewpainter.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <numeric>
#include <time.h>

using namespace rankscope;

namespace {

// CPU time of the calling thread, ms.
double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double msSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

constexpr int kTrackPx = 1700;
constexpr int kLabelPx = 180;

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
    const int collectives = argc > 2 ? std::atoi(argv[2]) : 10000;
    const int frames = argc > 3 ? std::atoi(argv[3]) : 20;

    auto t0 = std::chrono::steady_clock::now();
    test::SyntheticJob job(ranks, true, true);
    job.setMembersInRecords(false);
    job.setArrivalDelay(ranks / 3, 6'000'000);
    job.setArrivalJitter(200'000, 42);
    const std::vector<std::int64_t> compute = test::uniform(ranks, 1'000'000);
    for (int done = 0; done < collectives - 1; done += 10)
        job.step(compute,
                 std::vector<std::string>(std::size_t(std::min(10, collectives - 1 - done)),
                                          "all_reduce"),
                 300'000);
    const std::int64_t hangAt = job.nowNs();
    job.step(compute, {"all_reduce"}, 300'000, {ranks - 2}, 600'000'000'000);
    const auto session = std::make_shared<TraceSession>(); // EventSearch searches a session
    session->events = std::move(job.finish());
    const EventStore& store = session->events;
    std::printf(
        "synthetic store: %d ranks, %zu collective records, %lld events (%.1f s to build)\n", ranks,
        store.collectives.size(), static_cast<long long>(store.eventCount()), msSince(t0) / 1000);

    t0 = std::chrono::steady_clock::now();
    const std::clock_t buildCpu = std::clock();
    const RankActivity activity = RankActivity::build(store);
    const double buildCpuMs = 1000.0 * double(std::clock() - buildCpu) / CLOCKS_PER_SEC;
    std::size_t changes = 0, runs = 0;
    for (const RankActivity::Row& row : activity.rows()) {
        changes += row.startNs.size();
        for (const RankActivity::Level& level : row.levels)
            runs += level.state.size();
    }
    std::printf("RankActivity::build: %.0f ms wall, %.0f ms CPU, %zu state changes, %zu pyramid "
                "runs, %.1f MB\n",
                msSince(t0), buildCpuMs, changes, runs, double(activity.memoryBytes()) / 1e6);

    // What the lateness gutter shows: the ranks whose median lateness at collectives is 1 ms or
    // more beyond the typical rank's (the straggler alone in this job).
    std::printf("lateness gutter: typical rank %.2f ms; 1 ms or more beyond it:",
                double(activity.typicalLatenessNs(-1)) / 1e6);
    for (const RankActivity::Row& row : activity.rows())
        if (const std::int64_t ns = RankOverviewPainter::excessLatenessNs(activity, row.key);
            ns >= 1'000'000)
            std::printf(" rank %d (%.2f ms over %d collectives)", row.rank, double(ns) / 1e6,
                        row.latenessSamples);
    std::printf("\n");

    RankOverviewLayout layout;
    std::vector<int> order(static_cast<std::size_t>(ranks));
    std::iota(order.begin(), order.end(), 0);
    layout.setRanks(order);
    layout.setHeight(RankOverviewLayout::kMarkStripHeight + ranks);
    layout.setTrackLeft(kLabelPx);
    QImage image(kLabelPx + kTrackPx, layout.rowsBottom(), QImage::Format_RGB32);
    RankOverviewPainter painter;
    RankOverviewFrame frame;
    frame.activity = &activity;
    frame.zoom.setTraceRange(0, activity.traceEndNs());
    frame.zoom.setWidthPx(kTrackPx);
    frame.markers.append(
        {hangAt, activity.traceEndNs(), {ranks - 2}, QColor(200, 0, 0), QStringLiteral("F1 hang")});
    const QFont font = QApplication::font();
    struct Zoom {
        const char* name;
        std::int64_t startNs, endNs;
    };
    const Zoom zooms[] = {
        {"whole trace (600 s hang included)", 0, activity.traceEndNs()},
        {"the steps before the hang", 0, hangAt},
        {"one step of 10 collectives", hangAt / 2, hangAt / 2 + 16'000'000},
        {"one collective", hangAt / 2, hangAt / 2 + 1'600'000},
        {"the hang's start", hangAt - 20'000'000, hangAt + 20'000'000},
    };
    std::printf("%d px of track x %d rows, %d frames each (the range moves 1 px a frame):\n",
                kTrackPx, layout.rowCount(), frames);
    for (const Zoom& z : zooms) {
        frame.zoom.setVisibleRange(z.startNs, z.endNs);
        const std::int64_t span = frame.zoom.visibleSpanNs();
        double total = 0, worst = 0;
        const std::clock_t c0 = std::clock();
        for (int f = 0; f < frames; ++f) {
            frame.zoom.setVisibleRange(z.startNs + f * span / kTrackPx,
                                       z.startNs + f * span / kTrackPx + span);
            const auto p0 = std::chrono::steady_clock::now();
            painter.paint(image, layout, frame, font);
            const double ms = msSince(p0);
            total += ms;
            worst = std::max(worst, ms);
        }
        // CPU time of all threads: on a shared machine wall time also counts the neighbours.
        const double cpuMs = 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC / frames;
        std::printf("  %-36s %6.1f ms a frame wall (worst %.1f), %.1f ms CPU\n", z.name,
                    total / frames, worst, cpuMs);
    }
    std::printf("find over %lld events:\n", static_cast<long long>(store.eventCount()));
    for (const char* text : {"no such event", "sgemm", "nccl"}) {
        const QString q = QString::fromLatin1(text);
        const auto f0 = std::chrono::steady_clock::now();
        const std::clock_t c0 = std::clock();
        double firstWall = -1, firstCpu = -1;
        std::size_t hits = 0, batches = 0, firstHits = 0;
        searchEventsInBatches(store, q, {}, [&](EventSearchBatch&& batch, bool) {
            if (firstWall < 0 && !batch.hits.empty()) {
                firstWall = msSince(f0);
                firstCpu = 1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC;
                firstHits = batch.hits.size();
            }
            hits += batch.hits.size();
            batches += batch.hits.empty() ? 0 : 1;
        });
        std::printf("  \"%s\", one thread: %zu hits in %zu batches; first %zu hits after %.0f ms "
                    "wall, %.0f ms CPU; all after %.0f ms wall, %.0f ms CPU\n",
                    text, hits, batches, firstHits, firstWall, firstCpu, msSince(f0),
                    1000.0 * double(std::clock() - c0) / CLOCKS_PER_SEC);

        EventSearch search;
        search.setDebounceMs(0);
        QEventLoop loop;
        QElapsedTimer since;
        double workerFirst = -1, longestGap = 0, longestCpuGap = 0;
        qint64 lastTick = 0;
        double lastTickCpu = threadCpuMs();
        QTimer tick;
        tick.setInterval(1);
        QObject::connect(&tick, &QTimer::timeout, [&] {
            longestGap = std::max(longestGap, double(since.nsecsElapsed() - lastTick) / 1e6);
            lastTick = since.nsecsElapsed();
            // What this thread itself spent between ticks (the rest of a wall gap is waiting
            // for a core on a loaded machine).
            longestCpuGap = std::max(longestCpuGap, threadCpuMs() - lastTickCpu);
            lastTickCpu = threadCpuMs();
        });
        QObject::connect(&search, &EventSearch::hitsChanged, [&] {
            if (workerFirst < 0 && search.result().hitCount() > 0)
                workerFirst = double(since.nsecsElapsed()) / 1e6;
            if (search.result().complete) loop.quit();
        });
        const std::clock_t w0 = std::clock();
        const double guiCpu0 = threadCpuMs();
        since.start();
        tick.start();
        search.search(session, q, {});
        loop.exec();
        tick.stop();
        std::printf("  \"%s\", EventSearch: first hits on the GUI thread after %.0f ms wall, all "
                    "after %.0f ms wall, %.0f ms CPU (GUI thread %.0f ms); the GUI thread's "
                    "longest gap between 1 ms ticks %.1f ms wall, %.1f ms of its own CPU\n",
                    text, workerFirst, double(since.nsecsElapsed()) / 1e6,
                    1000.0 * double(std::clock() - w0) / CLOCKS_PER_SEC, threadCpuMs() - guiCpu0,
                    longestGap, longestCpuGap);
        std::fflush(stdout);
    }
    return 0;
}
