#pragma once

#include "model/overview/lanejobs.h"
#include "model/store/eventstore.h"

#include <cstdint>
#include <vector>

namespace rankscope {

// What a rank is doing at a moment, as the rank overview colours it.
enum class RankState : std::uint8_t {
    Idle,          // no event open on any of the rank's threads or streams
    HostBusy,      // a CPU-thread span is open (the rank runs its own host code: a step, an op,
                   // a Python function) while no kernel, CPU op of a GPU-less rank or
                   // collective runs: e.g. a rank stuck in its data loader. A span covering
                   // the rank's whole trace (the profiler's own window) does not count.
    Computing,     // GPU kernels, memcpy, memset; CPU ops on a rank without GPU lanes
    Communicating, // a collective's execution once every member has arrived
    Waiting,       // inside a collective before the last member arrived, or one never finished
    Stopped,       // after the rank's last event while the job's trace goes on
    Crashed,       // stopped, and a finding says the rank crashed
};
inline constexpr int kRankStateCount = 7;

// Per rank, the state over time as a partition into intervals (one boundary per change of
// state) plus a pyramid of the dominant state of time buckets, so that a row of any width is
// drawn in O(pixels) at any zoom: each pixel shows the state at its centre, read from the
// finest resolution at least a pixel wide (the partition itself when zoomed in that far).
// A pure function of the events that were read: it needs no clock alignment and no diagnosis.
class RankActivity {
public:
    // A level of the pyramid, run-length encoded: the buckets from firstBucket[i] up to the next
    // run's first have state[i] as their dominant state, so that a long stall is one run.
    struct Level {
        std::vector<std::uint32_t> firstBucket;
        std::vector<RankState> state;
        std::int64_t buckets = 0;
    };
    struct Row {
        int rank = -1;
        int job = -1;             // where the folder mixes jobs (LaneJobs), the rank's job; else -1
        int key = -1;             // LaneJobs::overviewKey: the rank unless the folder mixes jobs
        std::int64_t firstNs = 0; // the rank's first event start and last event end, raw clock
        std::int64_t lastNs = 0;
        // The partition: state[i] holds from startNs[i] to startNs[i + 1] (lastNs for the last).
        std::vector<std::int64_t> startNs;
        std::vector<RankState> state;
        // Level k has buckets of baseNs << k from firstNs; the coarsest has one bucket.
        std::int64_t baseNs = 1;
        std::vector<Level> levels;
        // How long after the first member the rank arrived at the completed collectives it
        // shared with others: the median over them (the upper middle value of an even count),
        // -1 when there was none, and how many there were.
        std::int64_t medianLatenessNs = -1;
        int latenessSamples = 0;
    };

    // Reads the store's lanes and collective records; ranks in parallel. Where `jobs` says the
    // folder mixes jobs, a row per job and rank: two jobs' rank 0 are two rows, and a
    // collective is matched only with its own job's.
    static RankActivity build(const EventStore& store, const LaneJobs& jobs = {});

    const std::vector<Row>& rows() const { return m_rows; } // by key
    // Index into rows() of overview key `key` (the rank, unless the folder mixes jobs), -1 when
    // it has no events.
    int rowOf(int key) const;
    std::int64_t traceEndNs() const { return m_traceEndNs; } // latest event end, raw clocks
    // The median of medianLatenessNs over the rows of `job` (Row::job) that have one: how late
    // the job's typical rank arrives, what a straggler's lateness stands out from. 0 when none.
    std::int64_t typicalLatenessNs(int job) const;

    // The state of each of `width` pixels of row `row`, pixel x covering
    // [t0Ns + x * nsPerPx, t0Ns + (x + 1) * nsPerPx) on the rank's own clock: the state at the
    // pixel's centre, or when zoomed out the dominant state of the pyramid's bucket holding the
    // centre (a bucket 1-2 pixels wide). After the rank's last event it is Stopped (Crashed when
    // `crashed`) as long as the job's trace goes on, up to `jobEndNs` on the rank's clock.
    void rasterise(std::size_t row, std::int64_t t0Ns, double nsPerPx, int width,
                   std::int64_t jobEndNs, bool crashed, RankState* out) const;

    std::size_t memoryBytes() const;

    // The outermost span open on one of `rank`'s CPU threads at `rawNs` (its own clock) that is
    // not a collective's execution: what a HostBusy rank is inside. lane < 0 when none.
    struct OpenSpan {
        int lane = -1;
        std::int64_t event = -1;
    };
    // Where `jobs` mixes jobs, only the lanes of `job`.
    static OpenSpan openHostSpan(const EventStore& store, int rank, std::int64_t rawNs,
                                 const LaneJobs& jobs = {}, int job = -1);

private:
    std::vector<Row> m_rows;
    std::vector<int> m_keys; // rows' keys, ascending
    std::int64_t m_traceEndNs = 0;
    std::vector<std::pair<int, std::int64_t>> m_typicalLatenessNs; // (job, ns)
};

} // namespace rankscope
