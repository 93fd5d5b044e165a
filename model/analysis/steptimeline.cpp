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
// (`spans`, the rank's (exec start, exec end) pairs in any order).
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

struct RecordRun {
    int rank;
    std::size_t begin, end;
};

// The runs of consecutive records of one rank (a source holds one rank's records together, so
// a rank has about one run per source), found over slices of the store in parallel.
std::vector<RecordRun> rankRuns(const std::vector<CollectiveRecord>& recs)
{
    constexpr std::size_t kRecordsPerSlice = 1 << 16;
    const std::size_t slices = (recs.size() + kRecordsPerSlice - 1) / kRecordsPerSlice;
    std::vector<std::vector<RecordRun>> runsOfSlice(slices);
    parallelFor(slices, [&](std::size_t slice, std::size_t) {
        const std::size_t end = std::min(recs.size(), (slice + 1) * kRecordsPerSlice);
        auto& runs = runsOfSlice[slice];
        for (std::size_t i = slice * kRecordsPerSlice; i < end; ++i) {
            if (runs.empty() || runs.back().rank != recs[i].rank)
                runs.push_back({recs[i].rank, i, i + 1});
            else
                runs.back().end = i + 1;
        }
    });
    std::vector<RecordRun> runs;
    for (const auto& part : runsOfSlice)
        for (const RecordRun& run : part) {
            if (!runs.empty() && runs.back().rank == run.rank && runs.back().end == run.begin)
                runs.back().end = run.end;
            else
                runs.push_back(run);
        }
    return runs;
}

} // namespace

StepTimeline StepTimeline::build(const EventStore& store)
{
    StepTimeline t;
    std::map<int, std::vector<const Lane*>> cpuLanesOf;
    for (const Lane& lane : store.lanes)
        if (lane.kind == LaneKind::CpuThread) cpuLanesOf[lane.rank].push_back(&lane);
    std::vector<std::pair<const std::vector<const Lane*>*, std::vector<StepSpan>*>> work;
    for (const auto& [rank, lanes] : cpuLanesOf)
        work.emplace_back(&lanes, &t.m_steps[rank]);
    // Ranks in parallel, each with its worker's cache of step numbers per string.
    std::vector<std::vector<int>> numberOf(parallelWorkers(work.size()));
    parallelFor(work.size(), [&](std::size_t item, std::size_t worker) {
        auto& number = numberOf[worker];
        number.resize(store.strings.size(), -2); // -2: not looked at yet
        auto& steps = *work[item].second;
        for (const Lane* lane : *work[item].first)
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
        std::sort(steps.begin(), steps.end(),
                  [](const StepSpan& a, const StepSpan& b) { return a.startNs < b.startNs; });
    });

    std::map<int, std::vector<RecordRun>> runsOf;
    for (const RecordRun& run : rankRuns(store.collectives))
        if (t.m_steps.count(run.rank)) runsOf[run.rank].push_back(run);
    std::vector<std::pair<const std::vector<RecordRun>*, std::vector<StepSpan>*>> ranks;
    for (const auto& [rank, runs] : runsOf)
        ranks.emplace_back(&runs, &t.m_steps[rank]);
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> spansOf(
        parallelWorkers(ranks.size()));
    parallelFor(ranks.size(), [&](std::size_t item, std::size_t worker) {
        auto& spans = spansOf[worker];
        spans.clear();
        for (const RecordRun& run : *ranks[item].first)
            for (std::size_t i = run.begin; i < run.end; ++i) {
                const CollectiveRecord& c = store.collectives[i];
                if (c.execStartNs < 0 || c.execEndNs <= c.execStartNs) continue;
                spans.emplace_back(c.execStartNs, c.execEndNs);
            }
        settle(spans, *ranks[item].second);
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
    const auto& steps = stepsOf(rank);
    auto it = std::upper_bound(steps.begin(), steps.end(), tNs,
                               [](std::int64_t t, const StepSpan& s) { return t < s.startNs; });
    if (it == steps.begin()) return -1;
    --it;
    return tNs <= it->endNs ? it->number : -1;
}

} // namespace rankscope
