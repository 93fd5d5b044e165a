// Time from opening a synthetic trace folder (bench/kinetogen) to the first painted frame of the
// timeline, offscreen at 1920x1080, on the path the app takes: TraceLoader on its worker reads
// the folder and builds the lane pyramids, then reports `read`; the GUI thread then gives the
// session to the Timeline tab (setSession: view, charts, the rank overview's build started in
// the background) and paints the view once. That frame shows the whole, complete timeline (every
// event read); the diagnosis runs on meanwhile and fills in the clock offsets and the finding
// markers when `loaded` follows, which is timed as "diagnosis ready".
// Usage: firstframe_bench [--gb 1.0] [--files 4] [--dir DIR (kept; reused when present)]
//                         [--gzip (the files are .json.gz, zlib level 1)]
//        firstframe_bench --dir JOB.rsdigest (a digest of rankscope-digest, opened as it is)

#include "bench/kinetogen.h"
#include "model/digest/digest.h"
#include "model/store/lanelod.h"
#include "model/traceloader.h"
#include "views/findings/findingsmodel.h"
#include "views/timeline/rankoverview.h"
#include "views/timeline/timelinepanel.h"
#include "views/timeline/timelineview.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QImage>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>
#include <zlib.h>

using namespace rankscope;
namespace fs = std::filesystem;

namespace {

double processCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Writes a synthetic trace of about `bytes` (inflated) to `path` as gzip at level 1.
bool writeGzipped(const std::string& path, std::int64_t bytes, int rank)
{
    const std::string plain = path + ".plain.tmp";
    bench::writeSyntheticKineto(plain, bytes, rank);
    std::ifstream in(plain, std::ios::binary);
    gzFile out = gzopen(path.c_str(), "wb1");
    if (!in || !out) return false;
    gzbuffer(out, 1 << 20);
    std::vector<char> buf(std::size_t(4) << 20);
    bool ok = true;
    while (ok && in) {
        in.read(buf.data(), std::streamsize(buf.size()));
        const auto n = unsigned(in.gcount());
        ok = n == 0 || gzwrite(out, buf.data(), n) == int(n);
    }
    ok = gzclose(out) == Z_OK && ok;
    fs::remove(plain);
    return ok;
}

struct Mark {
    double wallMs = 0;
    double cpuMs = 0;
};

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    double gb = 1.0;
    int fileCount = 4;
    bool gzip = false;
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--gb" && i + 1 < argc)
            gb = std::stod(argv[++i]);
        else if (a == "--files" && i + 1 < argc)
            fileCount = std::stoi(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--gzip")
            gzip = true;
        else {
            std::fprintf(stderr,
                         "usage: firstframe_bench [--gb 1.0] [--files 4] [--dir DIR] [--gzip]\n");
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
        const std::string path =
            dir + "/rank" + std::to_string(k) + ".pt.trace.json" + (gzip ? ".gz" : "");
        const std::int64_t want = std::int64_t(gb * 1e9 / fileCount);
        if (!fs::exists(path)) {
            if (!gzip)
                bench::writeSyntheticKineto(path, want, k);
            else if (!writeGzipped(path, want, k)) {
                std::fprintf(stderr, "cannot write %s\n", path.c_str());
                return 1;
            }
        }
        bytes += std::int64_t(fs::file_size(path));
    }
    if (digest)
        std::printf("digest: %.1f MB, %s\n", double(bytes) / 1e6, dir.c_str());
    else
        std::printf("folder: %d Kineto files%s, %.2f GB on disk in %s\n", fileCount,
                    gzip ? " (.json.gz)" : "", double(bytes) / 1e9, dir.c_str());

    TimelinePanel panel;
    panel.resize(1920 + TimelineView::kLabelWidth + 2, 1400); // + the frame: a 1920 px track
    panel.show();
    QApplication::processEvents();
    TimelineView* view = panel.view();
    auto* overview = panel.findChild<RankOverview*>(QStringLiteral("rankOverview"));

    TraceLoader loader;
    SessionPtr session;
    QString failure;
    bool diagnosed = false;
    bool overviewReady = overview == nullptr;
    Mark bytesRead, read, firstFrame, diagnosis, overviewMark;
    bool allBytesRead = false;
    double setMs = 0, paintMs = 0;
    QElapsedTimer wall;
    const auto mark = [&](double cpu0) {
        return Mark{double(wall.nsecsElapsed()) / 1e6, processCpuMs() - cpu0};
    };
    double cpu0 = 0;
    QEventLoop loop;
    const auto maybeQuit = [&] {
        if (!failure.isEmpty() || (diagnosed && overviewReady)) loop.quit();
    };
    // The progress reaches its end when the readers have consumed every byte: the last files'
    // finish (sorts, flows), the merge, the folder's bookkeeping and the pyramids follow.
    QObject::connect(&loader, &TraceLoader::progressChanged, &loop, [&](int permille) {
        if (permille < 1000 || allBytesRead) return;
        bytesRead = mark(cpu0);
        allBytesRead = true;
    });
    // What MainWindow::onRead does for the timeline: the session as read, before its diagnosis.
    QObject::connect(&loader, &TraceLoader::read, &loop, [&](const SessionPtr& s) {
        read = mark(cpu0);
        session = s;
        QElapsedTimer step;
        step.start();
        panel.setSession(session);
        setMs = double(step.nsecsElapsed()) / 1e6;
        step.restart();
        view->viewport()->repaint(); // paints synchronously: the first frame, fonts and polish
        paintMs = double(step.nsecsElapsed()) / 1e6;
        firstFrame = mark(cpu0);
    });
    QObject::connect(&loader, &TraceLoader::loaded, &loop, [&](const SessionPtr& s) {
        view->setClockOffsets(FindingsModel::timelineOffsets(s->analysis.clock));
        view->setMarkers(FindingsModel::timelineMarkers(s->analysis));
        view->viewport()->repaint();
        diagnosis = mark(cpu0);
        diagnosed = true;
        maybeQuit();
    });
    if (overview)
        QObject::connect(overview, &RankOverview::activityReady, &loop, [&] {
            overviewMark = mark(cpu0);
            overviewReady = true;
            maybeQuit();
        });
    QObject::connect(&loader, &TraceLoader::failed, &loop, [&](const QString& reason) {
        failure = reason.isEmpty() ? QStringLiteral("failed") : reason;
        maybeQuit();
    });
    wall.start();
    cpu0 = processCpuMs();
    loader.start(QString::fromStdString(dir));
    loop.exec();
    if (!session || !diagnosed) {
        std::fprintf(stderr, "load failed: %s\n", qPrintable(failure));
        return 1;
    }

    const QImage frame = view->renderImage();
    int painted = 0; // columns of the first lane row that are not lane background
    const int y = view->yForLane(0);
    for (int x = TimelineView::kLabelWidth; y >= 0 && x < frame.width(); ++x)
        painted += frame.pixelColor(x, y) != view->laneBackground(0);
    // The pyramids' share of the read, built again here on this thread alone.
    const double lod0 = threadCpuMs();
    const std::vector<LaneLod> lods = buildLaneLods(session->events);
    const double lodMs = threadCpuMs() - lod0;
    std::printf("session: %lld events, %zu lanes, %zu collectives, %zu findings\n",
                static_cast<long long>(session->events.eventCount()), session->events.lanes.size(),
                session->events.collectives.size(), session->analysis.findings.size());
    std::printf("viewport %dx%d; first lane painted on %d of %d columns\n", frame.width(),
                frame.height(), painted, view->trackWidth());
    std::printf("open -> every byte consumed by the readers:     %8.0f ms wall, %8.0f ms CPU\n",
                bytesRead.wallMs, bytesRead.cpuMs);
    std::printf("open -> read (every event, the lane pyramids):  %8.0f ms wall, %8.0f ms CPU\n",
                read.wallMs, read.cpuMs);
    std::printf("  (the pyramids alone, rebuilt after on one thread: %.0f ms CPU)\n", lodMs);
    std::printf("setSession (view, charts):                      %8.1f ms wall\n", setMs);
    std::printf("first paint of the view:                        %8.1f ms wall\n", paintMs);
    std::printf("open -> first painted frame (complete timeline): %7.0f ms wall, %8.0f ms CPU\n",
                firstFrame.wallMs, firstFrame.cpuMs);
    std::printf("open -> diagnosis ready (offsets, markers):     %8.0f ms wall, %8.0f ms CPU\n",
                diagnosis.wallMs, diagnosis.cpuMs);
    if (overview)
        std::printf("open -> rank overview ready:                    %8.0f ms wall, %8.0f ms CPU\n",
                    overviewMark.wallMs, overviewMark.cpuMs);
    if (!keep) fs::remove_all(dir);
    return 0;
}
