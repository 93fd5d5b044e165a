#include "model/traceloader.h"

#include "model/analysis/sessionanalysis.h"
#include "model/digest/digest.h"

#include <QPromise>
#include <QtConcurrent>
#include <atomic>
#include <map>

namespace rankscope {

namespace {

// What a cancelled load keeps: the folder's listing only, nothing half-way.
std::shared_ptr<TraceSession> cancelledSession(TraceFolder folder)
{
    auto empty = std::make_shared<TraceSession>();
    empty->folder = std::move(folder);
    empty->cancelled = true;
    return empty;
}

} // namespace

std::shared_ptr<TraceSession> readSession(const QString& dir, const ProgressFn& progress,
                                          const CancelFn& cancelled, const LoadOptions& options)
{
    auto session = std::make_shared<TraceSession>();
    TraceRead& read = *session;
    if (Digest::isDigestPath(dir)) { // a digest is read whole (it is small)
        Digest::Opened digest = Digest::open(dir);
        read = std::move(digest.read);
        session->storedBreakdown = std::move(digest.breakdown);
        session->digestWindows = std::move(digest.windows);
        session->digestReductions = std::move(digest.reductions);
        if (options.buildLaneLods) session->laneLods = buildLaneLods(read.events);
        session->jobs = splitJobs(read.folder.sources(), read.logs);
        return session;
    }
    read = readFolder(dir, progress, cancelled, options);
    if (read.cancelled) return session;
    // The lane pyramids take seconds on GB inputs: a cancel seen after reading ends the load.
    if (cancelled && cancelled()) return cancelledSession(std::move(session->folder));
    if (options.buildLaneLods) session->laneLods = buildLaneLods(read.events);
    if (cancelled && cancelled()) return cancelledSession(std::move(session->folder));
    session->jobs = splitJobs(read.folder.sources(), read.logs);
    return session;
}

Diagnosis diagnoseSession(const TraceSession& session, const CancelFn& cancelled)
{
    std::atomic<bool> stop{false};
    ParallelControl control;
    control.stop = &stop;
    if (cancelled)
        control.poll = [&] {
            if (cancelled()) stop = true;
        };
    return diagnose(session, control,
                    session.storedBreakdown ? &*session.storedBreakdown : nullptr);
}

SessionPtr loadSession(const QString& dir, const ProgressFn& progress, const CancelFn& cancelled,
                       const LoadOptions& options)
{
    std::shared_ptr<TraceSession> session = readSession(dir, progress, cancelled, options);
    if (session->cancelled) return session;
    Diagnosis diagnosis = diagnoseSession(*session, cancelled);
    if (diagnosis.interrupted) return cancelledSession(std::move(session->folder));
    static_cast<Diagnosis&>(*session) = std::move(diagnosis);
    return session;
}

namespace {

void loadInPromise(QPromise<LoadStage>& promise, const QString& dir, const ReadOptions& budgets)
{
    promise.setProgressRange(0, 1000);
    // Files being read (started, not finished), named in the progress text.
    std::map<int, std::pair<QString, std::pair<qint64, qint64>>> reading;
    LoadOptions options;
    options.traceBudget = budgets.traceBudget;
    options.logBudget = budgets.logBudget;
    options.dumpBudget = budgets.dumpBudget;
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
    const CancelFn cancelled = [&promise] { return promise.isCanceled(); };
    std::shared_ptr<TraceSession> session = readSession(dir, progress, cancelled, options);
    if (promise.isCanceled()) return;
    promise.addResult(LoadStage{session, {}});
    if (!session->folder.isValid()) return; // reported as failed, nothing to diagnose
    promise.setProgressValueAndText(1000, QStringLiteral("diagnosing"));
    auto diagnosis = std::make_shared<Diagnosis>(diagnoseSession(*session, cancelled));
    if (!promise.isCanceled() && !diagnosis->interrupted)
        promise.addResult(LoadStage{std::move(session), std::move(diagnosis)});
}

} // namespace

TraceLoader::TraceLoader(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<SessionPtr>();
    connect(&m_watcher, &QFutureWatcher<LoadStage>::progressValueChanged, this,
            [this](int value) { Q_EMIT progressChanged(value, m_watcher.progressText()); });
    connect(
        &m_watcher, &QFutureWatcher<LoadStage>::progressTextChanged, this,
        [this](const QString& text) { Q_EMIT progressChanged(m_watcher.progressValue(), text); });
    connect(&m_watcher, &QFutureWatcher<LoadStage>::resultReadyAt, this,
            &TraceLoader::onResultReady);
    connect(&m_watcher, &QFutureWatcher<LoadStage>::finished, this, &TraceLoader::onFinished);
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
    m_watcher.setFuture(QtConcurrent::run(loadInPromise, dir, m_options));
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

void TraceLoader::onResultReady(int index)
{
    if (index != 0 || m_watcher.future().isCanceled()) return;
    const std::shared_ptr<TraceSession> session = m_watcher.future().resultAt(0).session;
    if (session->folder.isValid()) Q_EMIT read(session);
}

void TraceLoader::onFinished()
{
    const QFuture<LoadStage> future = m_watcher.future();
    if (future.isCanceled()) {
        Q_EMIT canceled();
        return;
    }
    if (future.resultCount() == 0) {
        Q_EMIT failed(QStringLiteral("loading %1 produced no result").arg(m_dir));
        return;
    }
    const std::shared_ptr<TraceSession> session = future.resultAt(0).session;
    if (!session->folder.isValid()) {
        Q_EMIT failed(session->folder.error());
        return;
    }
    if (future.resultCount() < 2) {
        Q_EMIT failed(QStringLiteral("the diagnosis of %1 did not finish").arg(m_dir));
        return;
    }
    // The GUI thread is the only one that reads a session's diagnosis: set here, once.
    static_cast<Diagnosis&>(*session) = std::move(*future.resultAt(1).diagnosis);
    Q_EMIT loaded(session);
}

} // namespace rankscope
