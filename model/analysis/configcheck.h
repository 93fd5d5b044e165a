#pragma once

#include "model/analysis/finding.h"
#include "model/analysis/rankfacts.h"

#include <vector>

namespace rankscope {

// Settings every rank of one job must share, compared across the ranks' facts (RankFacts): the
// rendezvous address and port, the world size (a rank with another one never joins: the setup
// fails or hangs) and the PyTorch, CUDA and NCCL versions the ranks print or their traces state
// (mixed builds fail in odd ways). A value that a minority of ranks has is a config_mismatch
// naming those ranks; with no majority every rank that stated the setting is named.
//
// When every rank states one WORLD_SIZE, fewer ranks left files and none got past the
// rendezvous, the ranks that never started are named (RankPresence::neverStarted, the decision
// the missing-ranks warning and the all_ranks_present check read too): the others only time out.
class ConfigCheck {
public:
    static std::vector<Finding> check(const RankFacts& facts);
};

} // namespace rankscope
