#pragma once

#include "model/tracesession.h"

#include <QFutureWatcher>
#include <QObject>

namespace rankscope {

// Loads a trace folder on a worker thread. Only the newest start() ever reports: setFuture()
// discards the pending signals of a superseded load, so its result is dropped.
class TraceLoader : public QObject {
    Q_OBJECT
public:
    explicit TraceLoader(QObject* parent = nullptr);
    ~TraceLoader() override;

    void start(const QString& dir);
    void cancel();
    bool isRunning() const;

Q_SIGNALS:
    void progressChanged(int permille, const QString& text);
    void loaded(rankscope::SessionPtr session);
    void failed(const QString& reason);
    void canceled();

private:
    void onFinished();

    QFutureWatcher<SessionPtr> m_watcher;
    QString m_dir;
};

} // namespace rankscope

Q_DECLARE_METATYPE(rankscope::SessionPtr)
