#include "model/overview/rankactivity.h"

#include "model/store/parallelfor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace rankscope {

namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;
using Intervals = std::vector<Interval>;

// A collective across its members: the shortest and longest execution of the members that
// completed it. A blocking collective ends at about the same moment on every member, so a
// member's execution minus the shortest one is how long it sat waiting for the last to arrive,
// and the longest minus its own is how late it came. Durations need no clock alignment.
struct CollectiveSpan {
    std::int64_t minNs = std::numeric_limits<std::int64_t>::max();
    std::int64_t maxNs = -1;
    int members = 0;
    int groupSize = -1; // the largest the members' records give, or the group's issuers
};

std::uint64_t keyOf(const CollectiveRecord& c)
{
    return (std::uint64_t(std::uint32_t(c.processGroupName)) << 40) ^
           (std::uint64_t(c.seq) & ((std::uint64_t(1) << 40) - 1));
}

bool hasExecution(const CollectiveRecord& c)
{
    return !c.stateUnknown && c.execStartNs >= 0 && c.execEndNs >= c.execStartNs;
}

bool completedWithSeq(const CollectiveRecord& c)
{
    return hasExecution(c) && c.seq >= 0 && c.state == CollectiveRecord::State::Completed;
}

// Sorts and unites overlapping intervals.
void unite(Intervals& v)
{
    std::sort(v.begin(), v.end());
    std::size_t out = 0;
    for (const Interval& i : v) {
        if (i.second <= i.first) continue;
        if (out > 0 && i.first <= v[out - 1].second)
            v[out - 1].second = std::max(v[out - 1].second, i.second);
        else
            v[out++] = i;
    }
    v.resize(out);
}

// The partition of [first, last] by the highest-priority state holding at each moment:
// `byState` is indexed Computing, Communicating, Waiting (ascending priority), each united.
void partition(RankActivity::Row& row, const std::array<Intervals, 3>& byState)
{
    std::vector<std::int64_t> cuts{row.firstNs};
    for (const Intervals& v : byState)
        for (const Interval& i : v) {
            cuts.push_back(i.first);
            cuts.push_back(i.second);
        }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::array<std::size_t, 3> at{0, 0, 0};
    for (std::int64_t t : cuts) {
        if (t >= row.lastNs) break;
        RankState s = RankState::Idle;
        for (int k = 0; k < 3; ++k) {
            const Intervals& v = byState[std::size_t(k)];
            std::size_t& i = at[std::size_t(k)];
            while (i < v.size() && v[i].second <= t)
                ++i;
            if (i < v.size() && v[i].first <= t) s = RankState(int(RankState::Computing) + k);
        }
        if (row.state.empty() || row.state.back() != s) {
            row.startNs.push_back(t);
            row.state.push_back(s);
        }
    }
}

// Base buckets: four times the median state length, so that a pixel of the busy part of a run
// reads a few buckets; within [64, 16 x changes] buckets (and 4 M) whatever the stalls around it.
constexpr std::int64_t kBucketsPerMedianState = 4;
constexpr std::int64_t kMinBuckets = 64;
constexpr std::int64_t kMaxBucketsPerChange = 16;
constexpr std::int64_t kMaxBuckets = std::int64_t(1) << 22;

RankActivity::Level encode(const std::vector<RankActivity::Cover>& dense)
{
    RankActivity::Level level;
    level.buckets = std::int64_t(dense.size());
    for (std::size_t b = 0; b < dense.size(); ++b)
        if (b == 0 || !(dense[b] == level.cover.back())) {
            level.firstBucket.push_back(std::int64_t(b));
            level.cover.push_back(dense[b]);
        }
    return level;
}

void buildPyramid(RankActivity::Row& row)
{
    const std::int64_t span = std::max<std::int64_t>(1, row.lastNs - row.firstNs);
    const auto endOf = [&](std::size_t i) {
        return i + 1 < row.startNs.size() ? row.startNs[i + 1] : row.lastNs;
    };
    std::vector<std::int64_t> lengths(row.startNs.size());
    for (std::size_t i = 0; i < lengths.size(); ++i)
        lengths[i] = endOf(i) - row.startNs[i];
    std::int64_t median = span;
    if (!lengths.empty()) {
        std::nth_element(lengths.begin(), lengths.begin() + std::ptrdiff_t(lengths.size() / 2),
                         lengths.end());
        median = std::max<std::int64_t>(1, lengths[lengths.size() / 2]);
    }
    const std::int64_t maxBuckets = std::clamp<std::int64_t>(
        std::int64_t(row.startNs.size()) * kMaxBucketsPerChange, kMinBuckets, kMaxBuckets);
    const std::int64_t want = std::clamp<std::int64_t>(
        span / std::max<std::int64_t>(1, median * kBucketsPerMedianState), kMinBuckets, maxBuckets);
    row.baseNs = std::max<std::int64_t>(1, (span + want - 1) / want);
    const auto n = std::size_t((span + row.baseNs - 1) / row.baseNs);
    std::vector<std::array<double, 3>> ns(n, {0, 0, 0});
    for (std::size_t i = 0; i < row.state.size(); ++i) {
        if (row.state[i] == RankState::Idle) continue;
        const auto k = std::size_t(int(row.state[i]) - int(RankState::Computing));
        const std::int64_t a = row.startNs[i] - row.firstNs;
        const std::int64_t b = endOf(i) - row.firstNs;
        for (std::int64_t bucket = a / row.baseNs; bucket * row.baseNs < b; ++bucket) {
            const std::int64_t lo = std::max(a, bucket * row.baseNs);
            const std::int64_t hi = std::min(b, (bucket + 1) * row.baseNs);
            ns[std::size_t(bucket)][k] += double(hi - lo);
        }
    }
    const auto q = [&](double v) { return std::uint8_t(std::lround(255.0 * v / row.baseNs)); };
    std::vector<RankActivity::Cover> fine(n);
    for (std::size_t b = 0; b < n; ++b)
        fine[b] = {q(ns[b][0]), q(ns[b][1]), q(ns[b][2])};
    row.levels.push_back(encode(fine));
    while (fine.size() > 1) {
        std::vector<RankActivity::Cover> coarse((fine.size() + 1) / 2);
        for (std::size_t b = 0; b < coarse.size(); ++b) {
            const RankActivity::Cover a = fine[2 * b];
            const RankActivity::Cover c =
                2 * b + 1 < fine.size() ? fine[2 * b + 1] : RankActivity::Cover{};
            coarse[b] = {std::uint8_t((a.computing + c.computing + 1) / 2),
                         std::uint8_t((a.communicating + c.communicating + 1) / 2),
                         std::uint8_t((a.waiting + c.waiting + 1) / 2)};
        }
        row.levels.push_back(encode(coarse));
        fine = std::move(coarse);
    }
}

bool isCompute(EventCategory c)
{
    return c == EventCategory::Kernel || c == EventCategory::Memcpy || c == EventCategory::Memset;
}

} // namespace

RankActivity RankActivity::build(const EventStore& store)
{
    RankActivity activity;
    int maxRank = -1;
    for (const Lane& lane : store.lanes)
        maxRank = std::max(maxRank, lane.rank);
    for (const CollectiveRecord& c : store.collectives)
        maxRank = std::max(maxRank, c.rank);
    if (maxRank < 0) return activity;
    const auto rankCount = std::size_t(maxRank) + 1;

    std::vector<std::vector<int>> lanesOf(rankCount);
    std::vector<char> hasGpu(rankCount, 0);
    for (std::size_t l = 0; l < store.lanes.size(); ++l) {
        const Lane& lane = store.lanes[l];
        if (lane.rank < 0 || lane.size() == 0) continue;
        lanesOf[std::size_t(lane.rank)].push_back(int(l));
        hasGpu[std::size_t(lane.rank)] |= lane.kind == LaneKind::GpuStream;
    }
    std::vector<std::vector<std::uint32_t>> recordsOf(rankCount);
    std::unordered_map<std::uint64_t, CollectiveSpan> spans;
    // The ranks that issued anything in each group: its size where the records do not say.
    std::unordered_map<StringId, std::vector<char>> groupRanks;
    for (const CollectiveRecord& c : store.collectives) {
        if (c.rank < 0) continue;
        std::vector<char>& seen = groupRanks[c.processGroupName];
        seen.resize(rankCount, 0);
        seen[std::size_t(c.rank)] = 1;
    }
    for (std::size_t i = 0; i < store.collectives.size(); ++i) {
        const CollectiveRecord& c = store.collectives[i];
        if (c.rank < 0 || !hasExecution(c)) continue;
        recordsOf[std::size_t(c.rank)].push_back(std::uint32_t(i));
        if (!completedWithSeq(c)) continue;
        CollectiveSpan& s = spans[keyOf(c)];
        const std::int64_t d = c.execEndNs - c.execStartNs;
        s.minNs = std::min(s.minNs, d);
        s.maxNs = std::max(s.maxNs, d);
        s.groupSize = std::max(s.groupSize, c.groupSize);
        ++s.members;
    }

    for (auto& [key, span] : spans) {
        const auto seen = groupRanks.find(StringId(key >> 40));
        if (seen != groupRanks.end())
            span.groupSize = std::max(span.groupSize,
                                      int(std::count(seen->second.begin(), seen->second.end(), 1)));
    }
    std::vector<int> ranks;
    for (std::size_t r = 0; r < rankCount; ++r)
        if (!lanesOf[r].empty() || !recordsOf[r].empty()) ranks.push_back(int(r));
    activity.m_rows.resize(ranks.size());
    parallelFor(ranks.size(), [&](std::size_t item, std::size_t) {
        const int rank = ranks[item];
        Row& row = activity.m_rows[item];
        row.rank = rank;
        std::array<Intervals, 3> byState; // Computing, Communicating, Waiting
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        for (int l : lanesOf[std::size_t(rank)]) {
            const Lane& lane = store.lanes[std::size_t(l)];
            const bool gpu = lane.kind == LaneKind::GpuStream;
            first = std::min(first, lane.startNs.front());
            for (std::size_t e = 0; e < lane.size(); ++e) {
                last = std::max(last, lane.endNs[e]);
                const EventCategory cat = lane.category[e];
                if (cat == EventCategory::CommKernel)
                    byState[1].emplace_back(lane.startNs[e], lane.endNs[e]);
                // With GPU lanes the GPU says whether the rank computes: its CPU thread is
                // busy launching while the GPU may be idle.
                else if (hasGpu[std::size_t(rank)] ? gpu && isCompute(cat)
                                                   : cat == EventCategory::CpuOp)
                    byState[0].emplace_back(lane.startNs[e], lane.endNs[e]);
            }
        }
        double lateSum = 0;
        int lateCount = 0;
        for (std::uint32_t i : recordsOf[std::size_t(rank)]) {
            const CollectiveRecord& c = store.collectives[i];
            first = std::min(first, c.execStartNs);
            last = std::max(last, c.execEndNs);
            byState[1].emplace_back(c.execStartNs, c.execEndNs);
            if (c.state != CollectiveRecord::State::Completed) {
                // Still running when the trace ended (or ended by the error that broke the
                // wait): the rank waited for a member that never came.
                byState[2].emplace_back(c.execStartNs, c.execEndNs);
                continue;
            }
            if (c.seq < 0) continue;
            const auto s = spans.find(keyOf(c));
            if (s == spans.end()) continue;
            if (s->second.members < s->second.groupSize) {
                // A member never came: the others' execution ended with the error that broke
                // the wait (a gloo span closed by the timeout), all of it spent waiting.
                byState[2].emplace_back(c.execStartNs, c.execEndNs);
                continue;
            }
            if (s->second.members < 2) continue;
            const std::int64_t d = c.execEndNs - c.execStartNs;
            if (d > s->second.minNs)
                byState[2].emplace_back(c.execStartNs, c.execStartNs + d - s->second.minNs);
            lateSum += double(s->second.maxNs - d);
            ++lateCount;
        }
        if (last < 0) return;
        row.firstNs = first;
        row.lastNs = last;
        row.meanLatenessNs = lateCount > 0 ? lateSum / lateCount : -1;
        for (Intervals& v : byState)
            unite(v);
        partition(row, byState);
        buildPyramid(row);
    });
    activity.m_rowOfRank.assign(rankCount, -1);
    for (std::size_t i = 0; i < activity.m_rows.size(); ++i) {
        activity.m_rowOfRank[std::size_t(activity.m_rows[i].rank)] = int(i);
        activity.m_traceEndNs = std::max(activity.m_traceEndNs, activity.m_rows[i].lastNs);
    }
    return activity;
}

int RankActivity::rowOf(int rank) const
{
    return rank >= 0 && std::size_t(rank) < m_rowOfRank.size() ? m_rowOfRank[std::size_t(rank)]
                                                               : -1;
}

void RankActivity::rasterise(std::size_t rowIndex, std::int64_t t0Ns, double nsPerPx, int width,
                             std::int64_t jobEndNs, bool crashed, RankState* out) const
{
    const Row& row = m_rows[rowIndex];
    const RankState after = crashed ? RankState::Crashed : RankState::Stopped;
    // Time (ns) of each state inside pixel x, then the dominant one; "stopped" counts the part
    // after the rank's last event, up to the job's end.
    std::array<double, kRankStateCount> cover{};
    // `inside`: the part of the pixel between the rank's first and last event; `stopped`: the
    // part after its last event, before the job's end.
    const auto weigh = [&](int x, double inside, double stopped) {
        double busy = 0;
        for (int s = int(RankState::Computing); s <= int(RankState::Waiting); ++s)
            busy += cover[std::size_t(s)];
        cover[std::size_t(RankState::Idle)] = std::max(0.0, inside - busy);
        cover[std::size_t(after)] = std::max(0.0, stopped);
        int best = int(RankState::Idle);
        for (int s = 1; s < kRankStateCount; ++s)
            if (cover[std::size_t(s)] > cover[std::size_t(best)]) best = s;
        out[x] = RankState(best);
        cover.fill(0);
    };
    const auto decide = [&](int x, double ta, double tb) {
        const double lo = std::max(ta, double(row.firstNs)), hi = std::min(tb, double(row.lastNs));
        weigh(x, hi - lo, std::min(tb, double(jobEndNs)) - std::max(ta, double(row.lastNs)));
    };
    // Pixels wholly before the rank's first or after its last event, decided without sums.
    const double firstNs = double(row.firstNs), lastNs = double(row.lastNs);
    const auto outside = [&](int x, double ta, double tb) {
        if (tb <= firstNs) {
            out[x] = RankState::Idle;
            return true;
        }
        if (ta < lastNs) return false;
        out[x] = ta < double(jobEndNs) ? after : RankState::Idle;
        return true;
    };
    if (nsPerPx >= double(row.baseNs) && !row.levels.empty()) {
        // Zoomed out: the coarsest level whose bucket is at most a pixel, 1-3 buckets a pixel.
        const int level = std::min(int(row.levels.size()) - 1,
                                   int(std::floor(std::log2(nsPerPx / double(row.baseNs)))));
        const Level& runs = row.levels[std::size_t(level)];
        const double bw = double(row.baseNs << level);
        const std::size_t count = runs.firstBucket.size();
        const auto runStart = [&](std::size_t r) { return double(runs.firstBucket[r]) * bw; };
        const auto runEnd = [&](std::size_t r) {
            return double(r + 1 < count ? runs.firstBucket[r + 1] : runs.buckets) * bw;
        };
        std::size_t r = 0;
        for (int x = 0; x < width; ++x) {
            const double ta = double(t0Ns) + x * nsPerPx, tb = ta + nsPerPx;
            if (outside(x, ta, tb)) continue;
            const double ra = ta - firstNs, rb = tb - firstNs;
            if (x == 0 || r >= count) {
                // The first pixel in view: binary search; then the runs only move forward.
                const auto b0 = std::int64_t(std::floor(std::max(0.0, ra) / bw));
                r = std::size_t(
                    std::upper_bound(runs.firstBucket.begin(), runs.firstBucket.end(), b0) -
                    runs.firstBucket.begin());
                if (r > 0) --r;
            }
            while (r + 1 < count && runEnd(r) <= ra)
                ++r;
            if (runStart(r) <= ra && runEnd(r) >= rb && ta >= firstNs && tb <= lastNs) {
                // Inside one run (a long stall, steady compute): its cover decides alone.
                const Cover& c = runs.cover[r];
                cover[std::size_t(RankState::Computing)] = c.computing;
                cover[std::size_t(RankState::Communicating)] = c.communicating;
                cover[std::size_t(RankState::Waiting)] = c.waiting;
                weigh(x, 255, 0);
                continue;
            }
            for (std::size_t j = r; j < count && runStart(j) < rb; ++j) {
                const double part = (std::min(rb, runEnd(j)) - std::max(ra, runStart(j))) / 255.0;
                if (part <= 0) continue;
                const Cover& c = runs.cover[j];
                cover[std::size_t(RankState::Computing)] += c.computing * part;
                cover[std::size_t(RankState::Communicating)] += c.communicating * part;
                cover[std::size_t(RankState::Waiting)] += c.waiting * part;
            }
            decide(x, ta, tb);
        }
        return;
    }
    // Zoomed in: walk the intervals in view (fewer than about four per bucket, so per pixel).
    const auto end = [&](std::size_t i) {
        return i + 1 < row.startNs.size() ? row.startNs[i + 1] : row.lastNs;
    };
    std::size_t i = std::size_t(std::upper_bound(row.startNs.begin(), row.startNs.end(), t0Ns) -
                                row.startNs.begin());
    if (i > 0) --i;
    for (int x = 0; x < width; ++x) {
        const double ta = double(t0Ns) + x * nsPerPx, tb = ta + nsPerPx;
        if (outside(x, ta, tb)) continue;
        while (i < row.startNs.size() && double(end(i)) <= ta)
            ++i;
        if (i < row.startNs.size() && double(row.startNs[i]) <= ta && double(end(i)) >= tb) {
            out[x] = row.state[i]; // inside one state: nothing to weigh
            continue;
        }
        for (std::size_t j = i; j < row.startNs.size() && double(row.startNs[j]) < tb; ++j) {
            if (row.state[j] == RankState::Idle) continue;
            const double part = std::min(tb, double(end(j))) - std::max(ta, double(row.startNs[j]));
            if (part > 0) cover[std::size_t(row.state[j])] += part;
        }
        decide(x, ta, tb);
    }
}

std::size_t RankActivity::memoryBytes() const
{
    std::size_t bytes = m_rows.capacity() * sizeof(Row) + m_rowOfRank.capacity() * sizeof(int);
    for (const Row& row : m_rows) {
        bytes += row.startNs.capacity() * sizeof(std::int64_t) + row.state.capacity();
        for (const Level& level : row.levels)
            bytes += level.firstBucket.capacity() * sizeof(std::int64_t) +
                     level.cover.capacity() * sizeof(Cover);
    }
    return bytes;
}

} // namespace rankscope
