#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QStringList>
#include <memory>

namespace rankscope {

// Imports a file or folder into an issue database off the calling thread, on its own
// IssueCorpus connection: progress while the reports are classified, and Cancel, which rolls the
// import back. One import at a time.
class IssueImporter : public QObject {
    Q_OBJECT
public:
    explicit IssueImporter(QObject* parent = nullptr);
    ~IssueImporter() override;

    // False (and nothing starts) while an import is running.
    bool start(const QString& databasePath, const QString& sourcePath);
    void cancel();
    bool isRunning() const;
    // Blocks until the running import ends (its signal is still delivered by the event loop).
    void waitForFinished();

Q_SIGNALS:
    void progressChanged(int done, int total);
    // `skipped`: the files of a folder that held no issue, "file: reason" each.
    void finished(int imported, const QStringList& skipped);
    void failed(const QString& reason);
    void canceled();

private:
    struct Outcome;
    void onFinished();

    QFutureWatcher<void> m_watcher;
    std::shared_ptr<Outcome> m_outcome;
};

} // namespace rankscope
