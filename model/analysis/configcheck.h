#pragma once

#include "model/analysis/finding.h"
#include "model/trace/ranklog.h"

#include <vector>

namespace rankscope {

// Settings every rank of one job must share, compared across the ranks' logs: the rendezvous
// address and port, the world size (a rank with another one never joins: the setup fails or
// hangs) and the PyTorch, CUDA and NCCL versions the ranks print (mixed builds fail in odd
// ways). A value that a minority of ranks has is a config_mismatch naming those ranks; with no
// majority every rank that printed the setting is named.
class ConfigCheck {
public:
    static std::vector<Finding> check(const std::vector<RankLog>& logs);
};

} // namespace rankscope
