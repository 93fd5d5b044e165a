#include "model/traceloader.h"

#include "model/analysis/sessionanalysis.h"
#include "model/digest/digest.h"

#include <QPromise>
#include <QtConcurrent>
#include <map>

namespace rankscope {

SessionPtr loadSession(const QString& dir, const ProgressFn& progress, const CancelFn& cancelled,
                       const LoadOptions& options)
{
    auto session = std::make_shared<TraceSession>();
    TraceRead& read = *session;
    if (Digest::isDigestPath(dir)) { // a digest is read whole (it is small) and diagnosed as is
        Digest::Opened digest = Digest::open(dir);
        read = std::move(digest.read);
        if (read.folder.isValid())
            static_cast<Diagnosis&>(*session) = diagnose(read, &digest.breakdown);
        if (options.buildLaneLods) session->laneLods = buildLaneLods(read.events);
        return session;
    }
    read = readFolder(dir, progress, cancelled, options);
    if (read.cancelled) return session;
    // The analysis and the lane pyramids take seconds on GB inputs: a cancel seen between the
    // phases ends the load there, with nothing half-way (only the folder's listing is kept).
    const auto cancelledSession = [&session] {
        auto empty = std::make_shared<TraceSession>();
        empty->folder = std::move(session->folder);
        empty->cancelled = true;
        return empty;
    };
    const auto isCancelled = [&cancelled] { return cancelled && cancelled(); };
    if (isCancelled()) return cancelledSession();
    static_cast<Diagnosis&>(*session) = diagnose(read);
    if (isCancelled()) return cancelledSession();
    if (options.buildLaneLods) session->laneLods = buildLaneLods(read.events);
    return session;
}

namespace {

void loadInPromise(QPromise<SessionPtr>& promise, const QString& dir)
{
    promise.setProgressRange(0, 1000);
    // Files being read (started, not finished), named in the progress text.
    std::map<int, std::pair<QString, std::pair<qint64, qint64>>> reading;
    LoadOptions options;
    options.fileProgress = [&reading](int source, const QString& path, qint64 done, qint64 total) {
        if (done >= total)
            reading.erase(source);
        else
            reading[source] = {path.section(QLatin1Char('/'), -1), {done, total}};
    };
    const auto progress = [&promise, &reading](qint64 done, qint64 total) {
        const int permille = total > 0 ? int(1000 * done / total) : 1000;
        QString text =
            QStringLiteral("%1 of %2 MB").arg(done / 1e6, 0, 'f', 1).arg(total / 1e6, 0, 'f', 1);
        QStringList files;
        for (const auto& [source, file] : reading)
            files.append(QStringLiteral("%1 %2%")
                             .arg(file.first)
                             .arg(file.second.second > 0
                                      ? 100 * file.second.first / file.second.second
                                      : 0));
        if (!files.isEmpty()) text += QStringLiteral(" (%1)").arg(files.join(QStringLiteral(", ")));
        promise.setProgressValueAndText(permille, text);
    };
    SessionPtr session = loadSession(
        dir, progress, [&promise] { return promise.isCanceled(); }, options);
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
