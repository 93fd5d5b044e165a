#pragma once

#include "model/analysis/jobsplit.h"
#include "model/trace/traceread.h"

#include <vector>

namespace rankscope {

// Which job each lane belongs to when a folder mixes the traces of several jobs (JobSplit, the
// split the diagnosis makes: model/analysis/jobsplit.h), so the timeline and the rank overview
// can tell one job's rank 0 from another's and show one job at a time on its own time scale.
// Jobs are numbered as the MixedJobs finding numbers them ("job 1" the earliest).
struct LaneJobs {
    // Per lane of the store: the index of its job in the split, -1 when its source is in none
    // (a folder of one job, or a source that states too little to be placed).
    std::vector<int> laneJob;
    std::vector<TraceJob> jobs; // the split's jobs; empty when not mixed
    int jobCount = 0;
    int analysed = -1; // the job the cross-rank checks cover, -1 when not mixed
    // The job the timeline shows, -1 (as of() leaves it) for every job.
    int shown = -1;

    bool mixed() const { return jobCount > 1; }
    int jobOfLane(int lane) const
    {
        return lane >= 0 && std::size_t(lane) < laneJob.size() ? laneJob[std::size_t(lane)] : -1;
    }
    // The lane is drawn: every lane unless one job is shown and the lane belongs to another (a
    // lane of no job, such as a log's, stays with every job).
    bool isShown(int lane) const
    {
        const int job = jobOfLane(lane);
        return !mixed() || shown < 0 || job < 0 || job == shown;
    }

    // The rank overview's key of a rank of a job: the rank itself in the analysed job (whose
    // ranks the findings name) and where the folder does not mix jobs, else the rank moved past
    // every real rank number by the job, so that two jobs' rank 0 are two rows.
    static constexpr int kJobKeyStride = 1 << 20;
    int overviewKey(int job, int rank) const
    {
        return !mixed() || job < 0 || job == analysed ? rank : rank + (job + 1) * kJobKeyStride;
    }
    static int rankOfKey(int key) { return key % kJobKeyStride; }

    // `split`: the read's (TraceSession::jobs).
    static LaneJobs of(const TraceRead& read, const JobSplit& split);
};

} // namespace rankscope
