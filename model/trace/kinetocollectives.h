#pragma once

#include "model/store/eventstore.h"

#include <string>
#include <string_view>
#include <vector>

namespace rankscope {

// What the args of a communication event say (record_param_comms, nccl:* annotations, NCCL
// kernels); fields the source lacks stay empty / -1.
struct CommArgs {
    std::string op; // "Collective name" as written
    std::string dtype;
    std::int64_t inNelems = -1;
    std::int64_t outNelems = -1;
    int groupSize = -1;
    std::string groupName;
    std::string groupDesc;
    std::vector<int> groupRanks;
    std::int64_t seq = -1;
    std::int64_t correlation = -1; // CUDA correlation id (kernels), ties a kernel to its launch
    int peer = -1; // send: "Dst Rank", recv: "Src Rank" (global ranks; the profiler's p2p args)
};

struct CommEventArgs {
    int lane = -1;
    std::int64_t event = -1;
    CommArgs args;
};

// A process group as distributedInfo.pg_config lists it.
struct ProcessGroupInfo {
    std::string name;
    std::string desc;
    std::vector<int> ranks;
    int size = -1;
};

// "allreduce", "c10d::allreduce_", "nccl:all_reduce", "_broadcast_oop" (Flight Recorder),
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
// -> "all_reduce"; "" when the name is not a collective (e.g. "wait", "ncclDevKernel_Generic").
std::string normaliseCollectiveName(std::string_view name);

// Whether a normalised op moves data between two ranks only (send, recv, and NCCL's SendRecv
// kernel, which runs either): it counts in its own sequence (Flight Recorder's p2p_seq_id) and
// is paired, not matched across a whole group.
bool isPointToPointOp(std::string_view normalisedOp);

// Builds EventStore::collectives of one source from its finished lanes: the CPU call
// (c10d::* / record_param_comms / nccl:*, outermost one wins), its execution (the NCCL kernels its
// launches flow to, or else the first gloo:* span of the same kind starting after the call), and
// standalone NCCL kernels whose launch is not in the trace.
class CollectiveExtractor {
public:
    static void extract(EventStore& store, int rank, std::vector<CommEventArgs> args,
                        const std::vector<ProcessGroupInfo>& groups);
};

} // namespace rankscope
