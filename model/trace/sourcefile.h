#pragma once

#include <QString>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

class QFile;

namespace rankscope {

struct GzipIndex;

// What a file in a trace folder is, decided from its content (and its name only as a tie-breaker).
enum class SourceKind {
    Kineto,          // Chrome-trace JSON from the PyTorch profiler (Kineto or legacy autograd)
    FlightRecorder,  // PyTorch Flight Recorder dump (pickle or JSON)
    HorovodTimeline, // HOROVOD_TIMELINE output
    ElasticError,    // torchelastic TORCHELASTIC_ERROR_FILE json
    NcclLog,         // a text log dominated by NCCL_DEBUG output
    LauncherLog,     // torchrun / mpirun combined console output
    Log,             // any other per-rank text log
    Unknown,         // nothing we read; listed so the user sees it was looked at
};

// Ok: read whole. Truncated: read up to a limit or a cut. Error: meant to be read (its name or
// content claims a format RankScope reads) and could not be. Skipped: content of a format
// RankScope does not read (an image, another tool's JSON, random bytes) under a name that claims
// none it reads: listed with what it is, never read, never counted as a loaded source.
// (New values go last: a digest keeps a trace's status by value.)
enum class SourceStatus { Ok, Truncated, Error, Skipped };

QString sourceKindName(SourceKind kind);       // the CLI's spelling: "kineto", "nccl_log", ...
QString sourceStatusName(SourceStatus status); // "ok", "truncated", "error", "skipped"
// Whether sources of `kind` are text logs (NcclLog, LauncherLog, Log), read by LogReader.
bool isLogSource(SourceKind kind);

// The load limit (a ReadOptions budget) that stopped reading a Truncated source: a larger one
// reads further. None for a source that is complete, or cut short by its own bytes.
enum class LoadLimit {
    None,
    TraceEvents,       // KinetoReader::Budget::maxEvents
    DecompressedBytes, // KinetoReader::Budget::maxInflatedBytes
    InflationRatio,    // KinetoReader::Budget::maxInflationRatio
    LogBytes,          // LogReader::Budget::bytesPerFile
    LogLines,          // LogReader::Budget::linesPerFile / linesPerLoad
    RankTags,          // LogReader::Budget::rankTagsPerFile / rankTagsPerLoad
    DumpEntries,       // FlightRecorderReader::Budget::maxEntries
    DumpBytes,         // FlightRecorderReader::Budget::maxDecodedBytes
    // A load's budgets, shared by its files (ReadOptions): a file stopped at its share of one.
    TraceEventsPerLoad,       // KinetoReader::Budget::maxEventsPerLoad
    DecompressedBytesPerLoad, // KinetoReader::Budget::maxInflatedBytesPerLoad
    DumpEntriesPerLoad,       // FlightRecorderReader::Budget::maxEntriesPerLoad
};
// What the limit is, for the user: "events per trace file", ...; empty for None.
QString loadLimitName(LoadLimit limit);
// The `rankscope analyze` flag that raises it: "--max-trace-events", ...; empty for None.
QString loadLimitFlag(LoadLimit limit);

// A source as discovery opened it: a regular file inside the folder, checked with fstat on the
// open descriptor. The readers read these bytes, never whatever the path names by the time they
// run (a file swapped for a link or a FIFO after discovery is not followed). A folder may hold
// 100k files while a process may have 1024 descriptors, so only the first kKeptDescriptors
// sources (over all folders open at once) keep theirs; the others are reopened by path without
// following links or blocking, and read only if the file opened is still the same regular file
// (st_dev, st_ino) that discovery classified.
class SourceDescriptor {
public:
    static constexpr int kKeptDescriptors = 256;

    // Takes ownership of `fd`, a regular file; may close it at once (see above).
    SourceDescriptor(int fd, QString resolvedPath);
    ~SourceDescriptor();
    SourceDescriptor(const SourceDescriptor&) = delete;
    SourceDescriptor& operator=(const SourceDescriptor&) = delete;

    // A new descriptor of the file at offset 0, which the caller closes; -1 and `error` when the
    // file is gone or is no longer the file discovery opened. Readers of one source take turns
    // (a kept descriptor is duplicated, and duplicates share their offset).
    int open(QString* error) const;

private:
    int m_fd = -1;          // -1 beyond the kept-descriptor limit
    QString m_resolvedPath; // links resolved (inside the folder), for reopening
    quint64 m_device = 0;
    quint64 m_inode = 0;
};

// What a source states about the job that wrote it, as written: what tells the files of two
// different jobs apart in one folder. Empty fields: not stated.
struct StatedJob {
    int worldSize = 0;                        // distributedInfo.world_size, world_size=, nranks
    QString backend;                          // distributedInfo.backend ("nccl", "gloo", ...)
    std::map<QString, int> processGroupSizes; // distributedInfo.pg_config: pg_name -> pg_size
    // The earliest start and latest end of the events read from a trace, on the trace's own
    // clock (ns); -1 when the source has no events.
    std::int64_t firstNs = -1;
    std::int64_t lastNs = -1;
};

struct SourceFile {
    QString relativePath; // relative to the folder, '/' separated
    QString absolutePath;
    qint64 sizeBytes = 0;
    SourceKind kind = SourceKind::Unknown;
    std::optional<int> rank; // empty: the rank could not be told (never guessed as 0)
    QString rankEvidence;    // how the rank was told, e.g. "file name 'rank3'"
    SourceStatus status = SourceStatus::Ok;
    QString message; // one line for the user when status != Ok (for Skipped: what it is), or a note
    LoadLimit limit = LoadLimit::None; // what stopped a Truncated source, when a limit did
    // What the content states that no other source may (a Kineto trace's
    // distributedInfo.nccl_version, as written), set by the reader; empty when not stated.
    QString statedNcclVersion;
    StatedJob stated; // set by discovery and completed by the readers
    // Set for every regular file discovery could open; null for what it refused (then status is
    // Error and `message` says why).
    std::shared_ptr<const SourceDescriptor> descriptor;
    // A gzip trace's inflate checkpoints, recorded by its reader, so that reading an event back
    // does not inflate the file from its start; null otherwise.
    std::shared_ptr<const GzipIndex> gzipIndex;

    // A descriptor to read the source through (see SourceDescriptor::open).
    int openForReading(QString* error) const;
    // The same, as a QFile that closes the descriptor.
    bool openForReading(QFile& file, QString* error) const;
};

} // namespace rankscope
