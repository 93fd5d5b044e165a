#pragma once

// Synthetic sessions for the timeline's tests and benchmark: lanes and collectives built in
// memory, so the view can be exercised without the trace readers.

#include "model/store/lanelod.h"
#include "model/tracesession.h"

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace rankscope::synthetic {

struct Span {
    std::int64_t startNs;
    std::int64_t endNs;
    std::string_view name;
    EventCategory category = EventCategory::Kernel;
    std::uint8_t depth = 0;
};

// A lane from explicit spans (sorted by start by the caller).
inline Lane makeLane(StringTable& strings, int rank, LaneKind kind, std::int64_t pid,
                     std::int64_t tid, const std::vector<Span>& spans, std::string name = {})
{
    Lane lane;
    lane.rank = rank;
    lane.kind = kind;
    lane.pid = pid;
    lane.tid = tid;
    lane.name = std::move(name);
    lane.startNs.reserve(spans.size());
    lane.endNs.reserve(spans.size());
    lane.nameId.reserve(spans.size());
    lane.category.reserve(spans.size());
    lane.depth.reserve(spans.size());
    lane.sourceOffset.reserve(spans.size());
    for (const Span& s : spans) {
        lane.startNs.push_back(s.startNs);
        lane.endNs.push_back(s.endNs);
        lane.nameId.push_back(strings.intern(s.name));
        lane.category.push_back(s.category);
        lane.depth.push_back(s.depth);
        lane.sourceOffset.push_back(-1);
        lane.maxDepth = std::max(lane.maxDepth, s.depth);
    }
    return lane;
}

inline std::shared_ptr<TraceSession> finish(std::shared_ptr<TraceSession> session)
{
    session->laneLods = buildLaneLods(session->events);
    return session;
}

struct Spec {
    int ranks = 4;
    int gpuLanesPerRank = 2;
    int cpuLanesPerRank = 1;
    std::int64_t eventsPerLane = 1000;
    std::int64_t spanNs = 100'000'000;
    int collectiveEvery = 20; // every n-th event of a rank's first GPU stream is an all-reduce
    std::int64_t skewNsPerRank = 50'000; // rank r starts its collectives r * this later
    unsigned seed = 1;
};

// GPU streams of back-to-back kernels with random gaps; CPU threads with ops nesting two levels
// deep; on each rank's first stream an NCCL all-reduce every `collectiveEvery` events, recorded
// as a CollectiveRecord with group "0" and seq = its ordinal, so the same seq exists on every rank.
inline std::shared_ptr<TraceSession> makeSession(const Spec& spec)
{
    auto session = std::make_shared<TraceSession>();
    EventStore& store = session->events;
    std::mt19937_64 rng(spec.seed);
    const char* kernels[] = {"volta_sgemm_128x64_nn",
                             "void at::native::vectorized_elementwise_kernel",
                             "ampere_fp16_s1688gemm",
                             "void cudnn::winograd_nonfused::kernel",
                             "void at::native::reduce_kernel",
                             "Memcpy HtoD (Pageable -> Device)",
                             "Memset (Device)",
                             "void softmax_warp_forward"};
    const char* cpuOps[] = {"aten::linear",     "aten::addmm", "aten::relu",      "aten::conv2d",
                            "cudaLaunchKernel", "aten::empty", "c10d::allreduce_"};
    const StringId pg = store.strings.intern("0");
    const StringId op = store.strings.intern("all_reduce");
    const std::int64_t slot = std::max<std::int64_t>(4, spec.spanNs / spec.eventsPerLane);
    for (int r = 0; r < spec.ranks; ++r) {
        for (int g = 0; g < spec.gpuLanesPerRank; ++g) {
            std::vector<Span> spans;
            spans.reserve(std::size_t(spec.eventsPerLane));
            std::int64_t seq = 0;
            for (std::int64_t i = 0; i < spec.eventsPerLane; ++i) {
                const std::int64_t base = i * slot;
                const bool coll =
                    g == 0 && spec.collectiveEvery > 0 && i % spec.collectiveEvery == 0;
                const std::int64_t skew = coll ? std::min(slot / 4, r * spec.skewNsPerRank) : 0;
                const std::int64_t start =
                    base + skew + std::int64_t(rng() % std::uint64_t(slot / 4 + 1));
                const std::int64_t end = std::min(
                    base + slot - 1, start + 1 + std::int64_t(rng() % std::uint64_t(slot / 2 + 1)));
                if (coll) {
                    spans.push_back({start, end, "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                     EventCategory::CommKernel, 0});
                    CollectiveRecord c;
                    c.rank = r;
                    c.op = op;
                    c.processGroupName = pg;
                    c.seq = seq++;
                    c.seqFromSource = true;
                    c.groupSize = spec.ranks;
                    c.execStartNs = start;
                    c.execEndNs = end;
                    c.state = CollectiveRecord::State::Completed;
                    c.laneIndex = int(store.lanes.size());
                    c.eventIndex = std::int64_t(spans.size() - 1);
                    store.collectives.push_back(c);
                } else {
                    const std::size_t k = std::size_t(rng() % std::size(kernels));
                    const EventCategory cat = k == 5   ? EventCategory::Memcpy
                                              : k == 6 ? EventCategory::Memset
                                                       : EventCategory::Kernel;
                    spans.push_back({start, end, kernels[k], cat, 0});
                }
            }
            store.lanes.push_back(
                makeLane(store.strings, r, LaneKind::GpuStream, r, 7 + g, spans,
                         "GPU " + std::to_string(r) + " stream " + std::to_string(7 + g)));
        }
        for (int c = 0; c < spec.cpuLanesPerRank; ++c) {
            std::vector<Span> spans;
            const std::int64_t parents = std::max<std::int64_t>(1, spec.eventsPerLane / 3);
            const std::int64_t pslot = std::max<std::int64_t>(12, spec.spanNs / parents);
            for (std::int64_t i = 0; i < parents; ++i) {
                const std::int64_t s =
                    i * pslot + std::int64_t(rng() % std::uint64_t(pslot / 8 + 1));
                const std::int64_t e =
                    s + pslot / 2 + std::int64_t(rng() % std::uint64_t(pslot / 4 + 1));
                const std::size_t k = std::size_t(rng() % std::size(cpuOps));
                spans.push_back({s, e, cpuOps[k], EventCategory::CpuOp, 0});
                spans.push_back({s + 1, s + (e - s) / 2, "aten::addmm", EventCategory::CpuOp, 1});
                spans.push_back(
                    {s + 2, s + 2 + (e - s) / 8, "cudaLaunchKernel", EventCategory::Runtime, 2});
            }
            store.lanes.push_back(makeLane(store.strings, r, LaneKind::CpuThread, 1000 + r, 50 + c,
                                           spans, "python thread " + std::to_string(50 + c)));
        }
    }
    return finish(session);
}

} // namespace rankscope::synthetic
