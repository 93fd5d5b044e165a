#pragma once

#include "model/analysis/analysiscontext.h"
#include "model/analysis/collectivematcher.h"

#include <map>
#include <vector>

namespace rankscope {

// How long a wait must be to count as a hang: it dwarfs the typical collective time (20 times),
// and one second is the floor so that scheduling noise in tiny runs never qualifies.
std::int64_t hangLengthNs(std::int64_t typicalNs);

// How far one rank got in one group (sequence numbers; -1 = none).
struct RankProgress {
    int rank = -1;
    std::int64_t lastIssued = -1;
    std::int64_t lastStarted = -1;
    std::int64_t lastCompleted = -1;
};

struct GroupProgress {
    std::string group;
    std::vector<RankProgress> ranks;
    std::int64_t wavefront = -1; // the furthest collective any member issued
};

// Participation gaps, op mismatches at the frontier, size/dtype/state mismatches, and
// collectives stuck on every rank: who did not arrive, who waits where, who deviates.
class HangDetector {
public:
    struct Result {
        std::vector<Finding> findings;
        std::vector<GroupProgress> progress;
    };
    static Result detect(const AnalysisContext& ctx, const std::vector<CollectiveGroup>& groups);
    // Every source's findings on the groups' collectives (the traces', the Flight Recorder's):
    // an error that blames only ranks which themselves issued another group's collective and
    // waited in it for a rank blamed there becomes a warning that says so (hangdetector.cpp).
    static void demoteWaitersElsewhere(const std::vector<CollectiveGroup>& groups,
                                       std::vector<Finding>& findings);
};

} // namespace rankscope
