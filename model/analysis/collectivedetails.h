#pragma once

#include "model/analysis/analyzer.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rankscope {

struct TraceRead;

// What one member of a group did in one of its collectives, as decided from its record and the
// findings on that collective.
enum class CollectiveRankState : std::uint8_t {
    Completed,  // its record shows the collective completed
    Started,    // started and not completed when its source was written
    Issued,     // enqueued (a dump's "scheduled", a traced call with no execution), never started
    LoggedOnly, // known only from an NCCL COLL line, printed when the call is enqueued: issued,
                // whether it ran is not in the source
    // A hang or desync finding on this collective blames other ranks: this one started it and
    // waited in it for them without completing it (a traced span that ends did so at the
    // timeout: a collective cannot complete while a member never arrived).
    WaitedFor,
    NeverArrived, // left a trace, dump or COLL lines recording the group's collectives, and no
                  // record of this one
    NoRecord,     // a member that left no trace, dump or COLL line recording this group
};

// "completed", "waited_for", "no_record", ...
const char* collectiveRankStateName(CollectiveRankState state);

struct CollectiveRankRow {
    int rank = -1;
    std::int32_t record = -1; // index into EventStore::collectives, -1 without one
    CollectiveRankState state = CollectiveRankState::NoRecord;
    std::string op;    // the rank's own op (empty without a record)
    std::string dtype; // empty when the source does not say
    std::int64_t inNelems = -1, outNelems = -1;
    // The call's entry (its issue on the CPU, else its execution) and its end (the execution's,
    // else the issue's), on the rank's own clock; -1 when the record has none.
    std::int64_t enterNs = -1, exitNs = -1;
    std::vector<int> waitedFor; // WaitedFor: the ranks the finding blames (empty: it names none)
    std::string finding;        // WaitedFor: the id of the finding that says so
    // LoggedOnly: the log line the call was read from ("rank3_nccl.log:1"); NoRecord: what the
    // rank left instead ("no file at all", "only a log").
    std::string note;
};

// When a member entered a collective (its issue on the CPU, else its execution) and left it (the
// execution's end, else the issue's), on the rank's own clock; -1 where the record has none.
std::pair<std::int64_t, std::int64_t> collectiveEnterExit(const CollectiveRecord& c);

// Every member of a collective's group, each with its own op, size, dtype, times and state.
struct CollectiveDetails {
    std::vector<CollectiveRankRow> rows; // by rank
    // Members the sources count but do not name (a group stating its size only, larger than the
    // ranks seen): "2 more members of the group left no record; the sources do not say which".
    std::string unnamedMembers;
};

// Collective `collective` of `analysis.groups[group]`: one row per rank of the group's full
// membership, the members its sources list or, when they list none, the ranks of the group's
// stated size, else of the job's world size (RankPresence); a member that left no file recording
// the group's collectives reads NoRecord, one whose files hold no record of this collective
// NeverArrived. A
// member a hang or desync finding on this collective does not blame, whose record started and
// did not complete (a traced call with no execution included, or a span that ended while a
// member never arrived), WaitedFor those it blames.
CollectiveDetails collectiveDetails(const TraceRead& read, const AnalysisResult& analysis,
                                    int group, int collective);

// Records of one collective the analysis did not match across ranks (the timeline pairs them by
// group and seq): one row each, its state as its record says.
CollectiveDetails collectiveDetailsOfRecords(const TraceRead& read,
                                             const std::vector<std::size_t>& records);

} // namespace rankscope
