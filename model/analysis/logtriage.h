#pragma once

#include "model/analysis/finding.h"

#include <vector>

namespace rankscope {

// Root versus cascade across ranks' logs: the earliest error that is not a consequence is the
// root; lines that follow from it on other ranks (peer connection closed, watchdog teardown,
// launcher SIGTERM) are its consequences. Ranks that only report having waited for a peer
// (a collective timeout) are victims, not culprits; the ranks that did not report it are the
// suspects.
class LogTriage {
public:
    struct Result {
        std::vector<Finding> findings;
        // Ranks whose logs say they timed out waiting inside a collective, and those lines.
        std::vector<int> waitingRanks;
        std::vector<Evidence> waitingEvidence;
        // Ranks that did not report waiting although others did, when that is a proper subset.
        std::vector<int> silentRanks;
        // The hang leaf every wait was read as, when they agree on one before training (the
        // group forming, or its first collectives while the model is prepared): the silent
        // ranks then kept that stage from finishing rather than stalled training. Empty else.
        std::string waitStageHang;
        // Ranks whose logs say a peer closed or reset the connection (not in a teardown).
        std::vector<int> lostPeerRanks;
    };
    // `worldRanks` are all ranks of the job (those with no log line count as silent).
    static Result triage(std::vector<Evidence> items, const std::vector<int>& worldRanks);

    // Appended to the text of a root finding's evidence lines that are consequences on other
    // ranks; the lines without it are the failing ranks' own.
    static constexpr const char* kConsequenceMark = "  [consequence]";

    // The finding kind for a root line of this symptom.
    static FindingKind kindOf(const Evidence& e);
    // Whether a line means "this rank waited for a peer", not "this rank failed": a training
    // hang, or a collective timeout of any stage.
    static bool isWaiting(const Evidence& e);
};

} // namespace rankscope
