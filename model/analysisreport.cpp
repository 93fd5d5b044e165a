#include "model/analysisreport.h"

#include <QStringList>
#include <QTextStream>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace rankscope {

namespace {

nlohmann::ordered_json sourceJson(const SourceFile& s)
{
    nlohmann::ordered_json j;
    j["path"] = s.relativePath.toStdString();
    j["kind"] = sourceKindName(s.kind).toStdString();
    j["status"] = sourceStatusName(s.status).toStdString();
    j["message"] = s.message.toStdString();
    j["bytes"] = s.sizeBytes;
    if (!s.rankEvidence.isEmpty()) j["rank_evidence"] = s.rankEvidence.toStdString();
    return j;
}

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

nlohmann::ordered_json timeRange(const Finding& f)
{
    if (f.startNs < 0) return nullptr;
    return nlohmann::ordered_json::array({double(f.startNs) / 1000.0, double(f.endNs) / 1000.0});
}

QString ranksText(const std::vector<int>& ranks)
{
    QStringList l;
    for (int r : ranks)
        l << QString::number(r);
    return l.join(QStringLiteral(", "));
}

QString noFindings(const AnalysisResult& result)
{
    if (result.collectiveCount == 0 && result.logLineCount == 0)
        return QStringLiteral(
            "none; no collectives were read from the traces and no log lines were read, so the "
            "cross-rank checks had nothing to examine.");
    // A cut trace holds nothing after the cut: "no fault" covers only what it recorded.
    std::vector<int> cut;
    for (const auto& [rank, files] : result.presence.files)
        if (files & kCutTrace) cut.push_back(rank);
    const QString cutNote =
        cut.empty() ? QString()
                    : QStringLiteral(" The trace%1 of %2 %3 cut short: what %4 did after the cut "
                                     "is unknown.")
                          .arg(cut.size() > 1 ? QStringLiteral("s") : QString(),
                               QString::fromStdString(formatRanks(cut)),
                               cut.size() > 1 ? QStringLiteral("are") : QStringLiteral("is"),
                               cut.size() > 1 ? QStringLiteral("they") : QStringLiteral("it"));
    return QStringLiteral("none: the %1 collectives and %2 log lines read point at no fault.%3")
        .arg(result.collectiveCount)
        .arg(result.logLineCount)
        .arg(cutNote);
}

} // namespace

QString AnalysisReport::symptomText(const Finding& f)
{
    return f.symptom.empty() ? QStringLiteral("none (a fact about what the folder holds, not a "
                                              "fault)")
                             : q(f.symptom);
}

QString AnalysisReport::wholeMicros(std::int64_t ns)
{
    return QString::number(double(ns) / 1000.0, 'f', 0);
}

namespace {

QString findingsText(const AnalysisResult& result)
{
    QString out;
    QTextStream ts(&out);
    if (result.findings.empty()) {
        ts << "Findings: " << noFindings(result) << '\n';
        return out;
    }
    ts << "Findings:\n";
    for (const Finding& f : result.findings) {
        ts << "  " << q(f.id) << " [" << q(severityName(f.severity)) << "] "
           << q(findingKindName(f.kind));
        if (!f.ranks.empty()) ts << " rank " << ranksText(f.ranks);
        ts << ": " << q(f.summary) << '\n';
        ts << "     symptom: " << AnalysisReport::symptomText(f) << '\n';
        for (const Evidence& e : f.evidence) {
            ts << "     - " << q(e.path);
            if (e.line >= 0) ts << ':' << e.line;
            if (e.timeNs >= 0) ts << " @" << AnalysisReport::wholeMicros(e.timeNs) << "us";
            ts << "  " << q(e.text) << '\n';
        }
        if (!f.fixPatterns.empty()) {
            QStringList fixes;
            for (const std::string& p : f.fixPatterns)
                fixes << q(p);
            ts << "     fixes, best first: " << fixes.join(QStringLiteral(", ")) << '\n';
            if (!f.fixReason.empty()) ts << "     why: " << q(f.fixReason) << '\n';
        }
    }
    return out;
}

// Markdown cells and inline text must not break the table or the emphasis.
QString md(const std::string& s)
{
    QString t = q(s);
    t.replace(QLatin1Char('|'), QStringLiteral("\\|"));
    t.replace(QLatin1Char('\n'), QLatin1Char(' '));
    return t;
}

// The host a rank ran on, from its logs (NCCL prefixes, host= lines) or torchrun's failure box.
nlohmann::ordered_json hostOf(const TraceRead& read, int rank)
{
    for (const RankLog& log : read.logs)
        if (log.rank == rank && !log.host.empty()) return log.host;
    for (const ElasticError& e : read.errors)
        if (e.rank == rank && !e.host.empty()) return e.host;
    return nullptr;
}

// Every rank the folder tells of: ranks of files, and ranks known only from a combined launcher
// log's tagged lines, a Horovod coordinator's readiness ticks or another rank's trace.
std::vector<int> ranksOf(const TraceRead& read)
{
    std::set<int> ranks;
    for (int r : read.folder.ranks())
        ranks.insert(r);
    for (const RankLog& log : read.logs)
        if (log.rank) ranks.insert(*log.rank);
    for (const Lane& lane : read.events.lanes)
        if (lane.rank >= 0) ranks.insert(lane.rank);
    for (const CollectiveRecord& c : read.events.collectives)
        if (c.rank >= 0) ranks.insert(c.rank);
    return {ranks.begin(), ranks.end()};
}

// The rank's GPU time breakdown (the "Time per rank" chart's numbers over the whole run); null
// for a rank without GPU lanes.
const RankTimeBreakdown* gpuBreakdownOf(const AnalysisResult& result, int rank)
{
    for (const RankTimeBreakdown& b : result.breakdown)
        if (b.rank == rank && b.gpu) return &b;
    return nullptr;
}

nlohmann::ordered_json gpuTimeJson(const RankTimeBreakdown& b)
{
    const auto us = [](std::int64_t ns) { return double(ns) / 1000.0; };
    nlohmann::ordered_json j;
    j["window_us"] = us(b.windowNs());
    j["compute_us"] = us(b.computeNs);
    j["communication_us"] = us(b.commNs);
    j["memory_us"] = us(b.memNs);
    j["idle_us"] = us(b.idleNs);
    j["comm_compute_overlap_us"] = us(b.overlapNs);
    return j;
}

// A rank's files, and the combined logs its tagged lines came from.
QList<SourceFile> sourcesOf(const TraceRead& read, int rank)
{
    QList<SourceFile> sources = read.folder.sourcesOfRank(rank);
    const QList<SourceFile>& all = read.folder.sources();
    for (const RankLog& log : read.logs) {
        if (log.rank != rank || !log.splitFromCombined) continue;
        if (log.sourceIndex < 0 || log.sourceIndex >= all.size()) continue;
        const SourceFile& s = all[log.sourceIndex];
        const bool listed = std::any_of(sources.begin(), sources.end(), [&](const SourceFile& x) {
            return x.relativePath == s.relativePath;
        });
        if (!listed) sources.append(s);
    }
    return sources;
}

// "5 (3 ok, 1 error, 1 skipped)": the folder's files by status.
QString filesText(const TraceFolder& folder)
{
    std::map<SourceStatus, int> counts;
    for (const SourceFile& s : folder.sources())
        ++counts[s.status];
    QStringList parts;
    for (const auto& [status, n] : counts)
        parts << QStringLiteral("%1 %2").arg(n).arg(sourceStatusName(status));
    return parts.isEmpty() ? QStringLiteral("0")
                           : QStringLiteral("%1 (%2)")
                                 .arg(folder.sources().size())
                                 .arg(parts.join(QStringLiteral(", ")));
}

} // namespace

QString AnalysisReport::WorldSize::text() const
{
    if (stated > 0) return QString::number(std::max(stated, atLeast));
    return atLeast > 0 ? QStringLiteral("unknown (at least %1)").arg(atLeast)
                       : QStringLiteral("unknown");
}

AnalysisReport::WorldSize AnalysisReport::worldSize(const TraceRead& read,
                                                    const AnalysisResult& result)
{
    WorldSize w;
    if (result.statedWorldSize > 0 || result.worldSizeAtLeast > 0) {
        w.stated = result.statedWorldSize;
        w.atLeast = result.worldSizeAtLeast;
        return w;
    }
    w.stated = read.folder.statedWorldSize();
    for (const RankLog& log : read.logs)
        w.stated = std::max(w.stated, log.worldSize.value_or(0));
    const std::vector<int> ranks = ranksOf(read);
    w.atLeast = ranks.empty() ? 0 : ranks.back() + 1;
    return w;
}

nlohmann::ordered_json AnalysisReport::findingsJson(const AnalysisResult& result)
{
    auto out = nlohmann::ordered_json::array();
    for (const Finding& f : result.findings) {
        nlohmann::ordered_json j;
        j["id"] = f.id;
        j["kind"] = findingKindName(f.kind);
        j["symptom"] = f.symptom;
        j["severity"] = severityName(f.severity);
        j["ranks"] = f.ranks;
        j["process_group"] = f.processGroup.empty() ? nlohmann::ordered_json()
                                                    : nlohmann::ordered_json(f.processGroup);
        j["seq"] = f.seq >= 0 ? nlohmann::ordered_json(f.seq) : nlohmann::ordered_json();
        j["step"] = f.step >= 0 ? nlohmann::ordered_json(f.step) : nlohmann::ordered_json();
        j["time_range_us"] = timeRange(f);
        j["summary"] = f.summary;
        auto ev = nlohmann::ordered_json::array();
        for (const Evidence& e : f.evidence) {
            nlohmann::ordered_json x;
            x["path"] = e.path;
            if (e.line >= 0) x["line"] = e.line;
            if (e.timeNs >= 0) x["time_us"] = double(e.timeNs) / 1000.0;
            if (e.rank >= 0) x["rank"] = e.rank;
            x["text"] = e.text;
            ev.push_back(x);
        }
        j["evidence"] = ev;
        j["fix_patterns"] = f.fixPatterns;
        j["fix_reason"] = f.fixReason;
        j["conditions"] = f.conditions;
        out.push_back(j);
    }
    return out;
}

nlohmann::ordered_json AnalysisReport::symptomsJson(const AnalysisResult& result)
{
    auto out = nlohmann::ordered_json::array();
    for (const SymptomScore& s : result.symptoms) {
        nlohmann::ordered_json j;
        j["symptom"] = s.symptom;
        j["score"] = std::round(s.score * 1000.0) / 1000.0;
        j["findings"] = s.findings;
        out.push_back(j);
    }
    return out;
}

QString AnalysisReport::toMarkdown(const TraceRead& read, const AnalysisResult& result)
{
    const TraceFolder& folder = read.folder;
    QString out;
    QTextStream ts(&out);
    ts << "# RankScope analysis\n\n";
    ts << "- Folder: `" << folder.path() << "`\n";
    const std::vector<int> ranks = ranksOf(read);
    ts << "- Ranks: " << ranks.size() << " (world size " << worldSize(read, result).text() << ")\n";
    ts << "- Files: " << filesText(folder) << '\n';
    int errors = 0;
    for (const Finding& f : result.findings)
        errors += f.severity == Severity::Error;
    ts << "- Findings: " << result.findings.size() << " (" << errors << " errors)\n\n";
    if (!result.symptoms.empty()) {
        ts << "## Likely symptoms\n\n| symptom | score | findings |\n| --- | --- | --- |\n";
        for (const SymptomScore& s : result.symptoms) {
            QStringList ids;
            for (const std::string& id : s.findings)
                ids << q(id);
            ts << "| `" << md(s.symptom) << "` | " << QString::number(s.score, 'f', 2) << " | "
               << ids.join(QStringLiteral(", ")) << " |\n";
        }
        ts << '\n';
    }
    ts << "## Findings\n\n";
    if (result.findings.empty()) ts << noFindings(result) << "\n\n";
    for (const Finding& f : result.findings) {
        ts << "### " << q(f.id) << " · " << q(severityName(f.severity)) << " · "
           << q(findingKindName(f.kind));
        if (!f.ranks.empty())
            ts << " · " << (f.ranks.size() > 1 ? "ranks " : "rank ") << ranksText(f.ranks);
        ts << "\n\n" << md(f.summary) << "\n\n";
        if (f.symptom.empty())
            ts << "- Symptom: " << AnalysisReport::symptomText(f) << '\n';
        else
            ts << "- Symptom: `" << md(f.symptom) << "`\n";
        if (!f.processGroup.empty()) ts << "- Process group: `" << md(f.processGroup) << "`\n";
        if (f.seq >= 0) ts << "- Sequence: " << f.seq << '\n';
        if (f.step >= 0)
            ts << "- Step: ProfilerStep#" << f.step << " (the trace's own numbering)\n";
        if (f.startNs >= 0)
            ts << "- Time: " << AnalysisReport::wholeMicros(f.startNs) << " – "
               << AnalysisReport::wholeMicros(f.endNs) << " µs (aligned)\n";
        if (!f.fixPatterns.empty()) {
            QStringList fixes;
            for (const std::string& p : f.fixPatterns)
                fixes << QStringLiteral("`") + q(p) + QStringLiteral("`");
            ts << "- Fixes, best first: " << fixes.join(QStringLiteral(", ")) << '\n';
            if (!f.fixReason.empty()) ts << "- Why: " << md(f.fixReason) << '\n';
        }
        if (!f.evidence.empty()) {
            ts << "\n| source | where | evidence |\n| --- | --- | --- |\n";
            for (const Evidence& e : f.evidence) {
                QString where;
                if (e.line >= 0)
                    where = QStringLiteral("line %1").arg(e.line);
                else if (e.timeNs >= 0)
                    where = AnalysisReport::wholeMicros(e.timeNs) + QStringLiteral(" µs");
                ts << "| `" << md(e.path) << "` | " << where << " | " << md(e.text) << " |\n";
            }
        }
        ts << '\n';
    }
    ts << "## Clocks\n\n| rank | offset (µs) | note |\n| --- | --- | --- |\n";
    for (const auto& [rank, off] : result.clock.offsetNs) {
        const auto note = result.clock.notes.find(rank);
        ts << "| " << rank << " | "
           << (off ? QString::number(double(*off) / 1000.0, 'f', 1) : QStringLiteral("—")) << " | "
           << (note != result.clock.notes.end() ? md(note->second) : QString()) << " |\n";
    }
    return out;
}

nlohmann::ordered_json AnalysisReport::toJson(const TraceRead& read, const AnalysisResult& result)
{
    const TraceFolder& folder = read.folder;
    nlohmann::ordered_json doc;
    doc["schema"] = kSchema;
    doc["folder"] = folder.path().toStdString();
    const std::vector<int> known = ranksOf(read);
    const WorldSize world = worldSize(read, result);
    doc["world_size"] = world.stated > 0
                            ? nlohmann::ordered_json(std::max(world.stated, world.atLeast))
                            : nlohmann::ordered_json();
    doc["world_size_at_least"] = world.atLeast;
    auto ranks = nlohmann::ordered_json::array();
    for (int rank : known) {
        nlohmann::ordered_json r;
        r["rank"] = rank;
        r["host"] = hostOf(read, rank);
        auto sources = nlohmann::ordered_json::array();
        for (const SourceFile& s : sourcesOf(read, rank))
            sources.push_back(sourceJson(s));
        r["sources"] = sources;
        r["events"] = read.events.eventCountOfRank(rank);
        r["collectives"] = read.events.collectiveCountOfRank(rank);
        const auto off = result.clock.offsetNs.find(rank);
        if (off != result.clock.offsetNs.end() && off->second) {
            r["clock_offset_us"] = double(*off->second) / 1000.0;
        } else {
            r["clock_offset_us"] = nullptr;
            const auto note = result.clock.notes.find(rank);
            r["clock_note"] = note != result.clock.notes.end()
                                  ? note->second
                                  : std::string("no collective of this rank in the traces");
        }
        if (const RankTimeBreakdown* b = gpuBreakdownOf(result, rank))
            r["gpu_time"] = gpuTimeJson(*b);
        ranks.push_back(r);
    }
    doc["ranks"] = ranks;
    auto unattributed = nlohmann::ordered_json::array();
    for (int i = 0; i < folder.sources().size(); ++i) {
        const SourceFile& s = folder.sources()[i];
        if (s.rank) continue;
        nlohmann::ordered_json j = sourceJson(s);
        // A trace of no rank is still a process whose GPU time can be measured.
        for (const RankTimeBreakdown& b : result.breakdown)
            if (b.rank < 0 && b.sourceIndex == i && b.gpu) j["gpu_time"] = gpuTimeJson(b);
        unattributed.push_back(std::move(j));
    }
    doc["unattributed_sources"] = unattributed;
    auto warnings = nlohmann::ordered_json::array();
    for (const QString& w : read.warnings)
        warnings.push_back(w.toStdString());
    doc["warnings"] = warnings;
    doc["findings"] = findingsJson(result);
    doc["symptoms"] = symptomsJson(result);
    return doc;
}

QString AnalysisReport::toText(const TraceRead& read, const AnalysisResult& result)
{
    const TraceFolder& folder = read.folder;
    QString out;
    QTextStream ts(&out);
    ts << "Folder: " << folder.path() << '\n';
    const std::vector<int> ranks = ranksOf(read);
    ts << "Ranks: " << ranks.size() << " (world size " << worldSize(read, result).text() << ")\n";
    for (int rank : ranks) {
        ts << "  rank " << rank << '\n';
        for (const SourceFile& source : sourcesOf(read, rank)) {
            const SourceFile& s = source;
            ts << "    " << s.relativePath << "  [" << sourceKindName(s.kind) << ", "
               << sourceStatusName(s.status) << "]"
               << (s.message.isEmpty() ? QString() : QStringLiteral("  ") + s.message) << '\n';
        }
        ts << "    events: " << read.events.eventCountOfRank(rank)
           << ", collectives: " << read.events.collectiveCountOfRank(rank) << '\n';
    }
    const QList<SourceFile> unattributed = folder.unattributedSources();
    if (!unattributed.isEmpty()) {
        ts << "Not attributed to a rank:\n";
        for (const SourceFile& s : unattributed)
            ts << "    " << s.relativePath << "  [" << sourceKindName(s.kind) << ", "
               << sourceStatusName(s.status) << "]"
               << (s.message.isEmpty() ? QString() : QStringLiteral("  ") + s.message)
               << (s.rankEvidence.isEmpty()
                       ? QString()
                       : QStringLiteral("  (") + s.rankEvidence + QLatin1Char(')'))
               << '\n';
    }
    ts << findingsText(result);
    for (const QString& w : read.warnings)
        ts << "Warning: " << w << '\n';
    return out;
}

} // namespace rankscope
