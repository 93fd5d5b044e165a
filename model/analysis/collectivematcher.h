#pragma once

#include "model/analysis/steptimeline.h"
#include "model/store/columnallocator.h"
#include "model/store/eventstore.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rankscope {

enum class MismatchKind : std::uint8_t {
    None,
    Participation,
    OpType,
    Size,
    Dtype,
    State,
    GroupSize, // members disagree on the group size the source gave (CollectiveRecord::groupSize)
    ReduceOp,  // sum on some ranks, max on others
    Root,      // a rooted collective (broadcast, reduce, gather, scatter) with different roots
};

const char* mismatchKindName(MismatchKind kind);

using TimeColumn = std::vector<std::int64_t, ColumnAllocator<std::int64_t>>;

// One collective of a group matched across its member ranks.
struct MatchedCollective {
    std::int64_t seq = -1;
    // Per member slot (CollectiveGroup::members order): index into EventStore::collectives,
    // -1 when that member has no record of this collective.
    std::vector<std::int32_t> records;
    StringId op = 0; // the op most members issued
    MismatchKind mismatch = MismatchKind::None;
    std::vector<int> culprits; // the ranks that deviate (missing, other op, other size, ...)
    std::string detail;        // what differs, for people
};

// A process group: its members and its collectives in sequence order.
struct CollectiveGroup {
    std::string name;         // the source's group name, empty when unknown
    std::vector<int> members; // the members that left something in the folder
    // Members the source names (CollectiveRecord::groupRanks) that left no trace, log or dump:
    // nothing is known of them, so no row counts them missing and no check blames them.
    std::vector<int> absentMembers;
    bool membersFromSource = false;
    // Ranks the group should have whose files record none of its collectives: the source-listed
    // members that left no such file, or (membership unknown) the job's ranks that left only a
    // log or an error file. Nothing of theirs can be compared, so no row counts them missing and
    // no finding blames or acquits them; `unrecordedWhy` says what they left, for people
    // ("rank 0 left no Flight Recorder dump (only a log)"). Set by the Analyzer from RankPresence.
    std::vector<int> unrecorded;
    std::string unrecordedWhy;
    // True when the source gave no group and no sequence numbers: collectives are matched by
    // their per-rank order instead.
    bool byOrdinal = false;
    // Why the members' collectives could not be paired, empty when they were. Records numbered
    // only by their rank's own order (no source seq) pair soundly only on complete traces of
    // one profiling window; on sampled or partial ones a guessed pair would invent mismatches
    // and clock offsets, so such a group keeps no rows.
    std::string unpairedReason;
    std::vector<MatchedCollective> collectives;
    int firstMismatch = -1; // index into collectives of the earliest mismatch (the cause)
    int mismatchCount = 0;  // all mismatching collectives; those after the first are consequences
    // When members' records start at different seqs (ring buffers trimmed, a profiler started
    // late) rows start at the first seq every member still holds; older ones are not compared,
    // so a rank is never called missing from a collective its buffer dropped. -1: not trimmed.
    std::int64_t comparedFromSeq = -1;
    // Per member slot m and row k, at [m * collectives.size() + k]: the execution start and end
    // of the member's record when it completed, else -1. The matcher fills them while it reads
    // the records anyway, so clock alignment and the straggler check read two compact columns
    // per member instead of every record again (10 M records of 160 bytes in a large job).
    TimeColumn completedStartNs, completedEndNs;

    int slotOf(int rank) const;
    // The group's size as its sources state it, absent members included (the size rules).
    std::size_t memberCount() const { return members.size() + absentMembers.size(); }
};

// The point-to-point ops from one rank to another in one group, as their sources record them
// (a Kineto trace's send/recv with the profiler's Src/Dst Rank, a Flight Recorder dump's
// "send a->b"): each rank posts its ops to a peer in a fixed order, so the k-th send src->dst
// pairs with the k-th recv on dst from src. A source's sequence number counts all of a rank's
// point-to-point ops, so it cannot pair them itself.
struct PointToPointLink {
    std::string group;
    int src = -1;
    int dst = -1;
    std::vector<std::int32_t> sends; // indices into EventStore::collectives, in src's order
    std::vector<std::int32_t> recvs; // in dst's order
    // The first pair whose tensors differ (Size or Dtype), -1 when every pair agrees.
    int firstMismatch = -1;
    MismatchKind mismatch = MismatchKind::None;
    // The ops one side has beyond the other's are unmatched only when the other rank's source
    // (the same kind: trace or dump) is in the folder; without it they are unknown, not missing.
    bool peerRecorded = true;
    std::size_t paired() const { return std::min(sends.size(), recvs.size()); }
};

struct AnalysisContext;
struct Finding;

// Keys every collective by (group name + member ranks, seq) and checks that the members agree.
class CollectiveMatcher {
public:
    // `presentRanks` are the ranks that left a trace, log or dump (the members of groups whose
    // membership is unknown); ranks with lanes or collectives in the store are added to it.
    // `steps`, when given, lets records numbered by order be paired only within one profiling
    // window.
    static std::vector<CollectiveGroup> match(const EventStore& store,
                                              std::vector<int> presentRanks = {},
                                              const StepTimeline* steps = nullptr);
    // Pairs the send and recv records that name their peer (CollectiveRecord::root), from every
    // source that records them, each source kind apart (a dump and a trace of one rank describe
    // the same ops). NCCL's COLL lines are left out: they name the peer by its rank in the
    // communicator, not in the job. Two traces whose first ops of a link fall in different
    // ProfilerSteps were profiled over different windows: such a link is not paired.
    static std::vector<PointToPointLink> pairPointToPoint(const EventStore& store,
                                                          const StepTimeline* steps = nullptr);
    // What the links show: a pair that moves different tensors (collective_mismatch, either
    // rank may be at fault), ops left over on one side (desync: the peer never posted the
    // other half).
    static std::vector<Finding> pointToPointFindings(const AnalysisContext& ctx,
                                                     const std::vector<PointToPointLink>& links);
};

} // namespace rankscope
