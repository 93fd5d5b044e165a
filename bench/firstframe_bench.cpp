// Time from opening a ~1 GB synthetic trace folder (bench/kinetogen) to the first painted frame
// of the timeline, offscreen at 1920x1080, on the path the app takes: TraceLoader on its worker
// (read, pyramids, analysis), then the Timeline tab's setSession (view and charts), the
// analysis' offsets and markers, and one paint of the view.
// Usage: firstframe_bench [--gb 1.0] [--files 4] [--dir DIR (kept; reused when present)]
//        firstframe_bench --dir JOB.rsdigest (a digest of rankscope-digest, opened as it is)

#include "bench/kinetogen.h"
#include "model/digest/digest.h"
#include "model/traceloader.h"
#include "views/findings/findingsmodel.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace rankscope;
namespace fs = std::filesystem;

namespace {

double processCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    double gb = 1.0;
    int fileCount = 4;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--gb" && i + 1 < argc)
            gb = std::stod(argv[++i]);
        else if (a == "--files" && i + 1 < argc)
            fileCount = std::stoi(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else {
            std::fprintf(stderr, "usage: firstframe_bench [--gb 1.0] [--files 4] [--dir DIR]\n");
            return 2;
        }
    }
    const bool keep = !dir.empty();
    if (!keep)
        dir = (fs::temp_directory_path() / ("rankscope-firstframe-" + std::to_string(::getpid())))
                  .string();
    const bool digest = Digest::isDigestPath(QString::fromStdString(dir));
    if (!digest) fs::create_directories(dir);
    std::int64_t bytes = digest ? std::int64_t(fs::file_size(dir)) : 0;
    for (int k = 0; k < fileCount && !digest; ++k) {
        const std::string path = dir + "/rank" + std::to_string(k) + ".pt.trace.json";
        if (!fs::exists(path))
            bench::writeSyntheticKineto(path, std::int64_t(gb * 1e9 / fileCount), k);
        bytes += std::int64_t(fs::file_size(path));
    }
    if (digest)
        std::printf("digest: %.1f MB, %s\n", double(bytes) / 1e6, dir.c_str());
    else
        std::printf("folder: %d Kineto files, %.2f GB in %s\n", fileCount, double(bytes) / 1e9,
                    dir.c_str());

    TimelinePanel panel;
    panel.resize(1920 + TimelineView::kLabelWidth + 2, 1400); // + the frame: a 1920 px track
    panel.show();
    QApplication::processEvents();
    TimelineView* view = panel.view();

    TraceLoader loader;
    SessionPtr session;
    QString failure;
    QEventLoop loop;
    QObject::connect(&loader, &TraceLoader::loaded, &loop, [&](const SessionPtr& s) {
        session = s;
        loop.quit();
    });
    QObject::connect(&loader, &TraceLoader::failed, &loop, [&](const QString& reason) {
        failure = reason;
        loop.quit();
    });
    QElapsedTimer wall;
    wall.start();
    const double cpu0 = processCpuMs();
    loader.start(QString::fromStdString(dir));
    loop.exec();
    if (!session) {
        std::fprintf(stderr, "load failed: %s\n", qPrintable(failure));
        return 1;
    }
    const double loadMs = double(wall.nsecsElapsed()) / 1e6;
    const double loadCpu = processCpuMs() - cpu0;
    QElapsedTimer step;
    step.start();
    panel.setSession(session);
    view->setClockOffsets(FindingsModel::timelineOffsets(session->analysis.clock));
    view->setMarkers(FindingsModel::timelineMarkers(session->analysis));
    const double setMs = double(step.nsecsElapsed()) / 1e6;
    step.restart();
    view->viewport()->repaint(); // paints synchronously: the first frame, fonts and polish included
    const double paintMs = double(step.nsecsElapsed()) / 1e6;
    const double totalMs = double(wall.nsecsElapsed()) / 1e6;
    const double totalCpu = processCpuMs() - cpu0;

    const QImage frame = view->renderImage();
    int painted = 0; // columns of the first lane row that are not lane background
    const int y = view->yForLane(0);
    for (int x = TimelineView::kLabelWidth; y >= 0 && x < frame.width(); ++x)
        painted += frame.pixelColor(x, y) != view->laneBackground(0);
    std::printf("session: %lld events, %zu lanes, %zu collectives, %zu findings\n",
                static_cast<long long>(session->events.eventCount()), session->events.lanes.size(),
                session->events.collectives.size(), session->analysis.findings.size());
    std::printf("viewport %dx%d; first lane painted on %d of %d columns\n", frame.width(),
                frame.height(), painted, view->trackWidth());
    std::printf("open -> loaded (read + pyramids + analysis): %8.0f ms wall, %8.0f ms CPU\n",
                loadMs, loadCpu);
    std::printf("setSession (view, charts, offsets, markers): %8.1f ms wall\n", setMs);
    std::printf("first paint of the view:                     %8.1f ms wall\n", paintMs);
    std::printf("open -> first painted frame:                 %8.0f ms wall, %8.0f ms CPU\n",
                totalMs, totalCpu);
    if (!keep) fs::remove_all(dir);
    return 0;
}
