#pragma once

#include <functional>

namespace rankscope {

struct TraceSession;

// Reads the logs, Flight Recorder dumps and torchelastic error files of session.folder into
// session.logs / dumps / errors / events.collectives, and sets each such source's status and
// message. `cancelled` is polled per file.
void readDiagnosticSources(TraceSession& session, const std::function<bool()>& cancelled);

} // namespace rankscope
