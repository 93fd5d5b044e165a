#include "model/analysis/sessionanalysis.h"

#include "model/analysis/analyzer.h"
#include "model/kb/signatureset.h"
#include "model/tracesession.h"

#include <set>

namespace rankscope {

namespace {

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
    session.analysis =
        Analyzer::run(session.events, std::move(paths), std::move(ranks), classifyLogs(session));
}

} // namespace rankscope
