#pragma once

#include "model/store/ranklisttable.h"
#include "model/store/stringtable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rankscope {

// What an event is, as far as triage cares; from Kineto's `cat` (case-insensitive) or, for the
// legacy autograd-profiler JSON that has no `cat`, from the name.
enum class EventCategory : std::uint8_t {
    CpuOp,          // cpu_op, aten::*, c10d::* on the calling thread
    UserAnnotation, // user_annotation, ProfilerStep#N, nccl:* / gloo:* annotations
    PythonFunction,
    Runtime,    // cuda_runtime, cuda_driver, cuda_sync
    Kernel,     // compute kernel
    CommKernel, // NCCL kernel, or a gloo:* span that executes a collective
    Memcpy,
    Memset,
    Other,
};

enum class LaneKind : std::uint8_t { CpuThread, GpuStream };

// One timeline row source: a CPU thread (rank, pid, tid) or a GPU stream (rank, device, stream).
// Events are struct-of-arrays sorted by start; nesting depth is by time containment.
struct Lane {
    int rank = -1;
    LaneKind kind = LaneKind::CpuThread;
    std::int64_t pid = 0; // CPU: process id; GPU: device index
    std::int64_t tid = 0; // CPU: thread id; GPU: stream id
    std::string name;     // thread_name / "stream 7" when the trace names it, else derived
    // The trace's own metadata, empty when it has none: `process_labels` ("GPU 0", "CPU") and
    // `thread_name` as written ("stream 7 ", "thread 4515 (python3.8)").
    std::string processLabel;
    std::string threadName;

    std::vector<std::int64_t> startNs;
    std::vector<std::int64_t> endNs;
    std::vector<StringId> nameId;
    std::vector<EventCategory> category;
    std::vector<std::uint8_t> depth;
    // Byte offset of the event's JSON object in the (decompressed) source, so details such as
    // args are read back on demand instead of being held in memory for every event.
    std::vector<std::int64_t> sourceOffset;
    int sourceIndex = -1; // which SourceFile of the folder the lane came from
    std::uint8_t maxDepth = 0;
    // Events that were still open when the trace ended (a `B` without its `E`): closed at the
    // trace end. Sorted event indices; a hang looks like this.
    std::vector<std::int64_t> unfinished;

    bool isUnfinished(std::int64_t event) const;

    std::size_t size() const { return startNs.size(); }

    // The fields of the lane itself (not of its events), as f(name, field of each lane) on one
    // or more lanes, const or not (two to copy one from the other): the one list of them that
    // the digest writes, reads and copies into a subset and scan_bench hashes.
    template <typename F, typename... Lanes>
    static constexpr void forEachHeaderField(F&& f, Lanes&... lanes)
    {
        f("rank", lanes.rank...);
        f("kind", lanes.kind...);
        f("pid", lanes.pid...);
        f("tid", lanes.tid...);
        f("name", lanes.name...);
        f("processLabel", lanes.processLabel...);
        f("threadName", lanes.threadName...);
        f("sourceIndex", lanes.sourceIndex...);
        f("maxDepth", lanes.maxDepth...);
    }
    // Likewise the columns of one value per event besides the times (startNs, endNs), which
    // every user handles apart (the digest writes them as deltas). With these two lists, the
    // times and `unfinished`, a lane is whole: tst_digest's laneRoundTrips binds every field.
    template <typename F, typename... Lanes>
    static constexpr void forEachEventColumn(F&& f, Lanes&... lanes)
    {
        f("nameId", lanes.nameId...);
        f("category", lanes.category...);
        f("depth", lanes.depth...);
        f("sourceOffset", lanes.sourceOffset...);
    }
};

// A collective operation as one record, whatever the source (Kineto record_param_comms,
// nccl:/gloo: annotations, NCCL kernels, Flight Recorder entries, watchdog lines).
struct CollectiveRecord {
    enum class State : std::uint8_t { Issued, Started, Completed };

    // Field order matters: large jobs hold 10 M records, and the analysis walks them several
    // times. Everything the matcher keys and compares on fits the record's first 64 bytes, the
    // times the next 32, and the record is 120 bytes (no vector in it).
    int rank = -1;
    StringId op = 0;               // normalised: all_reduce, broadcast, barrier, all_gather, ...
    StringId processGroupName = 0; // "0" for the default group when known, else ""
    StringId processGroupDesc = 0;
    RankListId groupRanks = 0; // EventStore::rankLists; 0 (empty) when the source does not say
    int groupSize = -1;
    std::int64_t seq = -1; // the source's sequence number, else the per-group ordinal
    std::int64_t inNelems = -1;
    std::int64_t outNelems = -1;
    StringId dtype = 0;
    StringId reduceOp = 0; // sum, max, ... where the source says (NCCL COLL lines)
    int root = -1;         // broadcast/reduce/gather/scatter root, or a send's / recv's peer (as
                           // NCCL's COLL lines put it), where the source says
    State state = State::Issued;
    bool seqFromSource = false; // true when `seq` came from the source rather than counting
    bool coalesced = false;     // a coalescing block of several ops, matched as one collective
    // The source shows that the call was issued, never whether it ran (NCCL's COLL lines):
    // `state` says nothing about it, and no check may count the record as completed or stuck.
    bool stateUnknown = false;
    std::int64_t issueStartNs = -1; // the call on the CPU (c10d::*, record_param_comms)
    std::int64_t issueEndNs = -1;
    std::int64_t execStartNs = -1; // the execution: GPU kernel or gloo worker span
    std::int64_t execEndNs = -1;
    int step = -1;                // ProfilerStep index (counted in time order), -1 unknown
    int laneIndex = -1;           // the lane and event in the store that show the execution,
    std::int64_t eventIndex = -1; // or the issue when nothing executed
    int sourceIndex = -1;         // the SourceFile it came from (e.g. a Flight Recorder dump)
    int sourceLine = -1;          // 1-based line in that source, for records read from a log

    // Every field above in their order, as f(name, field) on `self` (a record, const or not):
    // the one list of the fields that the digest writes and reads and scan_bench hashes. A field
    // added above and not here fails the static_assert below the record.
    template <typename Self, typename F> static constexpr void forEachField(Self& self, F&& f)
    {
        f("rank", self.rank);
        f("op", self.op);
        f("processGroupName", self.processGroupName);
        f("processGroupDesc", self.processGroupDesc);
        f("groupRanks", self.groupRanks);
        f("groupSize", self.groupSize);
        f("seq", self.seq);
        f("inNelems", self.inNelems);
        f("outNelems", self.outNelems);
        f("dtype", self.dtype);
        f("reduceOp", self.reduceOp);
        f("root", self.root);
        f("state", self.state);
        f("seqFromSource", self.seqFromSource);
        f("coalesced", self.coalesced);
        f("stateUnknown", self.stateUnknown);
        f("issueStartNs", self.issueStartNs);
        f("issueEndNs", self.issueEndNs);
        f("execStartNs", self.execStartNs);
        f("execEndNs", self.execEndNs);
        f("step", self.step);
        f("laneIndex", self.laneIndex);
        f("eventIndex", self.eventIndex);
        f("sourceIndex", self.sourceIndex);
        f("sourceLine", self.sourceLine);
    }
};
static_assert(sizeof(CollectiveRecord) == 120, "see the note on field order");

// Whether T::forEachField lists each field of T once and all of them: the listed fields are
// distinct and their sizes add up to T's (T has no padding).
template <typename T> constexpr bool listsEachFieldOnce()
{
    T t;
    const void* seen[sizeof(T)] = {};
    std::size_t fields = 0, bytes = 0;
    bool distinct = true;
    T::forEachField(t, [&](const char*, const auto& field) {
        for (std::size_t i = 0; i < fields; ++i)
            distinct = distinct && seen[i] != &field;
        seen[fields++] = &field;
        bytes += sizeof field;
    });
    return distinct && bytes == sizeof(T);
}
static_assert(listsEachFieldOnce<CollectiveRecord>(),
              "CollectiveRecord::forEachField must list every field of the record once");

// A flow arrow (`s` -> `f`), e.g. a CPU kernel launch to its GPU kernel (cat `ac2g`, id = the
// CUDA correlation id) or forward to backward (`fwdbwd`). Endpoints are bound to the innermost
// event of their lane that contains the flow's timestamp.
// 20 bytes: a GPU trace has about one flow per kernel, so flows are counted in millions.
struct FlowLink {
    std::int32_t fromLane = -1;
    std::int32_t toLane = -1;
    std::uint32_t fromEvent = 0; // event index within the lane
    std::uint32_t toEvent = 0;
    StringId category = 0;

    // Every field above in their order, as f(name, field) on `self` (a flow, const or not): the
    // one list of the fields that the digest writes and reads and scan_bench hashes.
    template <typename Self, typename F> static constexpr void forEachField(Self& self, F&& f)
    {
        f("fromLane", self.fromLane);
        f("toLane", self.toLane);
        f("fromEvent", self.fromEvent);
        f("toEvent", self.toEvent);
        f("category", self.category);
    }
};
static_assert(sizeof(FlowLink) == 20, "flows are counted in millions");
static_assert(listsEachFieldOnce<FlowLink>(),
              "FlowLink::forEachField must list every field of the flow once");

// All events of a session. Built by the readers, then immutable and shared.
struct EventStore {
    StringTable strings;
    RankListTable rankLists;
    std::vector<Lane> lanes;
    std::vector<CollectiveRecord> collectives;
    std::vector<FlowLink> flows; // sorted by (toLane, toEvent)

    // Moves `other`'s lanes, collectives and flows in, re-interning its strings; `other` is
    // left empty. Readers build one store per source and the loader merges them.
    void merge(EventStore&& other);
    // The flow arriving at (lane, event), e.g. the launch of a kernel, or nullptr.
    const FlowLink* flowInto(int lane, std::int64_t event) const;

    std::int64_t eventCount() const;
    std::int64_t eventCountOfRank(int rank) const;
    std::int64_t collectiveCountOfRank(int rank) const;
    // Earliest start and latest end over all lanes; {0, 0} when empty.
    std::pair<std::int64_t, std::int64_t> timeRangeNs() const;
};

// Index of the first event of `lane` whose end is after `tNs`, assuming a lane's events of one
// depth do not overlap; the visible slice of a row starts there.
std::size_t firstEndingAfter(const Lane& lane, std::int64_t tNs);

// Index of the innermost event of `lane` that contains `tNs` (start <= t <= end), or -1.
std::int64_t innermostAt(const Lane& lane, std::int64_t tNs);

} // namespace rankscope
