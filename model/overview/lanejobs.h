#pragma once

#include "model/trace/traceread.h"

#include <vector>

namespace rankscope {

// Which job each lane belongs to when a folder mixes the traces of several jobs (JobSplit, the
// split the diagnosis makes: model/analysis/jobsplit.h), so the timeline and the rank overview
// can tell one job's rank 0 from another's. Jobs are numbered as the MixedJobs finding numbers
// them ("job 1" the earliest).
struct LaneJobs {
    // Per lane of the store: the index of its job in the split, -1 when its source is in none
    // (a folder of one job, or a source that states too little to be placed).
    std::vector<int> laneJob;
    int jobCount = 0;
    int analysed = -1; // the job the cross-rank checks cover, -1 when not mixed

    bool mixed() const { return jobCount > 1; }
    int jobOfLane(int lane) const
    {
        return lane >= 0 && std::size_t(lane) < laneJob.size() ? laneJob[std::size_t(lane)] : -1;
    }

    static LaneJobs of(const TraceRead& read);
};

} // namespace rankscope
