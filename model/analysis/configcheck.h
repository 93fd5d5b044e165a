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
// `launchedRanks` are the ranks that left any file: when every rank states one WORLD_SIZE and
// fewer ranks were launched, the ranks that never started are named (the others only time out).
class ConfigCheck {
public:
    static std::vector<Finding> check(const RankFacts& facts,
                                      const std::vector<int>& launchedRanks = {});
};

} // namespace rankscope
