#include "model/analysis/analysiscontext.h"

#include "model/store/parallelfor.h"
#include "model/zoomstate.h"

#include <algorithm>

namespace rankscope {

AnalysisContext::AnalysisContext(const EventStore& s, std::vector<std::string> paths)
    : store(s), sourcePaths(std::move(paths)), steps(StepTimeline::build(s))
{
    // A lane's last end is a scan of all its events (they are sorted by start): lanes in
    // parallel.
    std::vector<std::int64_t> lastEndOf(store.lanes.size(), 0);
    parallelFor(store.lanes.size(), [&](std::size_t i, std::size_t) {
        const Lane& lane = store.lanes[i];
        if (lane.size() > 0) lastEndOf[i] = *std::max_element(lane.endNs.begin(), lane.endNs.end());
    });
    for (std::size_t i = 0; i < store.lanes.size(); ++i) {
        const Lane& lane = store.lanes[i];
        if (lane.size() == 0) continue;
        const std::int64_t first = lane.startNs.front();
        const std::int64_t last = lastEndOf[i];
        auto [sit, sNew] = rankStartNs.emplace(lane.rank, first);
        if (!sNew) sit->second = std::min(sit->second, first);
        auto [eit, eNew] = rankEndNs.emplace(lane.rank, last);
        if (!eNew) eit->second = std::max(eit->second, last);
    }
}

std::string AnalysisContext::pathOfLane(int laneIndex) const
{
    if (laneIndex < 0 || std::size_t(laneIndex) >= store.lanes.size()) return {};
    const int source = store.lanes[std::size_t(laneIndex)].sourceIndex;
    if (source < 0 || std::size_t(source) >= sourcePaths.size()) return {};
    return sourcePaths[std::size_t(source)];
}

std::int64_t AnalysisContext::beginNs(const CollectiveRecord& c) const
{
    return c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs;
}

std::int64_t AnalysisContext::finishNs(const CollectiveRecord& c) const
{
    // A record whose source cannot see execution (an NCCL log line) ends where its call does:
    // it must not read as a wait until the rank's last event.
    if (c.stateUnknown) return std::max(c.issueStartNs, c.issueEndNs);
    if (c.state == CollectiveRecord::State::Completed && c.execEndNs >= 0) return c.execEndNs;
    const auto it = rankEndNs.find(c.rank);
    const std::int64_t end = it == rankEndNs.end() ? -1 : it->second;
    return std::max({end, c.execEndNs, c.issueEndNs});
}

std::int64_t AnalysisContext::heldNs(const CollectiveRecord& c) const
{
    const std::int64_t begin = beginNs(c);
    const std::int64_t end = finishNs(c);
    return begin >= 0 && end >= begin ? end - begin : 0;
}

int AnalysisContext::stepNumber(int rank, int stepIndex) const
{
    const std::vector<StepSpan>& spans = steps.stepsOf(rank);
    return stepIndex >= 0 && std::size_t(stepIndex) < spans.size()
               ? spans[std::size_t(stepIndex)].number
               : -1;
}

void AnalysisContext::placeOnTraces(std::vector<Finding>& findings) const
{
    for (Finding& f : findings) {
        if (f.step < 0) continue;
        const int index = f.step;
        // The blamed ranks' numbering first: a log finding's step is counted on them.
        std::vector<int> ranks = f.ranks;
        for (const auto& [rank, spans] : steps.all())
            ranks.push_back(rank);
        f.step = -1;
        for (int r : ranks)
            if (const int n = stepNumber(r, index); n >= 0) {
                f.step = n;
                break;
            }
        if (f.startNs >= 0 || f.ranks.empty()) continue;
        for (int r : f.ranks) {
            const std::vector<StepSpan>& spans = steps.stepsOf(r);
            if (std::size_t(index) >= spans.size()) continue;
            const StepSpan& s = spans[std::size_t(index)];
            // -1 means "no range": a step that starts before the reference clock's zero
            // (a rank whose clock runs ahead) is shown from zero.
            const std::int64_t b = std::max<std::int64_t>(0, clock.toReference(r, s.startNs));
            const std::int64_t e = clock.toReference(r, s.endNs);
            f.startNs = f.startNs < 0 ? b : std::min(f.startNs, b);
            f.endNs = std::max(f.endNs, e);
        }
    }
}

Evidence AnalysisContext::evidenceOf(std::int32_t recordIndex, const std::string& what) const
{
    const CollectiveRecord& c = store.collectives[std::size_t(recordIndex)];
    Evidence e;
    e.rank = c.rank;
    e.path = pathOfLane(c.laneIndex);
    // Records read from a dump or a log have no lane: cite their file (and line).
    if (e.path.empty() && c.sourceIndex >= 0 && std::size_t(c.sourceIndex) < sourcePaths.size())
        e.path = sourcePaths[std::size_t(c.sourceIndex)];
    e.line = c.sourceLine;
    e.timeNs = c.execStartNs >= 0 ? c.execStartNs : c.issueStartNs;
    e.text = "rank " + std::to_string(c.rank) + ": " + std::string(store.strings.view(c.op));
    if (c.seq >= 0) e.text += " #" + std::to_string(c.seq);
    if (const std::string step = steps.label(c.rank, c.step); !step.empty())
        e.text += " in " + step;
    if (c.stateUnknown) {
        e.text += ", issued (its source does not show completion)";
    } else if (const std::int64_t held = heldNs(c);
               c.state == CollectiveRecord::State::Completed || held > 0) {
        e.text +=
            c.state == CollectiveRecord::State::Completed ? ", ran " : ", not completed after ";
        e.text += formatDurationNs(held);
    } else {
        // Nothing after it on its rank to measure the wait by (a dump's entry has no lane).
        e.text += c.state == CollectiveRecord::State::Started
                      ? ", started, not completed in its record (no completion time)"
                      : ", issued, not started in its record (no start time)";
    }
    if (!what.empty()) e.text += " (" + what + ")";
    return e;
}

std::string formatDurationNs(std::int64_t ns)
{
    // Findings keep a fixed precision per unit (10.02 s, 841.9 ms, 900 µs) so that the
    // durations of ranks a few ms apart read apart.
    const std::int64_t mag = ns < 0 ? -ns : ns;
    const std::int64_t resolution = mag >= 1'000'000'000 ? 10'000'000
                                    : mag >= 1'000'000   ? 100'000
                                                         : 1'000;
    return ZoomState::formatNs(ns, resolution).toStdString();
}

std::string formatRanks(const std::vector<int>& ranks)
{
    // Large jobs: name a few, count the rest, so a summary stays one line.
    constexpr std::size_t kNamed = 8;
    std::string s = ranks.size() == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranks.size() && i < kNamed; ++i) {
        if (i) s += ", ";
        s += std::to_string(ranks[i]);
    }
    if (ranks.size() > kNamed) s += ", ... (" + std::to_string(ranks.size()) + " ranks)";
    return s;
}

std::vector<RankRange> absentRankRanges(const std::vector<int>& present, int worldSize,
                                        const std::vector<int>& alsoExpected)
{
    std::vector<RankRange> gaps;
    int next = 0; // the lowest rank of the world not yet seen
    for (int r : present) {
        if (r < 0) continue;
        if (r >= worldSize) break;
        if (r > next) gaps.emplace_back(next, r - 1);
        next = r + 1;
    }
    if (worldSize > next) gaps.emplace_back(next, worldSize - 1);
    for (int r : alsoExpected)
        if (r >= 0 && !std::binary_search(present.begin(), present.end(), r))
            gaps.emplace_back(r, r);
    std::sort(gaps.begin(), gaps.end());
    std::vector<RankRange> out;
    for (const RankRange& g : gaps) {
        if (!out.empty() && std::int64_t(out.back().second) + 1 >= g.first)
            out.back().second = std::max(out.back().second, g.second);
        else
            out.push_back(g);
    }
    return out;
}

std::int64_t rankCount(const std::vector<RankRange>& ranges)
{
    std::int64_t n = 0;
    for (const auto& [first, last] : ranges)
        n += std::int64_t(last) - first + 1;
    return n;
}

std::string formatRankRanges(const std::vector<RankRange>& ranges)
{
    constexpr std::size_t kNamed = 8;
    std::string s = rankCount(ranges) == 1 ? "rank " : "ranks ";
    for (std::size_t i = 0; i < ranges.size() && i < kNamed; ++i) {
        if (i) s += ", ";
        s += std::to_string(ranges[i].first);
        if (ranges[i].second != ranges[i].first)
            s += (ranges[i].second == ranges[i].first + 1 ? ", " : "–") +
                 std::to_string(ranges[i].second);
    }
    if (ranges.size() > kNamed) s += ", ... (" + std::to_string(rankCount(ranges)) + " ranks)";
    return s;
}

} // namespace rankscope
