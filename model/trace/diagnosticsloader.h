#pragma once

#include "model/trace/flightrecorderreader.h"
#include "model/trace/logreader.h"
#include "model/trace/sourcefile.h"

#include <functional>

namespace rankscope {

struct TraceRead;

// Reads the Flight Recorder dumps and torchelastic error files of read.folder into
// read.dumps / errors / events.collectives, and sets each such source's status and message.
// `cancelled` is polled per file; each dump is read up to `budget`, and all of them up to its
// per-load entry budget (each to its share, see LoadShare). Logs are read by readFolder's
// workers, beside the traces.
void readDiagnosticSources(TraceRead& read, const std::function<bool()>& cancelled,
                           const FlightRecorderReader::Budget& budget = {});

// Appends one log file's streams to read.logs; a launcher log's untagged stream also gives
// the failure box torchelastic prints (read.errors).
void addLogStreams(TraceRead& read, LogReader::Result result, SourceKind kind);

} // namespace rankscope
