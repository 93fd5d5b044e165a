#pragma once

#include "model/trace/ranklog.h"

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rankscope {

// A worker failure as torchelastic recorded it: a TORCHELASTIC_ERROR_FILE, or one entry of the
// ChildFailedError box that torchrun prints ("Failures:" / "Root Cause").
struct ElasticError {
    enum class Origin : std::uint8_t { ErrorFile, LauncherFailure, LauncherRootCause };
    Origin origin = Origin::ErrorFile;
    int sourceIndex = -1;
    int line = -1; // launcher entries: first line in the launcher's stream
    int lastLine = -1;
    std::optional<int> rank;
    std::optional<int> localRank;
    std::string exceptionType;    // "IndexError"; empty when only a signal or exit code is known
    std::string message;          // the text after "<ExcType>: "
    std::string traceback;        // py_callstack, or the entry's traceback text
    std::int64_t timestampS = -1; // seconds since the epoch; launcher entries: from `time`
    std::string time;             // launcher entries: "2026-12-02_13:41:44" as printed
    std::string host;
    std::optional<int> exitCode;
    std::optional<int> pid;
    std::string errorFile;
    std::string signal; // "SIGKILL" for "Signal 9 (SIGKILL) received by PID 1234"
};

class ElasticErrorReader {
public:
    // Parses an error file; nullopt with `error` when it is not one.
    static std::optional<ElasticError> readErrorFile(const QByteArray& bytes, QString* error);
    // The ChildFailedError entries of a launcher's own (untagged) lines.
    static std::vector<ElasticError> readLauncherLog(const RankLog& launcher);
};

} // namespace rankscope
