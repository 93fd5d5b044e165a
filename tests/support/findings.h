#pragma once

#include "model/analysis/analyzer.h"
#include "model/analysis/autocheckevaluator.h"

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <set>

namespace rankscope {

// QCOMPARE prints a kind or a severity by its name (found by argument-dependent lookup).
inline char* toString(FindingKind kind)
{
    return qstrdup(findingKindName(kind).c_str());
}

inline char* toString(Severity severity)
{
    return qstrdup(severityName(severity).c_str());
}

} // namespace rankscope

namespace rankscope::test {

// The finding the report puts first among the errors (findings are ranked best first).
inline const Finding* topError(const AnalysisResult& result)
{
    for (const Finding& f : result.findings)
        if (f.severity == Severity::Error) return &f;
    return nullptr;
}

// Where an auto-check that passed says the opposite of a finding of the same diagnosis, one line
// per contradiction ("same_collective_sequence passed next to F1 (desync): ..."); empty when
// none does. A check passes on "nothing of the kind happened", so a warning or an error of the
// kind it rules out contradicts it; an info finding (a fact) does not.
inline QStringList contradictions(const AnalysisResult& result,
                                  const std::vector<AutoCheckResult>& checks)
{
    // What each check rules out when it passes.
    const std::vector<std::pair<QString, std::set<FindingKind>>> rulesOut = {
        {QStringLiteral("all_ranks_present"), {FindingKind::MissingRanks}},
        {QStringLiteral("no_straggler_rank"), {FindingKind::Straggler}},
        {QStringLiteral("same_collective_sequence"),
         {FindingKind::CollectiveMismatch, FindingKind::Desync, FindingKind::UnpairedCollectives}},
        {QStringLiteral("same_framework_version"), {FindingKind::ConfigMismatch}},
    };
    QStringList out;
    for (const AutoCheckResult& c : checks) {
        if (c.outcome != AutoCheckOutcome::Passed) continue;
        for (const auto& [id, kinds] : rulesOut) {
            if (id != c.checkId) continue;
            for (const Finding& f : result.findings)
                if (f.severity != Severity::Info && kinds.count(f.kind) &&
                    (f.kind != FindingKind::ConfigMismatch ||
                     f.summary.find("version") != std::string::npos))
                    out << QStringLiteral("%1 passed (%2) next to %3 (%4): %5")
                               .arg(c.checkId, c.summary, QString::fromStdString(f.id),
                                    QString::fromStdString(findingKindName(f.kind)),
                                    QString::fromStdString(f.summary));
        }
    }
    // The root the check names is the headline's cause: the first error.
    const Finding* top = topError(result);
    for (const AutoCheckResult& c : checks)
        if (top && c.checkId == QLatin1String("root_error_before_cascade") &&
            c.outcome == AutoCheckOutcome::Passed &&
            !c.summary.contains(QStringLiteral("(%1)").arg(QString::fromStdString(top->id))))
            out << QStringLiteral("root_error_before_cascade passed (%1) while the headline is "
                                  "%2: %3")
                       .arg(c.summary, QString::fromStdString(top->id),
                            QString::fromStdString(top->summary));
    return out;
}

} // namespace rankscope::test
