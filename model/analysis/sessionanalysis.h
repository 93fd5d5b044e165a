#pragma once

#include "model/analysis/analyzer.h"
#include "model/analysis/autocheckevaluator.h"
#include "model/analysis/finding.h"
#include "model/analysis/jobsplit.h"
#include "model/analysis/rankfacts.h" // rankLogStreams(), which the log classification reads by
#include "model/trace/traceread.h"

#include <optional>
#include <string>
#include <vector>

namespace rankscope {

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

// The job a read's diagnosis analyses (splitJobs()), as every check sees it: the read with the
// other jobs' traces belonging to no rank, and their logs, dumps and error files left out where
// they were told apart too (JobSplit::setsAsideEveryFile()), and its ranks' facts. diagnose() and
// the per-check auto-check path both start from it, so neither reads another job's files.
// The facts point into the read it holds: it is neither copied nor moved.
class AnalysedJob {
public:
    explicit AnalysedJob(const TraceRead& folderRead);
    AnalysedJob(const AnalysedJob&) = delete;
    AnalysedJob& operator=(const AnalysedJob&) = delete;

    const JobSplit& jobs() const { return m_jobs; }
    const TraceRead& read() const { return m_read ? *m_read : m_folderRead; }
    const EventStore& events() const { return m_events ? *m_events : read().events; }
    const RankFacts& facts() const { return m_facts; }

private:
    const TraceRead& m_folderRead;
    JobSplit m_jobs;
    std::optional<TraceRead> m_read;    // set when the other jobs' every file is set aside
    std::optional<EventStore> m_events; // set when only the other jobs' traces are
    RankFacts m_facts;
};

// The diagnosis of a read: a function of the read alone, which it leaves as it is.
// `control` (the loader's cancel) is polled in the long loops (the log classification, between
// the analysis' stages, the auto-checks); once its stop flag is set, diagnose() returns soon,
// an empty Diagnosis marked `interrupted`. A read whose lanes were reduced (a digest) comes with
// `breakdown`, TimeBreakdown::compute of its full lanes.
Diagnosis diagnose(const TraceRead& read, const ParallelControl& control = {},
                   const std::vector<RankTimeBreakdown>* breakdown = nullptr);

} // namespace rankscope
