#include "model/analysis/sessionanalysis.h"

#include "model/analysis/analyzer.h"
#include "model/analysis/autocheckevaluator.h"
#include "model/kb/signatureset.h"
#include "model/kb/symptomclassifier.h"
#include "model/tracesession.h"

#include <algorithm>
#include <set>

namespace rankscope {

namespace {

// The study's catch-all leaf for a program failure during training: what an uncaught exception
// that no signature knows (an IndexError in user code, a KeyError in a data loader) most
// plausibly is, since the traceback proves the program failed but not how it relates to the
// distributed setup.
constexpr const char* kUnknownProgramFailure = "training-and-evaluation/program-failure/others";

void classifyStream(const RankLog& log, const SignatureSet& signatures,
                    std::vector<LogEvidence>& out)
{
    // Split streams are not contiguous in their file: scan a copy of just their lines.
    QByteArray text;
    QList<qsizetype> starts;
    starts.reserve(log.lineCount());
    for (int i = 0; i < log.lineCount(); ++i) {
        starts.append(text.size());
        text.append(log.lineBytes(i));
        text.append('\n');
    }
    std::set<int> fatalLines;
    if (!log.exceptions().empty()) fatalLines.insert(log.exceptions().back().lastLine);

    // A line without a timestamp (a traceback, a C++ message) happened at or after the last
    // stamped line before it.
    std::vector<std::int64_t> timeNs(std::size_t(log.lineCount()), -1);
    std::int64_t last = -1;
    for (int i = 0; i < log.lineCount(); ++i) {
        if (log.timestampNs(i) >= 0 && log.timestampHasDate(i)) last = log.timestampNs(i);
        timeNs[std::size_t(i)] = last;
    }

    const int rank = log.rank.value_or(-1);
    for (const SignatureHit& hit : signatures.scan(text, starts, /*withCues=*/false)) {
        const Signature& rule = signatures.signatures().at(hit.rule);
        const int i = int(hit.line);
        LogEvidence e;
        e.rank = rank;
        e.path = log.sourcePath.toStdString();
        e.line = log.lineNumber(i);
        e.text = hit.text.toStdString();
        e.symptom = rule.symptom.toStdString();
        e.cascade = rule.role == SignatureRole::Cascade;
        e.fatal = fatalLines.count(i) > 0;
        e.timeNs = timeNs[std::size_t(i)];
        out.push_back(std::move(e));
    }

    // The exception the rank died with is fatal evidence even when no signature knows it:
    // without it, a crash in user code leaves only its peers' connection errors to blame.
    if (log.exceptions().empty()) return;
    const LogException& died = log.exceptions().back();
    if (died.lastLine < 0 || died.lastLine >= log.lineCount()) return;
    // A traceback the program logged and then went on training from was handled, not fatal.
    for (const LogStep& s : log.steps())
        if (s.line > died.lastLine) return;
    for (const LogEvidence& e : out)
        if (e.fatal && e.rank == rank && e.path == log.sourcePath.toStdString()) return;
    const int from = std::max(0, died.firstLine);
    const qsizetype begin = starts[from];
    const qsizetype end =
        died.lastLine + 1 < starts.size() ? starts[died.lastLine + 1] : text.size();
    SymptomClassifier::Options options;
    options.useCues = false;
    const QList<Candidate> candidates =
        SymptomClassifier::instance().classify(text.mid(begin, end - begin), options);
    LogEvidence e;
    e.rank = rank;
    e.path = log.sourcePath.toStdString();
    e.line = log.lineNumber(died.lastLine);
    e.text = died.text();
    e.symptom = kUnknownProgramFailure;
    for (const Candidate& c : candidates)
        if (c.hasRoot) {
            e.symptom = c.symptom.toStdString();
            break;
        }
    e.fatal = true;
    e.timeNs = timeNs[std::size_t(died.lastLine)];
    out.push_back(std::move(e));
}

} // namespace

std::vector<LogEvidence> classifyLogs(const TraceSession& session)
{
    std::set<int> ranksWithOwnLog;
    for (const RankLog& log : session.logs)
        if (log.rank && !log.splitFromCombined) ranksWithOwnLog.insert(*log.rank);

    const SignatureSet& signatures = SignatureSet::builtin();
    std::vector<LogEvidence> evidence;
    for (const RankLog& log : session.logs) {
        if (log.rank && log.splitFromCombined && ranksWithOwnLog.count(*log.rank)) continue;
        if (!log.rank && !ranksWithOwnLog.empty()) continue;
        classifyStream(log, signatures, evidence);
    }
    return evidence;
}

void analyzeSession(TraceSession& session)
{
    std::vector<std::string> paths;
    for (const SourceFile& s : session.folder.sources())
        paths.push_back(s.relativePath.toStdString());
    std::vector<int> ranks;
    for (int r : session.folder.ranks())
        ranks.push_back(r);
    const std::vector<LogEvidence> logs = classifyLogs(session);
    session.analysis =
        Analyzer::run(session.events, std::move(paths), std::move(ranks), logs, session.dumps);
    session.autoChecks = AutoCheckEvaluator::evaluateAll(session, logs);
}

} // namespace rankscope
