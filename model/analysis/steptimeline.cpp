#include "model/analysis/steptimeline.h"

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

} // namespace

StepTimeline StepTimeline::build(const EventStore& store)
{
    StepTimeline t;
    std::vector<int> numberOf(store.strings.size(), -2); // -2: not looked at yet
    for (const Lane& lane : store.lanes) {
        if (lane.kind != LaneKind::CpuThread) continue;
        auto& steps = t.m_steps[lane.rank];
        for (std::size_t i = 0; i < lane.size(); ++i) {
            const StringId id = lane.nameId[i];
            if (std::size_t(id) >= numberOf.size()) continue;
            if (numberOf[std::size_t(id)] == -2)
                numberOf[std::size_t(id)] = stepNumber(store.strings.view(id));
            const int n = numberOf[std::size_t(id)];
            if (n < 0) continue;
            if (!steps.empty() && steps.back().startNs <= lane.startNs[i] &&
                lane.endNs[i] <= steps.back().endNs)
                continue;
            steps.push_back({n, lane.startNs[i], lane.endNs[i], 0});
        }
    }
    for (auto& [rank, steps] : t.m_steps)
        std::sort(steps.begin(), steps.end(),
                  [](const StepSpan& a, const StepSpan& b) { return a.startNs < b.startNs; });
    // Communication time inside each step: the union of the rank's collective executions.
    // A rank's records are a few runs of the store (one per source, usually exactly one), so
    // one pass gathers each run's spans and settles its rank when the run ends; a rank met
    // again in a later run is settled once more at the end from all its runs.
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    const auto settle = [&](std::vector<StepSpan>& steps) {
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
    };
    // Appends the spans of the records from `from` on while they are `rank`'s (up to `to`);
    // returns where that run ends.
    const auto gather = [&](std::size_t from, std::size_t to, int rank) {
        std::size_t i = from;
        for (; i < to && store.collectives[i].rank == rank; ++i) {
            const CollectiveRecord& c = store.collectives[i];
            if (c.execStartNs < 0 || c.execEndNs <= c.execStartNs) continue;
            spans.emplace_back(c.execStartNs, c.execEndNs);
        }
        return i;
    };
    std::map<int, std::vector<std::pair<std::size_t, std::size_t>>> runsOf;
    for (std::size_t i = 0; i < store.collectives.size();) {
        const int rank = store.collectives[i].rank;
        spans.clear();
        const std::size_t j = gather(i, store.collectives.size(), rank);
        auto& runs = runsOf[rank];
        runs.emplace_back(i, j);
        const auto it = t.m_steps.find(rank);
        if (runs.size() == 1 && it != t.m_steps.end()) settle(it->second);
        i = j;
    }
    for (const auto& [rank, runs] : runsOf) {
        const auto it = t.m_steps.find(rank);
        if (runs.size() < 2 || it == t.m_steps.end()) continue;
        spans.clear();
        for (const auto& [from, to] : runs)
            gather(from, to, rank);
        settle(it->second);
    }
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
    const auto& steps = stepsOf(rank);
    auto it = std::upper_bound(steps.begin(), steps.end(), tNs,
                               [](std::int64_t t, const StepSpan& s) { return t < s.startNs; });
    if (it == steps.begin()) return -1;
    --it;
    return tNs <= it->endNs ? it->number : -1;
}

} // namespace rankscope
