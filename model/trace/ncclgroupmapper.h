#pragma once

#include "model/store/eventstore.h"

#include <cstddef>
#include <string>
#include <vector>

namespace rankscope {

// A rank's NCCL COLL lines (NcclCollectives) and its c10d records (Kineto's Seq, Flight
// Recorder's collective_seq_id) describe the same calls under two numberings: NCCL's opCount per
// communicator, which also counts point-to-point launches and gives every line of a grouped
// launch one value, and ProcessGroupNCCL's per-group counter, which starts at 1 and counts
// collectives only. Left apart they make two matcher groups of one communicator, and every
// mismatch or hang in it is reported twice. This pass moves a communicator's NCCL records onto
// the c10d group and seq they describe, so that the matcher's per-rank dedupe merges the two
// sources; where the correspondence is not certain it leaves them as their own group.
//
// Per rank, the communicator's launches (lines of one opCount) are numbered two ways: every
// launch that is a collective counted on from the first opCount (c10d counting collectives
// only) and opCount itself (older c10d, one counter for all ops). A numbering, plus 1, must
// give the rank's c10d records of one group exactly the (op, element count, dtype) of the
// launch it names, wherever the trace's window and the log overlap (a dtype matches the NCCL
// datatype PyTorch runs it as, NcclCollectives::launchedAs: Bool is uint8, and a mapped launch
// takes c10d's spelling where some rank's record gives it); the group's members must
// be the communicator's (a c10d group without a member list is the world, as the matcher takes
// it, and is one group with the group of its name that some source lists with the world's
// members, unless its size says otherwise; the log joins the listed one). Every rank with
// c10d records of a group with the communicator's members must fit, and exactly one (group,
// numbering) must fit on all of them, up to numberings that give the same seqs. A rank that has
// only the log (no such c10d records) follows that numbering when its lines name the
// communicator's size and, unless c10d's seq is opCount itself, its log starts at the first
// launch; its records say nothing of completion (CollectiveRecord::stateUnknown), so next to
// the traced ranks' completed ones they are not taken for stuck calls. Otherwise (two groups or
// two numberings that part fit everywhere, a rank's records fit nothing, a log-only rank that
// cannot be numbered so) the communicator stays as it is on every rank, since a communicator
// mapped on some ranks only would show the others as missing from both groups.
//
// c10d records without a source seq (a trace without Seq, which its reader numbers from 1 at
// the first collective the trace saw) hold every collective of their group over the trace's
// window, in order, but say nothing of where the window began. Such a window is placed in the
// rank's log only where that can be shown: among all starts at which it overlaps the log's
// collective launches, exactly one has every overlapping record the same call as its launch,
// the window lies wholly within the log, and the log holds the communicator's first launch. In
// practice that is a trace from the run's first collective, or one opening on calls the log
// has nowhere else; a window of steady training steps fits at every step, and its
// communicator stays apart (counted as separate, so the loader warns). A placed window's
// records are renumbered with their launches' seqs, as every window of the group must be: one
// on a rank without the log, or one not placed, leaves the communicator as it is. The group's
// records need a name and a size, as a process group's have (Horovod's name a tensor and give
// no size). With no source seq in the group, the collectives-only numbering is as good as any
// and is taken.
//
// Point-to-point launches stay as they are (the matcher leaves them out). Linear in the
// records, times the groups of a rank with the same members; placing a window tries every
// start in the log, nearly all of which fail at their first call.
class NcclGroupMapper {
public:
    // A communicator left as a group of its own although a c10d group could be it on some
    // rank: its findings may repeat that group's, and the load says why.
    struct Separate {
        std::string communicator; // its group name, nccl:<commId>
        std::string reason;       // for people, e.g. which rank's records do not fit its log
    };
    struct Result {
        std::size_t mappedCommunicators = 0;
        std::vector<Separate> separate;
        std::size_t mappedRecords = 0;
    };
    // Records from `firstNcclRecord` on are NcclCollectives' (in the order it appended them),
    // those before it the other readers'.
    static Result map(EventStore& store, std::size_t firstNcclRecord);
};

} // namespace rankscope
