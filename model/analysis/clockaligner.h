#pragma once

#include "model/analysis/collectivematcher.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace rankscope {

// Per-rank clock offsets: rank time - offset = reference time.
struct ClockAlignment {
    int referenceRank = -1;
    std::map<int, std::optional<std::int64_t>> offsetNs; // nullopt: could not be estimated
    std::map<int, int> samples;                          // completions the estimate rests on
    std::map<int, std::string> notes;                    // why an offset is missing

    std::int64_t offsetOf(int rank) const; // 0 when unknown
    std::int64_t toReference(int rank, std::int64_t tNs) const { return tNs - offsetOf(rank); }
};

// A blocking collective completes at nearly the same moment on every member, so the median
// difference of completion times between two ranks is their clock offset; the median ignores
// the few collectives where one rank was descheduled at the end.
class ClockAligner {
public:
    // Reads the groups' completion columns (CollectiveGroup::completedEndNs).
    static ClockAlignment align(const std::vector<CollectiveGroup>& groups,
                                const std::vector<int>& ranks);
};

} // namespace rankscope
