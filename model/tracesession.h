#pragma once

#include "model/analysis/analyzer.h"
#include "model/analysis/autocheckevaluator.h"
#include "model/store/eventstore.h"
#include "model/store/lanelod.h"
#include "model/trace/elasticerrorreader.h"
#include "model/trace/flightrecorderreader.h"
#include "model/trace/kinetoreader.h"
#include "model/trace/logreader.h"
#include "model/trace/ranklog.h"
#include "model/trace/tracefolder.h"

#include <memory>

namespace rankscope {

// Everything loaded from one trace folder. Built once by TraceLoader, then shared read-only
// between the analysis, the CLI and the GUI.
struct TraceSession {
    TraceFolder folder;
    EventStore events;
    std::vector<RankLog> logs;             // per-rank text streams (launcher logs split by tag)
    std::vector<FlightRecorderDump> dumps; // their entries are also in events.collectives
    std::vector<ElasticError> errors;      // error files and the launcher's failure box
    QStringList warnings;                  // folder-level problems (folder.warnings() and more)
    AnalysisResult analysis;               // the cross-rank checks, run once at the end of the load
    std::vector<AutoCheckResult> autoChecks; // the walkthroughs' auto-checks, after the analysis
    std::vector<LaneLod> laneLods; // same index as events.lanes; built at the end of the load
    // The load was cancelled: nothing of any source is kept (folder may list only part of it).
    bool cancelled = false;
};

using SessionPtr = std::shared_ptr<const TraceSession>;

// Builds a session synchronously; the CLI and TraceLoader's worker both call this.
// `progress(done, total)` is in bytes; `cancelled` is polled and ends the load early (nullptr).
using ProgressFn = std::function<void(qint64 done, qint64 total)>;
using CancelFn = std::function<bool()>;
// Per file, from the thread that called loadSession: bytes of `source` read so far of `total`.
using FileProgressFn =
    std::function<void(int sourceIndex, const QString& relativePath, qint64 done, qint64 total)>;
struct LoadOptions {
    bool buildLaneLods = true;        // the timeline's pyramids; the headless CLI draws no timeline
    KinetoReader::Budget traceBudget; // per Kineto source
    FileProgressFn fileProgress;
    LogReader::Budget logBudget; // what the logs of this load may cost
};
SessionPtr loadSession(const QString& dir, const ProgressFn& progress = {},
                       const CancelFn& cancelled = {}, const LoadOptions& options = {});

} // namespace rankscope
