#pragma once

#include "model/store/eventstore.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rankscope {

// One ProfilerStep#N span of a rank, and how much of it the rank spent outside collectives.
struct StepSpan {
    int number = -1; // N of ProfilerStep#N
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    std::int64_t commNs =
        0; // union of the rank's collective executions (CommKernel events) in the span

    std::int64_t durationNs() const { return endNs - startNs; }
    std::int64_t nonCommNs() const { return durationNs() - commNs; }
};

// The training steps per rank, from ProfilerStep#N annotations (outermost ones only; the
// profiler nests a copy on some builds).
class StepTimeline {
public:
    static StepTimeline build(const EventStore& store);

    const std::vector<StepSpan>& stepsOf(int rank) const;
    const std::map<int, std::vector<StepSpan>>& all() const { return m_steps; }
    // The step whose span contains `tNs` on `rank` (its own clock), -1 when none.
    int stepAt(int rank, std::int64_t tNs) const;
    // Its index in the rank's steps (time order), -1 when none.
    int indexAt(int rank, std::int64_t tNs) const;
    // The rank's step at `index` as a text names it: "ProfilerStep#N", and where the rank's trace
    // labels more than one span so (PyTorch 1.13 labels the first two #0), which of them:
    // "ProfilerStep#0 (2nd of 2 so labelled)". "" for no such step.
    std::string label(int rank, int index) const;

private:
    std::map<int, std::vector<StepSpan>> m_steps;
};

} // namespace rankscope
