#pragma once

#include "model/analysis/finding.h"
#include "model/store/eventstore.h"

#include <QHash>
#include <cstdint>
#include <vector>

namespace rankscope {

struct IdleGap {
    std::int64_t startNs = 0; // the rank's own clock
    std::int64_t endNs = 0;
};

// Where one rank's time went, over the span of the lanes measured. Categories are unions of
// intervals, so nested and concurrent events (several streams) count once; `overlapNs` is the
// part of communication hidden under computation. A rank with GPU lanes is measured on its
// device events only: compute = kernels other than communication, communication = NCCL / RCCL /
// HCCL kernels, memory = memcpy / memset / DMA, window = first start to last end of any of them,
// idle = window minus the union of all three (README.md, "GPU time breakdown").
struct RankTimeBreakdown {
    int rank = -1;
    // Lanes of no rank are measured per source file (each is its own process, never merged
    // into one "rank -1"): that file's Lane::sourceIndex; -1 for a rank's entry.
    int sourceIndex = -1;
    bool gpu = false; // GPU stream lanes measured; else CPU thread lanes (CPU-only trace)
    std::int64_t windowStartNs = 0;
    std::int64_t windowEndNs = 0;
    std::int64_t computeNs = 0;
    std::int64_t commNs = 0;
    std::int64_t memNs = 0; // memcpy / memset
    std::int64_t overlapNs = 0;
    std::int64_t idleNs = 0;          // nothing of the above running
    std::vector<IdleGap> largestGaps; // longest idle gaps, longest first

    std::int64_t windowNs() const { return windowEndNs - windowStartNs; }
    double idleFraction() const
    {
        return windowNs() > 0 ? double(idleNs) / double(windowNs()) : 0.0;
    }
};

// Per-rank compute / communication / memory / idle time, for the GUI's charts and the idle-GPU
// check.
class TimeBreakdown {
public:
    static constexpr std::size_t kMaxGaps = 10;
    static std::vector<RankTimeBreakdown> compute(const EventStore& store);
    // The same over the window [startNs, endNs) of the common clock, for every rank with
    // events: a rank's raw times plus offsetNs[rank] (0 when absent) are on that clock. Events
    // are clipped to the window, so the union of busy time plus idle is the window's length;
    // the window fields are in each rank's own clock. O(events in the window) per lane.
    static std::vector<RankTimeBreakdown> computeWindow(const EventStore& store,
                                                        std::int64_t startNs, std::int64_t endNs,
                                                        const QHash<int, qint64>& offsetNs);
    // A rank whose GPUs sit idle far more than the others' (starved by input, CPU work or a
    // peer), or every rank mostly idle.
    static std::vector<Finding> idleFindings(const std::vector<RankTimeBreakdown>& breakdown);
};

} // namespace rankscope
