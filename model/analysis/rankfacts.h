#pragma once

#include "model/analysis/finding.h"
#include "model/trace/ranklog.h"
#include "model/trace/sourcefile.h"

#include <QList>
#include <QString>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rankscope {

struct TraceRead;
struct JobSplit;

// One fact about one rank: its value and where it was read (a log line: path, line and text; a
// trace's field: path and the field as text).
struct Fact {
    std::string value;
    Evidence source;
};
using PerRank = std::map<int, Fact>;

// The log streams that speak for the ranks, the one rule every check reads logs by: a rank's
// own log file; the lines a combined launcher log carries for a rank only when that rank has no
// log of its own (they are the same lines, seen twice); the launcher's untagged lines only when
// no rank has a log of its own (they repeat the ranks' output without saying whose).
std::vector<const RankLog*> rankLogStreams(const std::vector<RankLog>& logs);

// A version as the ranks' versions are compared: "2.18.1+cuda12.1" -> "2.18.1" (the CUDA build
// it names is the rank's CUDA version when the rank prints none, RankFacts::cudaVersion).
std::string comparableVersion(const std::string& version);
// The ranks of `among` (sorted; every rank when empty) that have a value, grouped by it.
std::map<std::string, std::vector<int>> ranksByValue(const PerRank& values,
                                                     const std::vector<int>& among = {});

// What the analysed job's files say about each of its ranks, read once (diagnose() builds it)
// and read by ConfigCheck and the auto-checks alike. Each rank's logs are the streams of
// rankLogStreams(); a fact is the first value those streams state, in their order.
// Holds pointers into the logs it was built from: it lives no longer than they do.
struct RankFacts {
    // The ranks of the job that left a file or lines of their own (sorted, distinct).
    std::vector<int> ranks;
    std::map<int, std::vector<const RankLog*>> logs; // per rank, its streams
    std::map<int, QString> traces;                   // per rank, its first trace (Kineto, Horovod)

    PerRank torchVersion;
    PerRank ncclVersion; // comparableVersion(); a rank's log first, else its trace's
                         // distributedInfo.nccl_version
    PerRank cudaVersion; // as printed; else the CUDA build NCCL names (+cudaX)
    PerRank masterAddr;  // MASTER_ADDR, master_addr=, master=host:port
    PerRank masterPort;
    PerRank worldSize;        // WORLD_SIZE / world_size= as the rank states it
    PerRank communicatorSize; // the largest NCCL communicator (nranks) the rank joined
    PerRank ncclNetwork;      // "Socket eth0", "IB mlx5_0,mlx5_1" (the first NET/ line)
    PerRank lastLogStep;      // the last step line of the rank's log
    // What the launcher's own (rank-less) lines state, by lower-case key: torchrun's
    // "Rendezvous complete ... master_port=".
    std::map<std::string, std::set<std::string>> launcherEnvironment;
    // The job's world size as its files state it: its traces' distributedInfo.world_size and
    // the logs' WORLD_SIZE / nranks, the largest; 0 when none does. `tracesWorldSize` is the
    // traces' alone.
    int statedWorldSize = 0;
    int tracesWorldSize = 0;

    // `sources` are the job's files (a folder's, or the analysed job's when it mixes jobs, so
    // that what set-aside traces state is not the job's); `ranks` the ranks those files are of.
    // `tracesWorldSize` as above (0: taken from `sources`).
    static RankFacts build(const std::vector<RankLog>& logs, const QList<SourceFile>& sources = {},
                           int tracesWorldSize = 0);
    // The facts of the job a read's diagnosis analyses (splitJobs()).
    static RankFacts of(const TraceRead& read, const JobSplit& jobs);
    static RankFacts of(const TraceRead& read);

    bool hasLog(int rank) const { return logs.count(rank) > 0; }
    std::vector<int> ranksWithout(const PerRank& values) const;
    // The largest number a value of `values` reads as (0 when none).
    static int largest(const PerRank& values);
    // Per rank, the first fact of `kind` its streams hold for which `pick` yields a value.
    PerRank first(LogFactKind kind, const std::function<std::string(const LogFact&)>& pick) const;
    // A log line as evidence (trimmed), attributed to the stream's rank.
    static Evidence lineEvidence(const RankLog& log, int index);
};

} // namespace rankscope
