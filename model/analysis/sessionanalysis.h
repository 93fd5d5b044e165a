#pragma once

#include "model/analysis/analyzer.h"
#include "model/analysis/autocheckevaluator.h"
#include "model/analysis/finding.h"
#include "model/analysis/rankfacts.h" // rankLogStreams(), which the log classification reads by

#include <string>
#include <vector>

namespace rankscope {

struct RankLog;
struct TraceRead;

// What the analysis concludes from one read: the cross-rank findings and symptoms, and the
// walkthroughs' auto-checks (which read those findings).
struct Diagnosis {
    AnalysisResult analysis;
    std::vector<AutoCheckResult> autoChecks;
    // diagnose() was told to stop: nothing was concluded (no findings, no checks).
    bool interrupted = false;
};

// The per-rank log lines of a read that the symptom classifier's signatures match, as the
// analysis consumes them: the lines of rankLogStreams().
// `linesScanned`, when given, receives how many log lines went through the classifier.
// `control` is polled every AutoCheckEvaluator::kLinesPerPoll lines; none when told to stop.
std::vector<Evidence> classifyLogs(const TraceRead& read, std::size_t* linesScanned = nullptr,
                                   const ParallelControl& control = {});

// Why nothing of the folder could be diagnosed ("the folder holds no files", "none of its 3
// files could be read: a.json: not JSON; ..."), or empty when some trace event, log line or
// dump was read: "nothing readable" is not "no fault found".
std::string nothingReadableReason(const TraceRead& read);

// The diagnosis of a read: a function of the read alone, which it leaves as it is.
// `control` (the loader's cancel) is polled in the long loops (the log classification, between
// the analysis' stages, the auto-checks); once its stop flag is set, diagnose() returns soon,
// an empty Diagnosis marked `interrupted`. A read whose lanes were reduced (a digest) comes with
// `breakdown`, TimeBreakdown::compute of its full lanes.
Diagnosis diagnose(const TraceRead& read, const ParallelControl& control = {},
                   const std::vector<RankTimeBreakdown>* breakdown = nullptr);

} // namespace rankscope
