#include "model/kb/issueimporter.h"

#include "model/kb/issuecorpus.h"

#include <QPromise>
#include <QtConcurrent>

namespace rankscope {

struct IssueImporter::Outcome {
    int imported = -1;
    bool cancelled = false;
    QString error;
    QStringList skipped;
};

IssueImporter::IssueImporter(QObject* parent) : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<void>::progressValueChanged, this,
            [this](int value) { Q_EMIT progressChanged(value, m_watcher.progressMaximum()); });
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &IssueImporter::onFinished);
}

IssueImporter::~IssueImporter()
{
    cancel();
    m_watcher.waitForFinished();
}

bool IssueImporter::start(const QString& databasePath, const QString& sourcePath)
{
    if (isRunning()) return false;
    auto outcome = std::make_shared<Outcome>();
    m_outcome = outcome;
    m_watcher.setFuture(
        QtConcurrent::run([databasePath, sourcePath, outcome](QPromise<void>& promise) {
            IssueCorpus corpus;
            if (!corpus.open(databasePath)) {
                outcome->error = corpus.error();
                return;
            }
            outcome->imported = corpus.importPath(sourcePath, [&](qsizetype done, qsizetype total) {
                if (promise.isCanceled()) return false;
                if (total > 0) {
                    promise.setProgressRange(0, int(total));
                    promise.setProgressValue(int(done));
                }
                return true;
            });
            outcome->cancelled = outcome->imported < 0 && promise.isCanceled();
            if (outcome->imported < 0) outcome->error = corpus.error();
            outcome->skipped = corpus.skipped();
        }));
    return true;
}

void IssueImporter::cancel()
{
    if (isRunning()) m_watcher.cancel();
}

bool IssueImporter::isRunning() const
{
    return m_watcher.isRunning();
}

void IssueImporter::waitForFinished()
{
    m_watcher.waitForFinished();
}

void IssueImporter::onFinished()
{
    const std::shared_ptr<Outcome> outcome = std::exchange(m_outcome, {});
    if (!outcome) return;
    // The outcome, not the future's state, says what happened: a cancel that came after the
    // commit did not undo the import.
    // A cancel before the pool ran the task leaves the outcome untouched.
    if (outcome->cancelled || (outcome->imported < 0 && m_watcher.future().isCanceled()))
        Q_EMIT canceled();
    else if (outcome->imported < 0)
        Q_EMIT failed(outcome->error);
    else
        Q_EMIT finished(outcome->imported, outcome->skipped);
}

} // namespace rankscope
