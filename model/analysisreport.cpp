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
        r["host"] = nullptr;
        auto sources = nlohmann::ordered_json::array();
        for (const SourceFile& s : folder.sourcesOfRank(rank))
            sources.push_back(sourceJson(session.withReadResult(s)));
        r["sources"] = sources;
        r["events"] = session.events.eventCountOfRank(rank);
        r["collectives"] = session.events.collectiveCountOfRank(rank);
        r["clock_offset_us"] = nullptr;
        ranks.push_back(r);
    }
    doc["ranks"] = ranks;
    auto unattributed = nlohmann::ordered_json::array();
    for (const SourceFile& s : folder.unattributedSources())
        unattributed.push_back(sourceJson(session.withReadResult(s)));
    doc["unattributed_sources"] = unattributed;
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
        for (const SourceFile& source : folder.sourcesOfRank(rank)) {
            const SourceFile s = session.withReadResult(source);
            ts << "    " << s.relativePath << "  [" << sourceKindName(s.kind) << ", "
               << sourceStatusName(s.status) << "]"
               << (s.message.isEmpty() ? QString() : QStringLiteral("  ") + s.message) << '\n';
        }
        ts << "    events: " << session.events.eventCountOfRank(rank)
           << ", collectives: " << session.events.collectiveCountOfRank(rank) << '\n';
    }
    const QList<SourceFile> unattributed = folder.unattributedSources();
    if (!unattributed.isEmpty()) {
        ts << "Not attributed to a rank:\n";
        for (const SourceFile& s : unattributed)
            ts << "    " << s.relativePath << "  [" << sourceKindName(s.kind) << "]"
               << (s.message.isEmpty() ? QString() : QStringLiteral("  ") + s.message) << '\n';
    }
    return out;
}

} // namespace rankscope
