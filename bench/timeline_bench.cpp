// Paints a synthetic 10 M-event, 64-lane session into an offscreen 1920x1080 image at several
// zoom levels and prints the median milliseconds per frame, plus the level-of-detail build time
// and memory, and what the "Time per rank" chart's visible-window breakdown costs at each zoom
// (it runs off the GUI thread). Usage: timeline_bench [events (default 10000000)] [frames (default
// 30)]

#include "model/analysis/timebreakdown.h"
#include "model/store/lanelod.h"
#include "tests/support/syntheticsession.h"
#include "views/timeline/timelineview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QScrollBar>
#include <QThreadPool>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace rankscope;

namespace {

// Thread CPU time: on a shared machine the wall clock also counts the time other processes
// hold the cores, this does not.
double cpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double medianMs(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::size_t storeBytes(const EventStore& store)
{
    std::size_t b = 0;
    for (const Lane& l : store.lanes)
        b += l.startNs.capacity() * 8 + l.endNs.capacity() * 8 + l.nameId.capacity() * 4 +
             l.category.capacity() + l.depth.capacity() + l.sourceOffset.capacity() * 8;
    return b;
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    const std::int64_t events = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
    const int frames = argc > 2 ? std::atoi(argv[2]) : 30;

    // 8 ranks x (6 GPU streams + 2 CPU threads) = 64 lanes, over 10 s.
    synthetic::Spec spec;
    spec.ranks = 8;
    spec.gpuLanesPerRank = 6;
    spec.cpuLanesPerRank = 2;
    spec.eventsPerLane = events / 64;
    spec.spanNs = 10'000'000'000;
    spec.collectiveEvery = 50;
    QElapsedTimer timer;
    timer.start();
    auto session = synthetic::makeSession(spec);
    const double genMs = double(timer.nsecsElapsed()) / 1e6;
    timer.restart();
    session->laneLods = buildLaneLods(session->events);
    const double lodMs = double(timer.nsecsElapsed()) / 1e6;
    std::printf("session: %lld events in %zu lanes, %zu collectives (generated in %.0f ms)\n",
                static_cast<long long>(session->events.eventCount()), session->events.lanes.size(),
                session->events.collectives.size(), genMs);
    std::printf("event store: %.1f MB; LOD pyramids: %.1f MB, built in %.0f ms (%d threads)\n",
                double(storeBytes(session->events)) / 1e6,
                double(memoryBytes(session->laneLods)) / 1e6, lodMs,
                QThreadPool::globalInstance()->maxThreadCount());

    TimelineView view;
    view.setFrameShape(QFrame::NoFrame);
    view.setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff); // the viewport is the full 1920 px
    view.resize(1920, 1080);
    view.show(); // offscreen: lays the viewport out at its real size
    QApplication::processEvents();
    timer.restart();
    view.setSession(session);
    std::printf("setSession: %.0f ms\n", double(timer.nsecsElapsed()) / 1e6);
    QImage image(view.viewport()->size(), QImage::Format_RGB32);
    view.viewport()->render(&image); // first frame: polish, fonts

    const std::int64_t t0 = view.zoom().traceStartNs(), t1 = view.zoom().traceEndNs();
    struct Case {
        const char* name;
        std::int64_t spanNs;
    };
    const Case cases[] = {{"full view (10 s)", t1 - t0},
                          {"mid zoom (500 ms)", (t1 - t0) / 20},
                          {"mid zoom (50 ms)", (t1 - t0) / 200},
                          {"deep zoom (100 us)", 100'000}};
    std::printf("frame %dx%d, %d frames per case; frames alternate between two scroll positions "
                "one pixel apart so that none comes from the cache\n",
                image.width(), image.height(), frames);
    for (const Case& c : cases) {
        const std::int64_t start = t0 + (t1 - t0) / 2 - c.spanNs / 2;
        view.setVisibleRange(start, start + c.spanNs);
        std::vector<double> ms, cpu;
        for (int f = 0; f < frames + 3; ++f) {
            view.verticalScrollBar()->setValue(f % 2);
            timer.restart();
            const double c0 = cpuMs();
            view.viewport()->render(&image);
            if (f >= 3) {
                ms.push_back(double(timer.nsecsElapsed()) / 1e6);
                cpu.push_back(cpuMs() - c0);
            }
        }
        std::printf("  %-20s median %6.2f ms/frame wall (min %.2f, max %.2f), %6.2f ms CPU\n",
                    c.name, medianMs(ms), *std::min_element(ms.begin(), ms.end()),
                    *std::max_element(ms.begin(), ms.end()), medianMs(cpu));
        std::vector<double> windowCpu;
        for (int f = 0; f < 3; ++f) {
            const double c0 = cpuMs();
            const auto bd = TimeBreakdown::computeWindow(session->events, start, start + c.spanNs,
                                                         view.clock().offsetNs);
            windowCpu.push_back(cpuMs() - c0);
            if (bd.empty()) return 1; // every rank has events: an empty answer is a bug
        }
        std::printf("  %-20s window breakdown %8.2f ms CPU (median of 3)\n", "",
                    medianMs(windowCpu));
    }
    return 0;
}
