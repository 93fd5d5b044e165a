#pragma once

#include "model/store/eventstore.h"

#include <QHash>
#include <QString>

class QIODevice;

namespace rankscope {

// Writes all ranks of a store as one Chrome-trace JSON (the "JSON Object Format" Perfetto and
// chrome://tracing read): one process per rank (pid = rank + 1, named "Rank r"), one thread per
// lane (tid = lane index + 1), complete
// ("X") events with the rank's clock offset added, the collective's group and sequence in
// the args of the events that execute a collective, and the store's flows as "s"/"f" pairs.
// When the aligned times start below zero, all are shifted by shiftNs() so that none is
// negative (otherData.rankscope_shift_ns says by how much).
class ChromeTraceExporter {
public:
    // offsetNs[rank] is added to that rank's timestamps; ranks without an entry keep theirs.
    explicit ChromeTraceExporter(const EventStore& store, QHash<int, qint64> offsetNs = {});

    bool write(QIODevice& out);
    bool writeFile(const QString& path);
    QString errorString() const { return m_error; }
    std::int64_t shiftNs() const { return m_shiftNs; } // of the last write
    static std::int64_t pidOf(int rank) { return std::int64_t(rank) + 1; }

private:
    const EventStore& m_store;
    QHash<int, qint64> m_offsetNs;
    QString m_error;
    std::int64_t m_shiftNs = 0;

    std::int64_t offsetOf(int rank) const;
};

} // namespace rankscope
