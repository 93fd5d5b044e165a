#pragma once

#include "model/analysis/finding.h"
#include "model/trace/ranklog.h"
#include "model/trace/sourcefile.h"

#include <QList>
#include <map>
#include <vector>

namespace rankscope {

// Settings every rank of one job must share, compared across the ranks' logs: the rendezvous
// address and port, the world size (a rank with another one never joins: the setup fails or
// hangs) and the PyTorch, CUDA and NCCL versions the ranks print (mixed builds fail in odd
// ways). A value that a minority of ranks has is a config_mismatch naming those ranks; with no
// majority every rank that printed the setting is named.
//
// `launchedRanks` are the ranks that left any file: when every rank states one WORLD_SIZE and
// fewer ranks were launched, the ranks that never started are named (the others only time out).
// `traceNcclVersions` (traceNcclVersions()) count for the ranks whose logs print no NCCL version.
class ConfigCheck {
public:
    struct Stated {
        std::string value;
        Evidence evidence;
    };
    static std::vector<Finding> check(const std::vector<RankLog>& logs,
                                      const std::vector<int>& launchedRanks = {},
                                      const std::map<int, Stated>& traceNcclVersions = {});
    // Per rank, the NCCL version its first trace that states one gives (a Kineto trace's
    // distributedInfo.nccl_version), as comparableVersion(), with the file as evidence.
    static std::map<int, Stated> traceNcclVersions(const QList<SourceFile>& sources);
    // A version as the ranks' versions are compared: "2.18.1+cuda12.1" -> "2.18.1" (the CUDA
    // build it names is compared as the CUDA version).
    static std::string comparableVersion(const std::string& version);
};

} // namespace rankscope
