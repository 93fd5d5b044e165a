#pragma once

#include "model/analysis/finding.h"
#include "model/investigation/investigation.h"
#include "model/store/parallelfor.h"

#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace rankscope {

struct AnalysisResult;
struct TraceRead;
struct RankFacts;

// What one auto-check of taxonomy/walkthroughs.json concluded on a loaded folder.
struct AutoCheckResult {
    QString checkId;
    AutoCheckOutcome outcome = AutoCheckOutcome::Unknown;
    QString summary;                // one or two sentences for people: why this outcome
    std::vector<Evidence> evidence; // the lines and trace events the outcome rests on
    // When Unknown: which rank lacks which fact ("rank 2: rank.env.MASTER_PORT").
    QStringList missing;

    // The summary, the missing facts and the evidence as "path:line: text" lines.
    QString evidenceText() const;
};

QString autoCheckOutcomeLabel(AutoCheckOutcome outcome); // "Passed", "Failed", "Unknown"
// The status a checklist step is pre-filled with: passed is done; nothing for failed (the check
// found the problem the step addresses: still to do) or unknown (the user has to look).
std::optional<StepStatus> suggestedStepStatus(AutoCheckOutcome outcome);

// Evaluates the auto-checks over the facts a session actually has: each rank's log facts
// (versions, logged environment, NCCL lines, steps), its trace (steps, collectives, GPU
// streams), the classified log lines, the analysis' findings and the folder's sources.
//
// A check fails on a contradiction it can show (two ranks disagree, a rank is missing); it is
// Unknown when a fact it needs is absent on some rank and nothing contradicts it yet; it passes
// only when every rank has every fact and they agree.
class AutoCheckEvaluator {
public:
    // The check ids this evaluator implements (every auto_check the walkthroughs declare).
    static QStringList checkIds();
    static bool canEvaluate(const QString& checkId);

    // One check, over what evaluateAll() reads: `read` and `facts` the analysed job's
    // (AnalysedJob, as diagnose() has them), `analysis` its analysis (Analyzer), `logs` its
    // classified log lines (classifyLogs(read)).
    static AutoCheckResult evaluate(const TraceRead& read, const RankFacts& facts,
                                    const AnalysisResult& analysis, const QString& checkId,
                                    const std::vector<Evidence>& logs);
    // Every check of checkIds(), in that order, over `facts` (the RankFacts diagnose() built for
    // the analysed job, which ConfigCheck read too); none when `control`'s stop flag was seen set
    // (polled between checks and every kLinesPerPoll lines of the checks that read whole logs).
    static std::vector<AutoCheckResult> evaluateAll(const TraceRead& read, const RankFacts& facts,
                                                    const AnalysisResult& analysis,
                                                    const std::vector<Evidence>& logs,
                                                    const ParallelControl& control = {});
    static constexpr int kLinesPerPoll = 1 << 16;
};

} // namespace rankscope
