#pragma once

#include "model/analysis/sessionanalysis.h"
#include "model/store/lanelod.h"
#include "model/trace/traceread.h"

#include <memory>

namespace rankscope {

// One loaded folder as the CLI and the GUI share it: what was read, its diagnosis
// (diagnose() of that read) and the timeline's pyramids. Built once by loadSession, then
// read-only.
struct TraceSession : TraceRead, Diagnosis {
    std::vector<LaneLod> laneLods; // same index as events.lanes; built at the end of the load
};

using SessionPtr = std::shared_ptr<const TraceSession>;

struct LoadOptions : ReadOptions {
    bool buildLaneLods = true; // the timeline's pyramids; the headless CLI draws no timeline
};
// readFolder, then diagnose, then the lane pyramids; the CLI and TraceLoader's worker both call
// this. A cancelled read is returned undiagnosed.
SessionPtr loadSession(const QString& dir, const ProgressFn& progress = {},
                       const CancelFn& cancelled = {}, const LoadOptions& options = {});

} // namespace rankscope
