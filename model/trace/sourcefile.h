#pragma once

#include <QString>
#include <optional>

namespace rankscope {

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

enum class SourceStatus { Ok, Truncated, Error };

QString sourceKindName(SourceKind kind);       // the CLI's spelling: "kineto", "nccl_log", ...
QString sourceStatusName(SourceStatus status); // "ok", "truncated", "error"

struct SourceFile {
    QString relativePath; // relative to the folder, '/' separated
    QString absolutePath;
    qint64 sizeBytes = 0;
    SourceKind kind = SourceKind::Unknown;
    std::optional<int> rank; // empty: the rank could not be told (never guessed as 0)
    QString rankEvidence;    // how the rank was told, e.g. "file name 'rank3'"
    SourceStatus status = SourceStatus::Ok;
    QString message; // one line for the user when status != Ok, or a note
};

} // namespace rankscope
