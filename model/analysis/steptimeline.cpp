#include "model/analysis/steptimeline.h"

#include "model/store/parallelfor.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace rankscope {

namespace {

// N of "ProfilerStep#N", -1 when `name` is not a step annotation.
int stepNumber(std::string_view name)
{
    constexpr std::string_view prefix = "ProfilerStep#";
    if (name.substr(0, prefix.size()) != prefix) return -1;
    int n = -1;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    const auto [ptr, ec] = std::from_chars(first, last, n);
    return ec == std::errc() && ptr == last ? n : -1;
}

// Communication time inside each step: the union of the rank's collective executions
// (`spans`, the rank's (start, end) pairs of CommKernel events in any order).
void settle(std::vector<std::pair<std::int64_t, std::int64_t>>& spans, std::vector<StepSpan>& steps)
{
    if (!std::is_sorted(spans.begin(), spans.end())) std::sort(spans.begin(), spans.end());
    for (StepSpan& s : steps) {
        std::int64_t covered = 0, reach = s.startNs;
        auto from = std::lower_bound(spans.begin(), spans.end(),
                                     std::make_pair(s.startNs, std::int64_t(0)));
        if (from != spans.begin()) --from;
        for (auto p = from; p != spans.end() && p->first < s.endNs; ++p) {
            const std::int64_t a = std::max(std::max(p->first, reach), s.startNs);
            const std::int64_t b = std::min(p->second, s.endNs);
            if (b > a) covered += b - a;
            reach = std::max(reach, b);
        }
        s.commNs = covered;
    }
}

} // namespace

StepTimeline StepTimeline::build(const EventStore& store)
{
    StepTimeline t;
    std::map<int, std::vector<const Lane*>> lanesOf;
    // A lane of no rank (a trace that states none, or another job's, set aside) is no rank's
    // steps: lumped together they would read as one more rank's.
    for (const Lane& lane : store.lanes)
        if (lane.rank >= 0) lanesOf[lane.rank].push_back(&lane);
    std::vector<std::pair<const std::vector<const Lane*>*, std::vector<StepSpan>*>> work;
    for (const auto& [rank, lanes] : lanesOf)
        if (std::any_of(lanes.begin(), lanes.end(),
                        [](const Lane* l) { return l->kind == LaneKind::CpuThread; }))
            work.emplace_back(&lanes, &t.m_steps[rank]);
    // Ranks in parallel, each with its worker's cache of step numbers per string and its buffer
    // of communication spans.
    struct Scratch {
        std::vector<int> numberOf;
        std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    };
    std::vector<Scratch> scratchOf(parallelWorkers(work.size()));
    parallelFor(work.size(), [&](std::size_t item, std::size_t worker) {
        auto& [number, spans] = scratchOf[worker];
        number.resize(store.strings.size(), -2); // -2: not looked at yet
        spans.clear();
        auto& steps = *work[item].second;
        for (const Lane* lane : *work[item].first) {
            // The collectives' executions are the lanes' CommKernel events (NCCL kernels, gloo
            // worker spans): reading them here, in the lanes' compact columns, costs less than
            // a walk over the rank's collective records, which a 1,024-rank job holds 10 M of.
            for (std::size_t i = 0; i < lane->size(); ++i)
                if (lane->category[i] == EventCategory::CommKernel &&
                    lane->endNs[i] > lane->startNs[i])
                    spans.emplace_back(lane->startNs[i], lane->endNs[i]);
            if (lane->kind != LaneKind::CpuThread) continue;
            for (std::size_t i = 0; i < lane->size(); ++i) {
                const StringId id = lane->nameId[i];
                if (std::size_t(id) >= number.size()) continue;
                if (number[std::size_t(id)] == -2)
                    number[std::size_t(id)] = stepNumber(store.strings.view(id));
                const int n = number[std::size_t(id)];
                if (n < 0) continue;
                if (!steps.empty() && steps.back().startNs <= lane->startNs[i] &&
                    lane->endNs[i] <= steps.back().endNs)
                    continue;
                steps.push_back({n, lane->startNs[i], lane->endNs[i], 0});
            }
        }
        std::sort(steps.begin(), steps.end(),
                  [](const StepSpan& a, const StepSpan& b) { return a.startNs < b.startNs; });
        settle(spans, steps);
    });
    return t;
}

const std::vector<StepSpan>& StepTimeline::stepsOf(int rank) const
{
    static const std::vector<StepSpan> none;
    const auto it = m_steps.find(rank);
    return it == m_steps.end() ? none : it->second;
}

int StepTimeline::stepAt(int rank, std::int64_t tNs) const
{
    const int index = indexAt(rank, tNs);
    return index < 0 ? -1 : stepsOf(rank)[std::size_t(index)].number;
}

int StepTimeline::indexAt(int rank, std::int64_t tNs) const
{
    const auto& steps = stepsOf(rank);
    auto it = std::upper_bound(steps.begin(), steps.end(), tNs,
                               [](std::int64_t t, const StepSpan& s) { return t < s.startNs; });
    if (it == steps.begin()) return -1;
    --it;
    return tNs <= it->endNs ? int(it - steps.begin()) : -1;
}

std::string StepTimeline::label(int rank, int index) const
{
    const auto& steps = stepsOf(rank);
    if (index < 0 || std::size_t(index) >= steps.size()) return {};
    const int n = steps[std::size_t(index)].number;
    int nth = 0, of = 0;
    for (std::size_t i = 0; i < steps.size(); ++i)
        if (steps[i].number == n) {
            ++of;
            if (int(i) <= index) ++nth;
        }
    std::string text = "ProfilerStep#" + std::to_string(n);
    if (of == 1) return text;
    const char* suffix = nth % 100 / 10 == 1 ? "th"
                         : nth % 10 == 1     ? "st"
                         : nth % 10 == 2     ? "nd"
                         : nth % 10 == 3     ? "rd"
                                             : "th";
    return text + " (" + std::to_string(nth) + suffix + " of " + std::to_string(of) +
           " so labelled)";
}

} // namespace rankscope
