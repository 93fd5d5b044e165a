#pragma once

#include "model/analysis/sessionanalysis.h"
#include "model/digest/digestdetail.h"
#include "model/store/lanelod.h"
#include "model/trace/traceread.h"

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace rankscope {

// One loaded folder as the CLI and the GUI share it: what was read, its diagnosis
// (diagnose() of that read) and the timeline's pyramids. Built once by loadSession, then
// read-only; TraceLoader sets the diagnosis of a read session on the GUI thread, once.
struct TraceSession : TraceRead, Diagnosis {
    std::vector<LaneLod> laneLods; // same index as events.lanes; built at the end of the load
    // The read's jobs, split as diagnose() splits them (splitJobs()): worked out once at the end
    // of the load, off the GUI thread, for the views that show one job's files and lanes (the
    // Overview's rank tables, the status bar, the timeline) before and after the diagnosis.
    JobSplit jobs;
    // A digest's lanes are reduced: its stored breakdown (of the full lanes) replaces the one
    // diagnose() would compute from them. Empty for a folder.
    std::optional<std::vector<RankTimeBreakdown>> storedBreakdown;
    // A digest's full-detail windows and, per rank, how its lanes were reduced (Digest::open).
    std::vector<Digest::Window> digestWindows;
    std::map<int, Digest::Reduction> digestReductions;
};

using SessionPtr = std::shared_ptr<const TraceSession>;

struct LoadOptions : ReadOptions {
    bool buildLaneLods = true; // the timeline's pyramids; the headless CLI draws no timeline
};
// readFolder, then the lane pyramids: a session not diagnosed yet. A cancelled read is returned
// with nothing but the folder's listing, marked cancelled.
std::shared_ptr<TraceSession> readSession(const QString& dir, const ProgressFn& progress = {},
                                          const CancelFn& cancelled = {},
                                          const LoadOptions& options = {});
// diagnose() polling `cancelled`; an interrupted diagnosis when it says stop.
Diagnosis diagnoseSession(const TraceSession& session, const CancelFn& cancelled = {});
// readSession, then its diagnosis; what the CLI and the tests call. A cancelled load is returned
// undiagnosed, with nothing but the folder's listing, marked cancelled.
SessionPtr loadSession(const QString& dir, const ProgressFn& progress = {},
                       const CancelFn& cancelled = {}, const LoadOptions& options = {});

} // namespace rankscope
