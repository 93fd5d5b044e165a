// How long Cancel and Quit take during a long load: a folder with a large Kineto trace and a large
// rank log (generated into a temporary folder), loaded by TraceLoader as the GUI does; a cancel
// (or the loader's destruction, which is what Quit does) comes at several moments of the load,
// and the time until the load has ended is printed for each.
// Usage: cancel_bench [trace MB, default 1024] [log MB, default 1024]
#include "kinetogen.h"
#include "model/traceloader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <memory>

using namespace rankscope;

namespace {

// Starts a load, waits `afterMs` (from the start, or from the end of reading when `afterRead`),
// cancels and returns the ms until `canceled` (or -1 when the load had already finished);
// `quit`: destroys the loader instead, as closing the window does. `diagnosing`: the folder was
// read when the cancel came (the diagnosis was running).
double cancelLatencyMs(const QString& dir, int afterMs, bool afterRead, bool quit, bool* diagnosing)
{
    *diagnosing = false;
    auto loader = std::make_unique<TraceLoader>();
    QEventLoop loop;
    bool finished = false;
    QObject::connect(loader.get(), &TraceLoader::loaded, &loop, [&] {
        finished = true;
        loop.quit();
    });
    QObject::connect(loader.get(), &TraceLoader::canceled, &loop, &QEventLoop::quit);
    QObject::connect(loader.get(), &TraceLoader::read, &loop, [&] {
        *diagnosing = true;
        if (afterRead) QTimer::singleShot(afterMs, &loop, &QEventLoop::quit);
    });
    loader->start(dir);
    if (!afterRead) QTimer::singleShot(afterMs, &loop, &QEventLoop::quit);
    loop.exec();
    if (finished) return -1;
    QElapsedTimer timer;
    timer.start();
    if (quit) {
        loader.reset();
    } else {
        loader->cancel();
        loop.exec();
    }
    return timer.nsecsElapsed() / 1e6;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const qint64 traceMb = argc > 1 ? QByteArray(argv[1]).toLongLong() : 1024;
    const qint64 logMb = argc > 2 ? QByteArray(argv[2]).toLongLong() : 1024;
    QTemporaryDir dir;
    bench::writeSyntheticKineto(dir.filePath(QStringLiteral("rank0.pt.trace.json")).toStdString(),
                                traceMb << 20, 0);
    {
        QFile log(dir.filePath(QStringLiteral("rank1.log")));
        if (!log.open(QIODevice::WriteOnly)) return 1;
        QByteArray block;
        for (int i = 0; i < 1000; ++i)
            block += "2026-12-02 13:41:34.916 [rank1] INFO train: step 12 loss 33.91161\n"
                     "node7:12345:12400 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n";
        for (qint64 written = 0; written < logMb << 20; written += block.size())
            log.write(block);
    }
    // The second of two whole loads (the first fills the page cache) sets the moments.
    QElapsedTimer whole;
    for (int run = 0; run < 2; ++run) {
        whole.start();
        TraceLoader loader;
        QEventLoop loop;
        QObject::connect(&loader, &TraceLoader::loaded, &loop, &QEventLoop::quit);
        QObject::connect(&loader, &TraceLoader::failed, &loop, &QEventLoop::quit);
        loader.start(dir.path());
        loop.exec();
    }
    const double loadMs = whole.nsecsElapsed() / 1e6;
    std::printf("%lld MB trace + %lld MB log: whole load %.1f s\n", static_cast<long long>(traceMb),
                static_cast<long long>(logMb), loadMs / 1000);
    for (const double fraction : {0.05, 0.3, 0.6, 0.8, 0.95})
        for (const bool quit : {false, true}) {
            const int after = int(loadMs * fraction);
            bool diagnosing = false;
            const double ms = cancelLatencyMs(dir.path(), after, false, quit, &diagnosing);
            if (ms < 0)
                std::printf("  %s at %d ms: the load had finished\n", quit ? "quit" : "cancel",
                            after);
            else
                std::printf("  %s at %d ms (%.0f %% of the load, %s): ended %.0f ms later\n",
                            quit ? "quit" : "cancel", after, fraction * 100,
                            diagnosing ? "diagnosing" : "reading", ms);
        }
    for (const int afterRead : {0, 200, 500})
        for (const bool quit : {false, true}) {
            bool diagnosing = false;
            const double ms = cancelLatencyMs(dir.path(), afterRead, true, quit, &diagnosing);
            if (ms < 0)
                std::printf("  %s %d ms after reading: the load had finished\n",
                            quit ? "quit" : "cancel", afterRead);
            else
                std::printf("  %s %d ms after reading (diagnosing): ended %.0f ms later\n",
                            quit ? "quit" : "cancel", afterRead, ms);
        }
    return 0;
}
