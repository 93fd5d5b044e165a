#include "model/traceloader.h"

#include "model/analysis/sessionanalysis.h"
#include "model/trace/diagnosticsloader.h"
#include "model/trace/kinetoreader.h"

#include <QPromise>
#include <QThread>
#include <QtConcurrent>
#include <atomic>
#include <thread>

namespace rankscope {

namespace {

// Reads every Kineto source, a worker per core taking the next file; each file goes into a store
// of its own (so memory is the events plus one read window per worker), merged in folder order.
// Progress and cancellation stay on the calling thread, which polls the workers' counters.
void readTraces(TraceSession& session, const ProgressFn& progress, const CancelFn& cancelled)
{
    const QList<SourceFile>& sources = session.folder.sources();
    std::vector<int> todo;
    for (int i = 0; i < int(sources.size()); ++i)
        if (sources[i].kind == SourceKind::Kineto) todo.push_back(i);
    const qint64 total = session.folder.totalBytes();
    qint64 otherBytes = 0;
    for (const SourceFile& s : sources)
        if (s.kind != SourceKind::Kineto) otherBytes += s.sizeBytes;

    std::vector<EventStore> stores(todo.size());
    std::vector<KinetoReadResult> results(todo.size());
    std::atomic<std::size_t> next{0};
    std::atomic<std::int64_t> bytesDone{0};
    std::atomic<bool> cancel{false};
    std::atomic<int> running{0};
    const auto worker = [&] {
        for (std::size_t k; (k = next.fetch_add(1)) < todo.size() && !cancel.load();) {
            const SourceFile& s = sources[todo[k]];
            KinetoReader::Options opt;
            opt.rank = s.rank.value_or(-1);
            opt.sourceIndex = todo[k];
            opt.cancel = &cancel;
            opt.progressBytes = &bytesDone;
            results[k] = KinetoReader::readFile(s.absolutePath.toStdString(), stores[k], opt);
        }
        running.fetch_sub(1);
    };
    const int threads = std::max(1, std::min(QThread::idealThreadCount(), int(todo.size())));
    std::vector<std::thread> pool;
    running = threads;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back(worker);
    while (running.load() > 0) {
        if (cancelled && cancelled()) cancel = true;
        if (progress) progress(otherBytes + bytesDone.load(), total);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (std::thread& t : pool)
        t.join();
    if (cancel.load()) return;
    for (std::size_t k = 0; k < todo.size(); ++k) {
        session.folder.setSourceStatus(todo[k], results[k].status,
                                       QString::fromStdString(results[k].message));
        session.events.merge(std::move(stores[k]));
    }
}

} // namespace

SessionPtr loadSession(const QString& dir, const ProgressFn& progress, const CancelFn& cancelled)
{
    auto session = std::make_shared<TraceSession>();
    session->folder = TraceFolder::discover(dir, cancelled);
    readDiagnosticSources(*session, cancelled);
    if (session->folder.isValid() && !(cancelled && cancelled()))
        readTraces(*session, progress, cancelled);
    if (progress) progress(session->folder.totalBytes(), session->folder.totalBytes());
    if (!(cancelled && cancelled())) analyzeSession(*session);
    session->laneLods = buildLaneLods(session->events);
    return session;
}

namespace {

void loadInPromise(QPromise<SessionPtr>& promise, const QString& dir)
{
    promise.setProgressRange(0, 1000);
    const auto progress = [&promise](qint64 done, qint64 total) {
        const int permille = total > 0 ? int(1000 * done / total) : 1000;
        promise.setProgressValueAndText(
            permille,
            QStringLiteral("%1 of %2 MB").arg(done / 1e6, 0, 'f', 1).arg(total / 1e6, 0, 'f', 1));
    };
    SessionPtr session = loadSession(dir, progress, [&promise] { return promise.isCanceled(); });
    if (!promise.isCanceled()) promise.addResult(std::move(session));
}

} // namespace

TraceLoader::TraceLoader(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<SessionPtr>();
    connect(&m_watcher, &QFutureWatcher<SessionPtr>::progressValueChanged, this,
            [this](int value) { Q_EMIT progressChanged(value, m_watcher.progressText()); });
    connect(&m_watcher, &QFutureWatcher<SessionPtr>::finished, this, &TraceLoader::onFinished);
}

TraceLoader::~TraceLoader()
{
    m_watcher.cancel();
    m_watcher.waitForFinished();
}

void TraceLoader::start(const QString& dir)
{
    cancel();
    m_dir = dir;
    m_watcher.setFuture(QtConcurrent::run(loadInPromise, dir));
}

void TraceLoader::cancel()
{
    // Unconditional: a load that is queued but not yet running reports !isRunning() and must be
    // cancelled all the same; cancelling a finished future has no effect.
    m_watcher.cancel();
}

bool TraceLoader::isRunning() const
{
    return m_watcher.isRunning();
}

void TraceLoader::onFinished()
{
    const QFuture<SessionPtr> future = m_watcher.future();
    if (future.isCanceled()) {
        Q_EMIT canceled();
        return;
    }
    if (future.resultCount() == 0) {
        Q_EMIT failed(QStringLiteral("loading %1 produced no result").arg(m_dir));
        return;
    }
    const SessionPtr session = future.result();
    if (!session->folder.isValid()) {
        Q_EMIT failed(session->folder.error());
        return;
    }
    Q_EMIT loaded(session);
}

} // namespace rankscope
