#pragma once

#include "model/analysis/clockaligner.h"
#include "model/analysis/finding.h"
#include "model/analysis/steptimeline.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace rankscope {

// What every check needs besides the matched groups: the store, where its lanes came from,
// the clock offsets, the steps, and each rank's time span.
struct AnalysisContext {
    AnalysisContext(const EventStore& store, std::vector<std::string> sourcePaths);

    const EventStore& store;
    std::vector<std::string> sourcePaths; // by Lane::sourceIndex
    ClockAlignment clock;
    StepTimeline steps;
    std::map<int, std::int64_t> rankStartNs; // own clock
    std::map<int, std::int64_t> rankEndNs;
    // Ranks whose trace was cut short (a truncated file, or one read up to a budget): their
    // records end at the cut, which says nothing of where the rank itself stopped.
    std::set<int> cutTraces;

    std::string pathOfLane(int laneIndex) const;
    // A trace event as evidence: where it is, when, and what it shows.
    Evidence evidenceOf(std::int32_t recordIndex, const std::string& what) const;
    // How long a collective kept its rank: execution when it finished, else until the rank's
    // trace ends (the rank was still inside it).
    std::int64_t heldNs(const CollectiveRecord& c) const;
    std::int64_t beginNs(const CollectiveRecord& c) const;
    std::int64_t finishNs(const CollectiveRecord& c) const;
    // The trace's own number (N of ProfilerStep#N) of a rank's step, given its index in time
    // order (CollectiveRecord::step); -1 when the rank has no such step. The profiler can
    // number two steps alike (PyTorch 1.13 names the first two #0), so index and N differ.
    int stepNumber(int rank, int stepIndex) const;
    // Findings count steps in time order while they are made; this gives them the trace's own
    // step numbers, and findings with a step but no time range (a rank's log said it failed)
    // that step's span on their ranks, so every finding a trace can place can be shown on it.
    void placeOnTraces(std::vector<Finding>& findings) const;
};

// A duration in a finding's text, by the views' formatter (ZoomState::formatNs) at a precision
// fixed per unit: hundredths of a second, tenths of a millisecond, whole microseconds.
std::string formatDurationNs(std::int64_t ns);
std::string formatRanks(const std::vector<int>& ranks);

// Closed ranges of ranks, e.g. {2, 1999999999}: a world size read from a file can be huge, so
// the ranks it implies are never listed one by one.
using RankRange = std::pair<int, int>;
// The ranks of [0, worldSize) and of `alsoExpected` (sorted) that `present` (sorted) lacks.
std::vector<RankRange> absentRankRanges(const std::vector<int>& present, int worldSize,
                                        const std::vector<int>& alsoExpected = {});
// "rank 3", "ranks 2–1999999999", "ranks 1, 3–5" (a few ranges named, the rest counted).
std::string formatRankRanges(const std::vector<RankRange>& ranges);
std::int64_t rankCount(const std::vector<RankRange>& ranges);

} // namespace rankscope
