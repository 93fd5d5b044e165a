#pragma once

#include "model/tracesession.h"

#include <QFutureWatcher>
#include <QObject>

namespace rankscope {

// What the loader's worker hands the GUI thread: first the read session (with its lane
// pyramids, undiagnosed), then its diagnosis, which the GUI thread moves into the session (the
// views read the session only there, so nothing reads a half-written diagnosis).
struct LoadStage {
    std::shared_ptr<TraceSession> session;
    std::shared_ptr<Diagnosis> diagnosis; // empty in the first stage
};

// Loads a trace folder on a worker thread in two stages: `read` as soon as the folder is read
// (the timeline can be shown), then `loaded` with the same session once diagnosed. Only the
// newest start() ever reports: setFuture() discards the pending signals of a superseded load,
// so its result is dropped. cancel() stops the reading or the diagnosis (both poll it).
class TraceLoader : public QObject {
    Q_OBJECT
public:
    explicit TraceLoader(QObject* parent = nullptr);
    ~TraceLoader() override;

    void start(const QString& dir);
    // The budgets of the loads started from now on (File > Load Limits); its progress and
    // given-trace members are the loader's own and ignored.
    void setReadOptions(const ReadOptions& options) { m_options = options; }
    void cancel();
    bool isRunning() const;

Q_SIGNALS:
    void progressChanged(int permille, const QString& text);
    // Reading is done; the session's diagnosis is still empty (`loaded` follows with it).
    void read(rankscope::SessionPtr session);
    void loaded(rankscope::SessionPtr session);
    void failed(const QString& reason);
    void canceled();

private:
    void onResultReady(int index);
    void onFinished();

    QFutureWatcher<LoadStage> m_watcher;
    QString m_dir;
    ReadOptions m_options;
};

} // namespace rankscope

Q_DECLARE_METATYPE(rankscope::SessionPtr)
