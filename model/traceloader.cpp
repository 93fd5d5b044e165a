#include "model/traceloader.h"

#include <QPromise>
#include <QtConcurrent>

namespace rankscope {

SessionPtr loadSession(const QString& dir, const ProgressFn& progress, const CancelFn& cancelled)
{
    auto session = std::make_shared<TraceSession>();
    session->folder = TraceFolder::discover(dir, cancelled);
    if (progress) progress(session->folder.totalBytes(), session->folder.totalBytes());
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
