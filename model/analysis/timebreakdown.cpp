#include "model/analysis/timebreakdown.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/symptomids.h"
#include "model/kb/taxonomy.h"
#include "model/store/parallelfor.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>

namespace rankscope {

namespace {

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

// Whether event `i` of a lane (events in start order) has a CPU operator inside it.
bool runsAnOperatorInside(const Lane& lane, std::size_t i)
{
    for (std::size_t j = i + 1; j < lane.size() && lane.startNs[j] < lane.endNs[i]; ++j)
        if (lane.category[j] == EventCategory::CpuOp && lane.endNs[j] <= lane.endNs[i]) return true;
    return false;
}

void unite(Intervals& v)
{
    // Lanes are sorted by start, so one lane's intervals usually arrive in order.
    if (!std::is_sorted(v.begin(), v.end())) std::sort(v.begin(), v.end());
    std::size_t w = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (w > 0 && v[i].first <= v[w - 1].second)
            v[w - 1].second = std::max(v[w - 1].second, v[i].second);
        else
            v[w++] = v[i];
    }
    v.resize(w);
}

std::int64_t length(const Intervals& v)
{
    std::int64_t n = 0;
    for (const auto& [a, b] : v)
        n += b - a;
    return n;
}

std::int64_t intersection(const Intervals& x, const Intervals& y)
{
    std::int64_t n = 0;
    std::size_t i = 0, j = 0;
    while (i < x.size() && j < y.size()) {
        const std::int64_t a = std::max(x[i].first, y[j].first);
        const std::int64_t b = std::min(x[i].second, y[j].second);
        if (b > a) n += b - a;
        if (x[i].second < y[j].second)
            ++i;
        else
            ++j;
    }
    return n;
}

bool isCommName(std::string_view n)
{
    return n.substr(0, 6) == "c10d::" || n.substr(0, 5) == "nccl:" || n.substr(0, 5) == "gloo:" ||
           n.find("record_param_comms") != n.npos;
}

// Shared by the whole-run and the windowed breakdown. `windowOf(rank)` is the rank's window in
// its own clock, or nullopt for the span of its measured events.
struct RawWindow {
    std::int64_t startNs, endNs;
};

// One set of buffers per worker thread, reused for every rank it takes: large jobs would
// otherwise spend their time faulting in fresh pages.
struct Scratch {
    Intervals compute, comm, mem, busy, merged;
    std::vector<IdleGap> gaps;
    std::vector<std::int8_t> commName; // per string: -1 not looked at yet, else isCommName
};

RankTimeBreakdown rankBreakdown(const EventStore& store, int rank,
                                const std::vector<const Lane*>& lanes, bool gpu,
                                const std::optional<RawWindow>& window, Scratch& scratch)
{
    auto& [compute, comm, mem, busy, merged, gaps, commName] = scratch;
    commName.resize(store.strings.size(), -1);
    compute.clear();
    comm.clear();
    mem.clear();
    std::int64_t start = INT64_MAX, end = INT64_MIN;
    for (const Lane* lane : lanes) {
        if ((lane->kind == LaneKind::GpuStream) != gpu) continue;
        std::size_t first = 0, last = lane->size();
        if (window) {
            first = firstEndingAfter(*lane, window->startNs);
            last = std::size_t(
                std::lower_bound(lane->startNs.begin(), lane->startNs.end(), window->endNs) -
                lane->startNs.begin());
        }
        for (std::size_t i = first; i < last; ++i) {
            std::int64_t s = lane->startNs[i], e = lane->endNs[i];
            if (window) {
                s = std::max(s, window->startNs);
                e = std::min(e, window->endNs);
            }
            if (e <= s) continue;
            Intervals* into = nullptr;
            switch (lane->category[i]) {
            case EventCategory::Kernel:
                into = &compute;
                break;
            case EventCategory::CommKernel:
                into = &comm;
                break;
            case EventCategory::Memcpy:
            case EventCategory::Memset:
                into = &mem;
                break;
            case EventCategory::CpuOp: {
                // GPU time is kernels only; operators count on CPU-only ranks.
                if (gpu) break;
                const StringId id = lane->nameId[i];
                if (std::size_t(id) < commName.size() && commName[std::size_t(id)] < 0)
                    commName[std::size_t(id)] = isCommName(store.strings.view(id)) ? 1 : 0;
                const bool c = std::size_t(id) < commName.size() && commName[std::size_t(id)] == 1;
                // Computation is the operators that run no other inside: one that does (DDP's
                // forward) is busy only in them, and where it ran none it waited (for a
                // broadcast its peers were late to), which the rank overview shows as waiting.
                if (!c && runsAnOperatorInside(*lane, i)) break;
                into = c ? &comm : &compute;
                break;
            }
            default:
                break; // annotations and Python frames wrap work, they are not work
            }
            if (!into) continue;
            into->emplace_back(s, e);
            start = std::min(start, s);
            end = std::max(end, e);
        }
    }
    RankTimeBreakdown b;
    b.rank = rank;
    b.gpu = gpu;
    if (window) {
        b.windowStartNs = window->startNs;
        b.windowEndNs = window->endNs;
    } else if (start == INT64_MAX) {
        return b;
    } else {
        b.windowStartNs = start;
        b.windowEndNs = end;
    }
    unite(compute);
    unite(comm);
    unite(mem);
    b.computeNs = length(compute);
    b.commNs = length(comm);
    b.memNs = length(mem);
    b.overlapNs = intersection(compute, comm);
    busy.clear();
    merged.clear();
    std::merge(compute.begin(), compute.end(), comm.begin(), comm.end(), std::back_inserter(busy));
    std::merge(busy.begin(), busy.end(), mem.begin(), mem.end(), std::back_inserter(merged));
    unite(merged);
    b.idleNs = b.windowNs() - length(merged);
    gaps.clear();
    // In a window, the stretches before the first and after the last work are gaps too.
    std::int64_t gapStart = window ? window->startNs : (merged.empty() ? 0 : merged[0].first);
    for (const auto& [a, z] : merged) {
        if (a > gapStart) gaps.push_back({gapStart, a});
        gapStart = z;
    }
    if (window && window->endNs > gapStart) gaps.push_back({gapStart, window->endNs});
    const std::size_t keep = std::min(TimeBreakdown::kMaxGaps, gaps.size());
    std::partial_sort(gaps.begin(), gaps.begin() + std::ptrdiff_t(keep), gaps.end(),
                      [](const IdleGap& x, const IdleGap& y) {
                          return x.endNs - x.startNs > y.endNs - y.startNs;
                      });
    b.largestGaps.assign(gaps.begin(), gaps.begin() + std::ptrdiff_t(keep));
    return b;
}

template <typename WindowOf>
std::vector<RankTimeBreakdown> breakdownOf(const EventStore& store, const WindowOf& windowOf)
{
    // (rank, source): the source only for lanes of no rank.
    std::map<std::pair<int, int>, std::vector<const Lane*>> lanesOf;
    std::map<std::pair<int, int>, bool> hasGpu;
    for (const Lane& lane : store.lanes) {
        if (lane.size() == 0) continue;
        const std::pair<int, int> key{lane.rank, lane.rank < 0 ? lane.sourceIndex : -1};
        lanesOf[key].push_back(&lane);
        hasGpu[key] = hasGpu[key] || lane.kind == LaneKind::GpuStream;
    }
    std::vector<const decltype(lanesOf)::value_type*> ranks;
    for (const auto& entry : lanesOf)
        ranks.push_back(&entry);
    std::vector<Scratch> scratch(parallelWorkers(ranks.size()));
    std::vector<RankTimeBreakdown> out(ranks.size());
    parallelFor(ranks.size(), [&](std::size_t i, std::size_t worker) {
        const auto& [key, lanes] = *ranks[i];
        out[i] = rankBreakdown(store, key.first, lanes, hasGpu.at(key), windowOf(key.first),
                               scratch[worker]);
        out[i].sourceIndex = key.second;
    });
    return out;
}

} // namespace

std::vector<RankTimeBreakdown> TimeBreakdown::compute(const EventStore& store)
{
    return breakdownOf(store, [](int) { return std::optional<RawWindow>(); });
}

std::vector<RankTimeBreakdown> TimeBreakdown::computeWindow(const EventStore& store,
                                                            std::int64_t startNs,
                                                            std::int64_t endNs,
                                                            const QHash<int, qint64>& offsetNs)
{
    return breakdownOf(store, [&](int rank) {
        const std::int64_t off = offsetNs.value(rank, 0);
        return std::optional<RawWindow>(RawWindow{startNs - off, std::max(startNs, endNs) - off});
    });
}

std::vector<Finding> TimeBreakdown::idleFindings(const std::vector<RankTimeBreakdown>& breakdown)
{
    std::vector<Finding> out;
    std::vector<double> idle;
    for (const auto& b : breakdown)
        if (b.gpu && b.windowNs() > 0) idle.push_back(b.idleFraction());
    if (idle.empty()) return out;
    std::vector<double> sorted = idle;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    // An idle fraction is a share of the traced window, printed as every share is ("62.5 %").
    auto pct = [](double x) { return shareText(x).toStdString(); };
    for (const auto& b : breakdown) {
        // A file of no rank is measured but names nobody to blame.
        if (!b.gpu || b.windowNs() <= 0 || b.rank < 0) continue;
        const double f = b.idleFraction();
        if (breakdown.size() < 2 || f < std::max(0.3, median + 0.2)) continue;
        Finding fd;
        fd.kind = FindingKind::IdleGpu;
        fd.symptom = symptoms::kLowEfficiency;
        fd.severity = Severity::Warning;
        fd.ranks = {b.rank};
        fd.confidence = 0.6;
        fd.startNs = b.windowStartNs;
        fd.endNs = b.windowEndNs;
        fd.summary = "rank " + std::to_string(b.rank) + "'s GPU is idle " + pct(f) +
                     " of the time (median rank " + pct(median) + ")";
        if (!b.largestGaps.empty())
            fd.summary += "; longest gap " + formatDurationNs(b.largestGaps.front().endNs -
                                                              b.largestGaps.front().startNs);
        out.push_back(std::move(fd));
    }
    if (out.empty() && median >= 0.5 && idle.size() >= 1) {
        Finding fd;
        fd.kind = FindingKind::IdleGpu;
        fd.symptom = symptoms::kLowEfficiency;
        fd.severity = Severity::Info;
        fd.confidence = 0.3;
        fd.summary = "GPUs are idle " + pct(median) +
                     " of the traced time on the median rank: the job is bound by input, CPU work "
                     "or launch overhead rather than by GPU work";
        out.push_back(std::move(fd));
    }
    return out;
}

} // namespace rankscope
