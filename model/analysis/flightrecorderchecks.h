#pragma once

#include "model/analysis/finding.h"
#include "model/analysis/hangdetector.h"
#include "model/trace/flightrecorderreader.h"

#include <string>
#include <vector>

namespace rankscope {

// The checks only Flight Recorder dumps can feed, on top of the matched CollectiveRecords that
// the dumps' entries also become (send/recv among them, paired by the collective matcher like a
// trace's): dump versions, entries retired without completing (timed out on that rank), the
// ops of coalescing blocks one by one, and pg_status, the per-group
// last enqueued / started / completed sequence numbers each rank's watchdog saw, which locate the
// hang wavefront even when the ring buffer no longer holds the entries.
class FlightRecorderChecks {
public:
    // The dump format's major version this reader understands (torch writes "2.x").
    static constexpr int kKnownMajorVersion = 2;

    struct Result {
        std::vector<Finding> findings;
        // From pg_status, one per process group named by the dumps; empty without pg_status.
        std::vector<GroupProgress> progress;
    };
    // `sourcePaths[i]` is the folder-relative path of source i (FlightRecorderDump::sourceIndex).
    static Result check(const std::vector<FlightRecorderDump>& dumps,
                        const std::vector<std::string>& sourcePaths);
};

} // namespace rankscope
