#include "model/overview/lanejobs.h"

namespace rankscope {

LaneJobs LaneJobs::of(const TraceRead& read, const JobSplit& split)
{
    LaneJobs out;
    out.laneJob.assign(read.events.lanes.size(), -1);
    if (!split.mixed()) return out;
    out.jobCount = int(split.jobs.size());
    out.analysed = split.analysed;
    out.jobs = split.jobs;
    std::vector<int> jobOfSource(std::size_t(read.folder.sources().size()), -1);
    for (int j = 0; j < out.jobCount; ++j)
        for (const int source : split.jobs[std::size_t(j)].sources)
            jobOfSource[std::size_t(source)] = j;
    for (std::size_t l = 0; l < read.events.lanes.size(); ++l) {
        const int source = read.events.lanes[l].sourceIndex;
        if (source >= 0 && std::size_t(source) < jobOfSource.size())
            out.laneJob[l] = jobOfSource[std::size_t(source)];
    }
    return out;
}

} // namespace rankscope
