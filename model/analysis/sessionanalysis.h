#pragma once

#include "model/analysis/logevidence.h"

#include <vector>

namespace rankscope {

struct TraceSession;

// The per-rank log lines of a session that the symptom classifier's signatures match, as the
// analysis consumes them. A rank's own log file is preferred; lines a combined launcher log
// carries for a rank are used only when that rank has no log of its own, and the launcher's
// untagged lines only when no rank has one (they repeat the ranks' output without saying whose).
// `linesScanned`, when given, receives how many log lines went through the classifier.
std::vector<LogEvidence> classifyLogs(const TraceSession& session,
                                      std::size_t* linesScanned = nullptr);

// Runs the cross-rank analysis on a loaded session and stores it in session.analysis.
void analyzeSession(TraceSession& session);

} // namespace rankscope
