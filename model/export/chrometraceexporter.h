#pragma once

#include "model/store/eventstore.h"

#include <QHash>
#include <QString>

class QIODevice;

namespace rankscope {

// Writes all ranks of a store as one Chrome-trace JSON (the "JSON Object Format" Perfetto and
// chrome://tracing read): one process per rank (pid = rank), one thread per lane, complete
// ("X") events with the rank's clock offset added, the collective's group and sequence in
// the args of the events that execute a collective, and the store's flows as "s"/"f" pairs.
class ChromeTraceExporter {
public:
    // offsetNs[rank] is added to that rank's timestamps; ranks without an entry keep theirs.
    explicit ChromeTraceExporter(const EventStore& store, QHash<int, qint64> offsetNs = {});

    bool write(QIODevice& out);
    bool writeFile(const QString& path);
    QString errorString() const { return m_error; }

private:
    const EventStore& m_store;
    QHash<int, qint64> m_offsetNs;
    QString m_error;
};

} // namespace rankscope
