#pragma once

#include "model/analysis/analysiscontext.h"
#include "model/analysis/collectivematcher.h"

#include <map>
#include <vector>

namespace rankscope {

// Arrival statistics of one rank over the matched collectives.
struct RankArrival {
    int rank = -1;
    int lastCount = 0;   // collectives this rank arrived at last
    int samples = 0;     // collectives with at least two arrivals known
    double pValue = 1.0; // P(arriving last at least lastCount times) if arrival were random
    std::int64_t meanDelayNs = 0;      // mean lead over the next-latest rank when it was last
    std::int64_t medianNonCommNs = -1; // per-step time spent outside collectives
    std::vector<int> steps;            // steps where it was last by a material margin
};

// Who the others wait for: per collective, the rank whose execution starts last (after clock
// alignment); a rank that is last far more often than chance, by a margin that matters
// against the step time, is a straggler.
class StragglerDetector {
public:
    struct Result {
        std::vector<Finding> findings;
        std::map<int, RankArrival> arrivals;
    };
    static Result detect(const AnalysisContext& ctx, const std::vector<CollectiveGroup>& groups);
};

} // namespace rankscope
