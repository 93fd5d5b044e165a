#include "model/analysisreport.h"

#include <QTextStream>

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

// The host a rank ran on, from its logs (NCCL prefixes, host= lines) or torchrun's failure box.
nlohmann::ordered_json hostOf(const TraceSession& session, int rank)
{
    for (const RankLog& log : session.logs)
        if (log.rank == rank && !log.host.empty()) return log.host;
    for (const ElasticError& e : session.errors)
        if (e.rank == rank && !e.host.empty()) return e.host;
    return nullptr;
}

} // namespace

nlohmann::ordered_json AnalysisReport::toJson(const TraceSession& session)
{
    const TraceFolder& folder = session.folder;
    nlohmann::ordered_json doc;
    doc["schema"] = kSchema;
    doc["folder"] = folder.path().toStdString();
    doc["world_size"] = folder.worldSize();
    auto ranks = nlohmann::ordered_json::array();
    for (int rank : folder.ranks()) {
        nlohmann::ordered_json r;
        r["rank"] = rank;
        r["host"] = hostOf(session, rank);
        auto sources = nlohmann::ordered_json::array();
        for (const SourceFile& s : folder.sourcesOfRank(rank))
            sources.push_back(sourceJson(s));
        r["sources"] = sources;
        r["events"] = nullptr; // filled once the trace readers run
        r["collectives"] = nullptr;
        r["clock_offset_us"] = nullptr;
        ranks.push_back(r);
    }
    doc["ranks"] = ranks;
    auto unattributed = nlohmann::ordered_json::array();
    for (const SourceFile& s : folder.unattributedSources())
        unattributed.push_back(sourceJson(s));
    doc["unattributed_sources"] = unattributed;
    auto warnings = nlohmann::ordered_json::array();
    for (const QString& w : session.warnings)
        warnings.push_back(w.toStdString());
    doc["warnings"] = warnings;
    doc["findings"] = nlohmann::ordered_json::array();
    doc["symptoms"] = nlohmann::ordered_json::array();
    return doc;
}

QString AnalysisReport::toText(const TraceSession& session)
{
    const TraceFolder& folder = session.folder;
    QString out;
    QTextStream ts(&out);
    ts << "Folder: " << folder.path() << '\n';
    ts << "Ranks: " << folder.ranks().size() << " (world size " << folder.worldSize() << ")\n";
    for (int rank : folder.ranks()) {
        ts << "  rank " << rank << '\n';
        for (const SourceFile& s : folder.sourcesOfRank(rank))
            ts << "    " << s.relativePath << "  [" << sourceKindName(s.kind) << ", "
               << sourceStatusName(s.status) << "]"
               << (s.message.isEmpty() ? QString() : QStringLiteral("  ") + s.message) << '\n';
    }
    const QList<SourceFile> unattributed = folder.unattributedSources();
    if (!unattributed.isEmpty()) {
        ts << "Not attributed to a rank:\n";
        for (const SourceFile& s : unattributed)
            ts << "    " << s.relativePath << "  [" << sourceKindName(s.kind) << "]"
               << (s.message.isEmpty() ? QString() : QStringLiteral("  ") + s.message) << '\n';
    }
    for (const QString& w : session.warnings)
        ts << "Warning: " << w << '\n';
    return out;
}

} // namespace rankscope
