#pragma once

#include "model/store/eventstore.h"
#include "model/trace/elasticerrorreader.h"
#include "model/trace/flightrecorderreader.h"
#include "model/trace/kinetoreader.h"
#include "model/trace/logreader.h"
#include "model/trace/ranklog.h"
#include "model/trace/tracefolder.h"

#include <functional>

namespace rankscope {

// Everything read from one trace folder, and nothing decided about it: what diagnose()
// (model/analysis/sessionanalysis.h) takes, so the same diagnosis can run on reads gathered from
// elsewhere.
struct TraceRead {
    TraceFolder folder;
    EventStore events;
    std::vector<RankLog> logs;             // per-rank text streams (launcher logs split by tag)
    std::vector<FlightRecorderDump> dumps; // their entries are also in events.collectives
    std::vector<ElasticError> errors;      // error files and the launcher's failure box
    QStringList warnings;                  // folder-level problems (folder.warnings() and more)
    // The read was cancelled: nothing of any source is kept (folder may list only part of it).
    bool cancelled = false;
};

// `progress(done, total)` is in bytes; `cancelled` is polled and ends the read early.
using ProgressFn = std::function<void(qint64 done, qint64 total)>;
using CancelFn = std::function<bool()>;
// Per file, from the thread that called readFolder: bytes of `source` read so far of `total`.
using FileProgressFn =
    std::function<void(int sourceIndex, const QString& relativePath, qint64 done, qint64 total)>;
// What the reader of one trace source (a Kineto trace, a Horovod timeline) left: its events and
// what it says of the source. Read in one process and merged in another (rankscope-digest).
struct TraceSourceRead {
    EventStore events;
    SourceStatus status = SourceStatus::Ok;
    std::string message;
    LoadLimit limit = LoadLimit::None;
    int worldSize = 0;
    std::string ncclVersion;
    std::optional<std::int64_t> statedRank;
    std::string backend;                          // see KinetoReadResult
    std::map<std::string, int> processGroupSizes; // see KinetoReadResult
    std::shared_ptr<const GzipIndex> gzipIndex;   // see KinetoReadResult
    std::int64_t eventsRead = 0;                  // KinetoReadResult::events
    std::int64_t bytesRead = 0;                   // KinetoReadResult::bytes
};
// The sources readFolder reads as traces (their events go into TraceRead::events).
bool isTraceSource(SourceKind kind);
// Reads trace source `sourceIndex` of a folder, as readFolder does.
TraceSourceRead readTraceSource(const SourceFile& source, int sourceIndex,
                                const KinetoReader::Budget& budget);
// The read of trace source `sourceIndex`, taken from elsewhere instead of its file.
using GivenTraceFn = std::function<TraceSourceRead(int sourceIndex)>;

struct ReadOptions {
    KinetoReader::Budget traceBudget; // per Kineto source, and for all of them (LoadShare)
    FileProgressFn fileProgress;
    LogReader::Budget logBudget;             // what the logs of this read may cost
    FlightRecorderReader::Budget dumpBudget; // per Flight Recorder dump, and for all of them
    GivenTraceFn givenTrace;                 // when set, every trace source's read comes from it
};

// Reads a folder synchronously: discovery, the dumps and error files, then every trace and log
// on the worker pool; NCCL's collective lines join the groups of the traces and dumps they
// describe.
TraceRead readFolder(const QString& dir, const ProgressFn& progress = {},
                     const CancelFn& cancelled = {}, const ReadOptions& options = {});
// The same over a folder already listed (discovered, or restored from a digest).
TraceRead readFolder(TraceFolder folder, const ProgressFn& progress = {},
                     const CancelFn& cancelled = {}, const ReadOptions& options = {});

} // namespace rankscope
