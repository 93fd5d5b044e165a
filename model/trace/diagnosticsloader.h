#pragma once

#include "model/trace/logreader.h"
#include "model/trace/sourcefile.h"

#include <functional>

namespace rankscope {

struct TraceSession;

// Reads the Flight Recorder dumps and torchelastic error files of session.folder into
// session.dumps / errors / events.collectives, and sets each such source's status and message.
// `cancelled` is polled per file. Logs are read by loadSession's workers, beside the traces.
void readDiagnosticSources(TraceSession& session, const std::function<bool()>& cancelled);

// Appends one log file's streams to session.logs; a launcher log's untagged stream also gives
// the failure box torchelastic prints (session.errors).
void addLogStreams(TraceSession& session, LogReader::Result result, SourceKind kind);

} // namespace rankscope
