#pragma once

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
    std::string name; // the source's group name, empty when unknown
    std::vector<int> members;
    bool membersFromSource = false;
    // True when the source gave no group and no sequence numbers: collectives are matched by
    // their per-rank order instead.
    bool byOrdinal = false;
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
};

// Keys every collective by (group name + member ranks, seq) and checks that the members agree.
class CollectiveMatcher {
public:
    // `worldRanks` are the ranks of the job (members of groups whose membership is unknown);
    // ranks that left collectives in the store are added to it.
    static std::vector<CollectiveGroup> match(const EventStore& store,
                                              std::vector<int> worldRanks = {});
};

} // namespace rankscope
