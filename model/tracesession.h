#pragma once

#include "model/store/eventstore.h"
#include "model/trace/tracefolder.h"

#include <memory>

namespace rankscope {

// Everything loaded from one trace folder. Built once by TraceLoader, then shared read-only
// between the analysis, the CLI and the GUI.
struct TraceSession {
    TraceFolder folder;
    EventStore events;
    // What reading each source gave, parallel to folder.sources() (discovery's SourceFile is
    // const afterwards). `read` is false for a source no reader has looked at.
    struct SourceReadResult {
        bool read = false;
        SourceStatus status = SourceStatus::Ok;
        QString message;
        qint64 events = 0;
        qint64 collectives = 0;
    };
    std::vector<SourceReadResult> reads;

    // `source` with the reader's status and message when a reader looked at it.
    SourceFile withReadResult(const SourceFile& source) const;
};

using SessionPtr = std::shared_ptr<const TraceSession>;

// Builds a session synchronously; the CLI and TraceLoader's worker both call this.
// `progress(done, total)` is in bytes; `cancelled` is polled and ends the load early (nullptr).
using ProgressFn = std::function<void(qint64 done, qint64 total)>;
using CancelFn = std::function<bool()>;
SessionPtr loadSession(const QString& dir, const ProgressFn& progress = {},
                       const CancelFn& cancelled = {});

} // namespace rankscope
