#pragma once

#include "model/analysis/analysiscontext.h" // RankRange
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
struct EventStore;
struct ElasticError;

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

// What a rank left in the folder, as bits of RankFacts::files: the kind of evidence a check
// needs (a collective is compared only on ranks whose files record collectives).
enum RankFile : unsigned {
    kTraceFile = 1u,      // a profiler trace or timeline (its lanes or collectives)
    kDumpFile = 2u,       // a Flight Recorder dump
    kLogFile = 4u,        // a log of its own, or the lines a launcher log tags with it
    kErrorFile = 8u,      // torchelastic's error file, or its entry in the launcher's failure box
    kCollectiveLog = 16u, // log lines that record collectives (NCCL COLL lines)
    kOtherFile = 32u,     // a file of a kind the caller did not say (Analyzer::run without facts)
    kUnreadFile = 64u,    // a file of the rank that could not be read, or is of no kind read
    kCutTrace = 128u,     // with kTraceFile: the trace was cut short and records up to the cut
};
// "a trace", "a log and an error file": what `files` holds, for people.
std::string describeRankFiles(unsigned files);
// The kinds of files that record a rank's collectives (a rank that left none of them cannot be
// counted missing from one).
constexpr unsigned kRecordsCollectives = kTraceFile | kDumpFile | kCollectiveLog | kOtherFile;

// The one decision on which ranks the job has and which it lacks: the world size its files state
// (the largest of the ranks' WORLD_SIZE, the one most ranks state when they disagree, their NCCL
// communicators and the traces' distributedInfo.world_size, with where it is stated), the ranks
// process groups list as
// members, and what each rank left. The Analyzer's missing-ranks warning, ConfigCheck's
// never-started finding and the all_ranks_present auto-check all read it (RankFacts::presence).
struct RankPresence {
    int worldSize = 0;              // 0: no file states one
    std::string worldSizeStatedAs;  // "WORLD_SIZE", "NCCL nranks", "distributedInfo.world_size"
    Evidence worldSizeSource;       // where (path empty for a trace's field of an unnamed file)
    std::map<int, unsigned> files;  // per rank that left anything, RankFile bits
    std::vector<int> listedMembers; // ranks process groups list as members (sorted)
    std::vector<RankRange> absent;  // of [0, worldSize) and listedMembers: ranks that left nothing
    // Per rank, the first of its files set aside as another job's (JobSplit): in a folder that
    // mixes jobs a rank absent from the analysed job may have left files of another.
    std::map<int, std::string> setAside;
    // Every rank that states WORLD_SIZE states the same one, some ranks of it left nothing, and
    // no rank got past the rendezvous (no collective, no training step, no NCCL Init COMPLETE):
    // the absent ranks never started (ConfigCheck names them), rather than left no files here.
    bool neverStarted = false;

    std::vector<int> present() const;
    // The present ranks that left a file of one of `kinds`.
    std::vector<int> with(unsigned kinds) const;
    bool left(int rank, unsigned kinds) const;
};

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
    PerRank worldSize;        // WORLD_SIZE / world_size= as the rank states it last
    PerRank launchWorldSize;  // the first the rank states: what it was launched with
    PerRank communicatorSize; // the largest NCCL communicator (nranks) the rank joined
    PerRank ncclNetwork;      // "Socket eth0", "IB mlx5_0,mlx5_1" (the first NET/ line)
    PerRank lastLogStep;      // the last step line of the rank's log
    PerRank host;             // the rank's host: its log's NCCL prefix or host=, else its error
                              // file's / failure box entry's host
    PerRank cudaDevice;       // NCCL's cudaDev (init line, then line prefixes), else the device of
                              // the rank's GPU streams when its trace has them on one device only
    std::map<int, unsigned> files;       // per rank, what it left (RankFile bits)
    std::map<int, std::string> setAside; // RankPresence::setAside, set by of()
    std::vector<int> groupMembers;       // ranks the collective records' process groups list
    // Some rank got past the rendezvous: it recorded a collective, logged a training step, NCCL
    // Init COMPLETE or a watchdog's collective timeout.
    bool pastRendezvous = false;
    RankPresence presence; // decided from the above by decidePresence(), at the end of build/of
    // What the launcher's own (rank-less) lines state, by lower-case key: torchrun's
    // "Rendezvous complete ... master_port=".
    std::map<std::string, std::set<std::string>> launcherEnvironment;
    // The job's world size as its files state it: its traces' distributedInfo.world_size and
    // the logs' WORLD_SIZE / nranks, the largest; 0 when none does. When the ranks disagree on
    // their WORLD_SIZE it is the presence's (RankPresence::worldSize), not the largest any rank
    // states. `tracesWorldSize` is the traces' alone.
    int statedWorldSize = 0;
    int tracesWorldSize = 0;

    // `sources` are the job's files (a folder's, or the analysed job's when it mixes jobs, so
    // that what set-aside traces state is not the job's); `ranks` the ranks those files are of.
    // `tracesWorldSize` as above (0: taken from `sources`).
    static RankFacts build(const std::vector<RankLog>& logs, const QList<SourceFile>& sources = {},
                           int tracesWorldSize = 0);
    // The facts of the job a read's diagnosis analyses (splitJobs(); AnalysedJob builds them):
    // `read` is that job's read, `analysedEvents`, when given, withoutSources() of the read's
    // events for a folder that mixes jobs.
    static RankFacts of(const TraceRead& read, const JobSplit& jobs,
                        const EventStore* analysedEvents = nullptr);
    // What `events` (the analysed job's) show of the ranks: traces' and dumps' ranks, GPU stream
    // devices, group members, collectives; then the presence is decided again.
    void addEvents(const EventStore& events);
    // Error files and failure-box entries: their ranks and hosts.
    void addErrors(const std::vector<ElasticError>& errors, const QList<SourceFile>& sources);
    // The decision of RankPresence over these facts.
    RankPresence decidePresence() const;
    // The world size the ranks were meant to have when their last statements disagree: the one
    // every rank was launched with (when they all state one and some rank kept it), else the
    // one most ranks state; empty on a tie, or when they agree.
    std::string intendedWorldSize() const;

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
