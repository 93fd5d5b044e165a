#include "model/overview/rankactivity.h"

#include "model/store/parallelfor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

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

// A collective: its group within its job, and its sequence number in the group.
struct SpanKey {
    std::uint64_t group = 0;
    std::int64_t seq = 0;
    bool operator==(const SpanKey&) const = default;
};
struct SpanKeyHash {
    std::size_t operator()(const SpanKey& k) const
    {
        return std::hash<std::uint64_t>()(k.group * 0x9E3779B97F4A7C15ull ^ std::uint64_t(k.seq));
    }
};

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

// `from` less what `less` covers; both united (unite()).
Intervals subtract(const Intervals& from, const Intervals& less)
{
    Intervals out;
    std::size_t j = 0;
    for (Interval i : from) {
        while (j < less.size() && less[j].second <= i.first)
            ++j;
        for (std::size_t k = j; k < less.size() && less[k].first < i.second; ++k) {
            if (less[k].first > i.first) out.emplace_back(i.first, less[k].first);
            i.first = std::max(i.first, less[k].second);
        }
        if (i.first < i.second) out.push_back(i);
    }
    return out;
}

// The busy states in ascending priority: HostBusy, Computing, Communicating, Waiting.
constexpr std::size_t kBusy = 4;
using BusyNs = std::array<std::int64_t, kBusy>;

RankState busyState(std::size_t k)
{
    return RankState(int(RankState::HostBusy) + int(k));
}

// The partition of [first, last] by the highest-priority state holding at each moment:
// `byState` is indexed by busy state (ascending priority), each united.
void partition(RankActivity::Row& row, const std::array<Intervals, kBusy>& byState)
{
    std::vector<std::int64_t> cuts{row.firstNs};
    for (const Intervals& v : byState)
        for (const Interval& i : v) {
            cuts.push_back(i.first);
            cuts.push_back(i.second);
        }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::array<std::size_t, kBusy> at{};
    for (std::int64_t t : cuts) {
        if (t >= row.lastNs) break;
        RankState s = RankState::Idle;
        for (std::size_t k = 0; k < kBusy; ++k) {
            const Intervals& v = byState[k];
            std::size_t& i = at[k];
            while (i < v.size() && v[i].second <= t)
                ++i;
            if (i < v.size() && v[i].first <= t) s = busyState(k);
        }
        if (row.state.empty() || row.state.back() != s) {
            row.startNs.push_back(t);
            row.state.push_back(s);
        }
    }
}

// Buckets of one pyramid level while it is built: `count` buckets from `first` on, each with
// `ns` of each busy state inside it. Buckets between runs are idle.
struct CoverRun {
    std::int64_t first = 0;
    std::int64_t count = 0;
    BusyNs ns{};
};

// Appends runs in bucket order, merging a run into the last when it continues it unchanged.
class RunWriter {
public:
    explicit RunWriter(std::vector<CoverRun>& out) : m_out(out) {}
    // Adds `ns` of busy state k to bucket `bucket`, which is the pending one or later.
    void addPartial(std::int64_t bucket, std::size_t k, std::int64_t ns)
    {
        if (m_pending.count == 0 || m_pending.first != bucket) {
            flush();
            m_pending = {bucket, 1, {}};
        }
        m_pending.ns[k] += ns;
    }
    void addRun(const CoverRun& run)
    {
        flush();
        append(run);
    }
    void flush()
    {
        if (m_pending.count > 0) append(m_pending);
        m_pending = {};
    }

private:
    void append(const CoverRun& run)
    {
        if (!m_out.empty() && m_out.back().ns == run.ns &&
            m_out.back().first + m_out.back().count == run.first)
            m_out.back().count += run.count;
        else
            m_out.push_back(run);
    }
    std::vector<CoverRun>& m_out;
    CoverRun m_pending;
};

// The finest level from the partition: whole buckets inside one state become one run, so the
// cost is the number of states, not of buckets.
std::vector<CoverRun> finestRuns(const RankActivity::Row& row)
{
    std::vector<CoverRun> runs;
    RunWriter out(runs);
    const std::int64_t base = row.baseNs;
    for (std::size_t i = 0; i < row.state.size(); ++i) {
        if (row.state[i] == RankState::Idle) continue;
        const auto k = std::size_t(int(row.state[i]) - int(RankState::HostBusy));
        std::int64_t pos = row.startNs[i] - row.firstNs;
        const std::int64_t end =
            (i + 1 < row.startNs.size() ? row.startNs[i + 1] : row.lastNs) - row.firstNs;
        while (pos < end) {
            const std::int64_t bucket = pos / base;
            if (pos == bucket * base && end - pos >= base) {
                CoverRun whole{bucket, (end - pos) / base, {}};
                whole.ns[k] = base;
                out.addRun(whole);
                pos += whole.count * base;
                continue;
            }
            const std::int64_t hi = std::min(end, (bucket + 1) * base);
            out.addPartial(bucket, k, hi - pos);
            pos = hi;
        }
    }
    out.flush();
    return runs;
}

// The next coarser level: bucket j holds the sum of buckets 2j and 2j + 1.
std::vector<CoverRun> coarserRuns(const std::vector<CoverRun>& fine)
{
    std::vector<CoverRun> runs;
    RunWriter out(runs);
    const auto addHalf = [&](std::int64_t bucket, const BusyNs& ns) {
        for (std::size_t k = 0; k < kBusy; ++k)
            out.addPartial(bucket / 2, k, ns[k]);
    };
    for (const CoverRun& run : fine) {
        std::int64_t b = run.first;
        const std::int64_t end = run.first + run.count;
        if (b % 2 == 1) addHalf(b++, run.ns);
        if (const std::int64_t pairs = (end - b) / 2; pairs > 0) {
            CoverRun both{b / 2, pairs, run.ns};
            for (std::int64_t& ns : both.ns)
                ns *= 2;
            out.addRun(both);
            b += 2 * pairs;
        }
        if (b < end) addHalf(b, run.ns);
    }
    out.flush();
    return runs;
}

// The stored level: the dominant state of each bucket (idle is what the busy states leave of
// the bucket's part before the rank's last event), runs of equal state merged.
RankActivity::Level dominantLevel(const std::vector<CoverRun>& runs, std::int64_t bucketNs,
                                  std::int64_t spanNs)
{
    RankActivity::Level level;
    level.buckets = (spanNs + bucketNs - 1) / bucketNs;
    const auto push = [&](std::int64_t first, RankState s) {
        if (!level.state.empty() && level.state.back() == s) return;
        level.firstBucket.push_back(std::uint32_t(first));
        level.state.push_back(s);
    };
    std::int64_t next = 0; // first bucket not yet written
    for (const CoverRun& run : runs) {
        if (run.first > next) push(next, RankState::Idle);
        // Only the last bucket can be cut short by the rank's end.
        const std::int64_t inside = std::min(bucketNs, spanNs - run.first * bucketNs);
        std::int64_t best = inside;
        for (const std::int64_t ns : run.ns)
            best -= ns;
        RankState s = RankState::Idle;
        for (std::size_t k = 0; k < kBusy; ++k)
            if (run.ns[k] > best) {
                best = run.ns[k];
                s = busyState(k);
            }
        push(run.first, s);
        next = run.first + run.count;
    }
    if (next < level.buckets) push(next, RankState::Idle);
    level.firstBucket.shrink_to_fit();
    level.state.shrink_to_fit();
    return level;
}

// At most this many buckets in the finest level, so that bucket numbers fit 32 bits.
constexpr std::int64_t kMaxBuckets = std::int64_t(1) << 30;

void buildPyramid(RankActivity::Row& row)
{
    const std::int64_t span = std::max<std::int64_t>(1, row.lastNs - row.firstNs);
    // The base bucket is as long as the state at the 75th percentile of lengths: the finest
    // level then has about as many runs as there are long states, and a pixel narrower than it
    // holds only a few states of the partition.
    std::vector<std::int64_t> lengths(row.startNs.size());
    for (std::size_t i = 0; i < lengths.size(); ++i)
        lengths[i] =
            (i + 1 < row.startNs.size() ? row.startNs[i + 1] : row.lastNs) - row.startNs[i];
    std::int64_t base = span;
    if (!lengths.empty()) {
        const auto at = lengths.begin() + std::ptrdiff_t(lengths.size() * 3 / 4);
        std::nth_element(lengths.begin(), at, lengths.end());
        base = *at;
    }
    row.baseNs = std::max({std::int64_t(1), base, (span + kMaxBuckets - 1) / kMaxBuckets});
    std::vector<CoverRun> runs = finestRuns(row);
    for (std::int64_t bucketNs = row.baseNs;; bucketNs *= 2) {
        row.levels.push_back(dominantLevel(runs, bucketNs, span));
        if (row.levels.back().buckets <= 1) break;
        runs = coarserRuns(runs);
    }
}

// The upper middle value of `v` (reordered), -1 when empty.
std::int64_t median(std::vector<std::int64_t>& v)
{
    if (v.empty()) return -1;
    const auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
}

bool isCompute(EventCategory c)
{
    return c == EventCategory::Kernel || c == EventCategory::Memcpy || c == EventCategory::Memset;
}

} // namespace

RankActivity RankActivity::build(const EventStore& store, const LaneJobs& jobs)
{
    RankActivity activity;
    // A row per (job, rank): its overview key (the rank itself unless the folder mixes jobs),
    // numbered densely here as "slots" in key order.
    const auto jobOfRecord = [&](const CollectiveRecord& c) { return jobs.jobOfLane(c.laneIndex); };
    std::vector<int> keys;
    for (std::size_t l = 0; l < store.lanes.size(); ++l)
        if (store.lanes[l].rank >= 0 && store.lanes[l].size() > 0)
            keys.push_back(jobs.overviewKey(jobs.jobOfLane(int(l)), store.lanes[l].rank));
    for (const CollectiveRecord& c : store.collectives)
        if (c.rank >= 0 && hasExecution(c))
            keys.push_back(jobs.overviewKey(jobOfRecord(c), c.rank));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (keys.empty()) return activity;
    const std::size_t rankCount = keys.size();
    const auto slotOf = [&](int job, int rank) {
        const int key = jobs.overviewKey(job, rank);
        const auto it = std::lower_bound(keys.begin(), keys.end(), key);
        return it != keys.end() && *it == key ? std::size_t(it - keys.begin()) : rankCount;
    };

    std::vector<std::vector<int>> lanesOf(rankCount);
    std::vector<char> hasGpu(rankCount, 0);
    for (std::size_t l = 0; l < store.lanes.size(); ++l) {
        const Lane& lane = store.lanes[l];
        if (lane.rank < 0 || lane.size() == 0) continue;
        const std::size_t slot = slotOf(jobs.jobOfLane(int(l)), lane.rank);
        lanesOf[slot].push_back(int(l));
        hasGpu[slot] |= lane.kind == LaneKind::GpuStream;
    }
    std::vector<std::vector<std::uint32_t>> recordsOf(rankCount);
    std::unordered_map<SpanKey, CollectiveSpan, SpanKeyHash> spans;
    // The ranks that issued anything in each group of each job: its size where the records do
    // not say.
    std::unordered_map<std::uint64_t, std::unordered_set<int>> groupRanks;
    const auto groupOf = [&](const CollectiveRecord& c) {
        return (std::uint64_t(std::uint32_t(jobOfRecord(c) + 1)) << 32) |
               std::uint32_t(c.processGroupName);
    };
    std::vector<std::size_t> slotOfRecord(store.collectives.size(), rankCount);
    for (std::size_t i = 0; i < store.collectives.size(); ++i) {
        const CollectiveRecord& c = store.collectives[i];
        if (c.rank < 0) continue;
        slotOfRecord[i] = slotOf(jobOfRecord(c), c.rank);
        groupRanks[groupOf(c)].insert(c.rank);
    }
    // Per rank, when it issued each collective whose execution it never recorded (issued and
    // never run: the rank sat in the call, the c10d op's span or its host code, waiting for a
    // peer that never came).
    std::vector<std::vector<std::int64_t>> neverRanOf(rankCount);
    for (std::size_t i = 0; i < store.collectives.size(); ++i) {
        const CollectiveRecord& c = store.collectives[i];
        if (c.rank < 0) continue;
        if (!hasExecution(c)) {
            if (!c.stateUnknown && c.issueStartNs >= 0 &&
                c.state != CollectiveRecord::State::Completed)
                neverRanOf[slotOfRecord[i]].push_back(c.issueStartNs);
            continue;
        }
        recordsOf[slotOfRecord[i]].push_back(std::uint32_t(i));
        if (!completedWithSeq(c)) continue;
        CollectiveSpan& s = spans[{groupOf(c), c.seq}];
        const std::int64_t d = c.execEndNs - c.execStartNs;
        s.minNs = std::min(s.minNs, d);
        s.maxNs = std::max(s.maxNs, d);
        s.groupSize = std::max(s.groupSize, c.groupSize);
        ++s.members;
    }

    for (auto& [key, span] : spans) {
        const auto seen = groupRanks.find(key.group);
        if (seen != groupRanks.end())
            span.groupSize = std::max(span.groupSize, int(seen->second.size()));
    }
    activity.m_rows.resize(rankCount);
    parallelFor(rankCount, [&](std::size_t rank, std::size_t) {
        Row& row = activity.m_rows[rank];
        row.key = keys[rank];
        row.rank = LaneJobs::rankOfKey(keys[rank]);
        row.job = !lanesOf[rank].empty() ? jobs.jobOfLane(lanesOf[rank].front())
                  : !recordsOf[rank].empty()
                      ? jobOfRecord(store.collectives[recordsOf[rank].front()])
                      : -1;
        std::array<Intervals, kBusy> byState; // HostBusy, Computing, Communicating, Waiting
        std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = -1;
        for (int l : lanesOf[std::size_t(rank)]) {
            const Lane& lane = store.lanes[std::size_t(l)];
            const bool gpu = lane.kind == LaneKind::GpuStream;
            first = std::min(first, lane.startNs.front());
            for (std::size_t e = 0; e < lane.size(); ++e) {
                last = std::max(last, lane.endNs[e]);
                const EventCategory cat = lane.category[e];
                const Interval span{lane.startNs[e], lane.endNs[e]};
                if (cat == EventCategory::CommKernel) byState[2].push_back(span);
                // With GPU lanes the GPU says whether the rank computes: its CPU thread is
                // busy launching while the GPU may be idle.
                else if (hasGpu[std::size_t(rank)] ? gpu && isCompute(cat)
                                                   : cat == EventCategory::CpuOp)
                    byState[1].push_back(span);
                // Any other span of a CPU thread: the rank runs its own host code (a step, an
                // op, a Python function), which is not idle even when nothing else runs.
                else if (!gpu)
                    byState[0].push_back(span);
            }
        }
        std::vector<std::int64_t> lateness; // per completed collective shared with others
        for (std::uint32_t i : recordsOf[std::size_t(rank)]) {
            const CollectiveRecord& c = store.collectives[i];
            first = std::min(first, c.execStartNs);
            last = std::max(last, c.execEndNs);
            byState[2].emplace_back(c.execStartNs, c.execEndNs);
            if (c.state != CollectiveRecord::State::Completed) {
                // Still running when the trace ended (or ended by the error that broke the
                // wait): the rank waited for a member that never came.
                byState[3].emplace_back(c.execStartNs, c.execEndNs);
                continue;
            }
            if (c.seq < 0) continue;
            const auto s = spans.find({groupOf(c), c.seq});
            if (s == spans.end()) continue;
            if (s->second.members < s->second.groupSize) {
                // A member never came: the others' execution ended with the error that broke
                // the wait (a gloo span closed by the timeout), all of it spent waiting.
                byState[3].emplace_back(c.execStartNs, c.execEndNs);
                continue;
            }
            if (s->second.members < 2) continue;
            const std::int64_t d = c.execEndNs - c.execStartNs;
            if (d > s->second.minNs)
                byState[3].emplace_back(c.execStartNs, c.execStartNs + d - s->second.minNs);
            lateness.push_back(s->second.maxNs - d);
        }
        if (last < 0) return;
        // A span as long as the rank's whole trace is the recording itself (the profiler's
        // "PyTorch Profiler (0)" window), not code the rank runs.
        std::erase_if(byState[0],
                      [&](const Interval& i) { return i.first <= first && i.second >= last; });
        row.firstNs = first;
        row.lastNs = last;
        row.medianLatenessNs = median(lateness);
        row.latenessSamples = int(lateness.size());
        for (Intervals& v : byState)
            unite(v);
        // From its first collective that never ran on, the rank waits to the end of its trace,
        // except while its GPU computes: a GPU that still runs the rank's own kernels is not
        // waiting (the collective is queued behind them), and that is what the rank is doing.
        // (Without GPU lanes the rank's CPU ops are the call it blocks in.)
        const std::vector<std::int64_t>& neverRan = neverRanOf[std::size_t(rank)];
        if (!neverRan.empty()) {
            const std::int64_t from = *std::min_element(neverRan.begin(), neverRan.end());
            Intervals waited{{from, last}};
            if (hasGpu[std::size_t(rank)]) waited = subtract(waited, byState[1]);
            byState[3].insert(byState[3].end(), waited.begin(), waited.end());
            unite(byState[3]);
        }
        partition(row, byState);
        row.startNs.shrink_to_fit();
        row.state.shrink_to_fit();
        buildPyramid(row);
    });
    activity.m_keys = std::move(keys);
    std::map<int, std::vector<std::int64_t>> latenessOfJob;
    for (const Row& row : activity.m_rows) {
        activity.m_traceEndNs = std::max(activity.m_traceEndNs, row.lastNs);
        if (row.medianLatenessNs >= 0) latenessOfJob[row.job].push_back(row.medianLatenessNs);
    }
    for (auto& [job, lateness] : latenessOfJob)
        activity.m_typicalLatenessNs.emplace_back(job, median(lateness));
    return activity;
}

std::int64_t RankActivity::typicalLatenessNs(int job) const
{
    for (const auto& [j, ns] : m_typicalLatenessNs)
        if (j == job) return ns;
    return 0;
}

int RankActivity::rowOf(int key) const
{
    const auto it = std::lower_bound(m_keys.begin(), m_keys.end(), key);
    return it != m_keys.end() && *it == key ? int(it - m_keys.begin()) : -1;
}

void RankActivity::rasterise(std::size_t rowIndex, std::int64_t t0Ns, double nsPerPx, int width,
                             std::int64_t jobEndNs, bool crashed, RankState* out) const
{
    const Row& row = m_rows[rowIndex];
    // The first pixel whose centre is at or after `t`: a state from t1 to t2 covers the pixels
    // [xAt(t1), xAt(t2)), so a row is filled run by run, not pixel by pixel.
    const auto xAt = [&](std::int64_t t) {
        const double x = std::ceil(double(t - t0Ns) / nsPerPx - 0.5);
        return int(std::clamp(x, 0.0, double(width)));
    };
    int x = 0;
    const auto fillTo = [&](int end, RankState s) {
        if (end <= x) return;
        std::fill(out + x, out + end, s);
        x = end;
    };
    fillTo(xAt(row.firstNs), RankState::Idle);
    // The finest level whose buckets are at least a pixel wide; none (the partition itself)
    // when a pixel is narrower than the base bucket.
    const Level* level = nullptr;
    std::int64_t bucketNs = 1;
    if (nsPerPx > double(row.baseNs) && !row.levels.empty()) {
        std::size_t k = 0;
        while (k + 1 < row.levels.size() && double(row.baseNs << k) < nsPerPx)
            ++k;
        level = &row.levels[k];
        bucketNs = row.baseNs << k;
    }
    const std::size_t count = level ? level->state.size() : row.state.size();
    const RankState* states = level ? level->state.data() : row.state.data();
    // Run r from startOf(r) to startOf(r + 1), in ns on the rank's clock.
    const auto startOf = [&](std::size_t r) {
        return level ? row.firstNs + std::int64_t(level->firstBucket[r]) * bucketNs
                     : row.startNs[r];
    };
    const int xLast = xAt(row.lastNs);
    if (x < xLast && count > 0) {
        // The run holding the first pixel's centre.
        const std::int64_t t = t0Ns + std::int64_t((x + 0.5) * nsPerPx);
        std::size_t lo = 0, hi = count;
        while (hi - lo > 1) {
            const std::size_t mid = (lo + hi) / 2;
            (startOf(mid) <= t ? lo : hi) = mid;
        }
        for (std::size_t r = lo; r < count && x < xLast; ++r)
            fillTo(r + 1 < count ? std::min(xLast, xAt(startOf(r + 1))) : xLast, states[r]);
    }
    fillTo(xLast, RankState::Idle);
    fillTo(xAt(jobEndNs), crashed ? RankState::Crashed : RankState::Stopped);
    fillTo(width, RankState::Idle);
}

RankActivity::OpenSpan RankActivity::openHostSpan(const EventStore& store, int rank,
                                                  std::int64_t rawNs, const LaneJobs& jobs, int job)
{
    OpenSpan best;
    std::int64_t bestStart = std::numeric_limits<std::int64_t>::max();
    for (std::size_t l = 0; l < store.lanes.size(); ++l) {
        const Lane& lane = store.lanes[l];
        if (lane.rank != rank || lane.kind != LaneKind::CpuThread) continue;
        if (jobs.mixed() && jobs.jobOfLane(int(l)) != job) continue;
        // Events are sorted by start: the ones open at rawNs start at or before it.
        auto e = std::size_t(std::upper_bound(lane.startNs.begin(), lane.startNs.end(), rawNs) -
                             lane.startNs.begin());
        while (e-- > 0) {
            if (lane.endNs[e] > rawNs && lane.category[e] != EventCategory::CommKernel &&
                lane.startNs[e] <= bestStart) {
                bestStart = lane.startNs[e];
                best = {int(l), std::int64_t(e)};
            }
            if (lane.depth[e] == 0) break; // nothing before a top-level span encloses rawNs
        }
    }
    return best;
}

std::size_t RankActivity::memoryBytes() const
{
    std::size_t bytes = m_rows.capacity() * sizeof(Row) + m_keys.capacity() * sizeof(int);
    for (const Row& row : m_rows) {
        bytes += row.startNs.capacity() * sizeof(std::int64_t) + row.state.capacity() +
                 row.levels.capacity() * sizeof(Level);
        for (const Level& level : row.levels)
            bytes += level.firstBucket.capacity() * sizeof(std::uint32_t) + level.state.capacity();
    }
    return bytes;
}

} // namespace rankscope
