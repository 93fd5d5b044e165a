#pragma once

#include "model/store/eventstore.h"
#include "model/trace/ranklog.h"

#include <vector>

namespace rankscope {

// Collective records from the lines NCCL prints per call with NCCL_DEBUG_SUBSYS=COLL
// ("AllReduce: opCount 1a ... count N datatype T op O root R comm 0x..."). Lines name the
// communicator by a per-process pointer, so each log's init lines ("comm 0x.. rank R nranks N
// ... commId 0x..") map it to the commId that every member shares; a record's group is that
// commId and its sequence number the call's opCount (NCCL's per-communicator counter, which
// differs from c10d's, hence a group of its own until NcclGroupMapper moves it onto the c10d
// group a trace or dump shows it to be). Members are the ranks whose logs joined the
// communicator. Lines of a communicator without a commId (older NCCL) cannot be matched
// across ranks and are left out; the count is returned per log.
class NcclCollectives {
public:
    struct Result {
        std::size_t appended = 0;
        std::size_t withoutCommId = 0; // COLL lines whose communicator has no known commId
    };
    // `logs` are all streams of a session: membership needs every rank's init lines.
    static Result append(const std::vector<RankLog>& logs, EventStore& store);

    // "AllReduce" -> "all_reduce", as the other readers name ops.
    static std::string opName(std::string_view ncclName);
    // NCCL's ncclDataType_t number -> the dtype name PyTorch prints ("Float").
    static std::string dtypeName(std::string_view number);
    // Whether PyTorch runs a tensor of `dtype` (as c10d, Flight Recorder or the profiler name it:
    // "Bool", "Float", "c10::Half") as the NCCL datatype that dtypeName calls `ncclDtype`: a Bool
    // tensor goes as uint8, which dtypeName calls "Byte". The one table of these spellings.
    static bool launchedAs(std::string_view dtype, std::string_view ncclDtype);
    // ncclRedOp_t number -> "sum", "max", ...
    static std::string reduceOpName(std::string_view number);
};

} // namespace rankscope
