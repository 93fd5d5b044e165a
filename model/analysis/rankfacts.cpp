#include "model/analysis/rankfacts.h"

#include "model/analysis/jobsplit.h"
#include "model/trace/traceread.h"

#include <QRegularExpression>
#include <QStringList>
#include <algorithm>
#include <cctype>

namespace rankscope {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// "[0]eth0:10.0.0.1<0>" -> "eth0"; "[0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ..." -> "mlx5_0,mlx5_1".
std::string interfaceNames(const std::string& using_)
{
    static const QRegularExpression device(QStringLiteral("\\[\\d+\\]([^:\\s<;]+)"));
    QStringList names;
    auto it = device.globalMatch(QString::fromStdString(using_));
    while (it.hasNext())
        names << it.next().captured(1);
    return names.isEmpty() ? using_ : names.join(QLatin1Char(',')).toStdString();
}

int number(const std::string& s)
{
    bool ok = false;
    const int n = QString::fromStdString(s).toInt(&ok);
    return ok ? n : 0;
}

} // namespace

std::vector<const RankLog*> rankLogStreams(const std::vector<RankLog>& logs)
{
    std::set<int> ranksWithOwnLog;
    for (const RankLog& log : logs)
        if (log.rank && !log.splitFromCombined) ranksWithOwnLog.insert(*log.rank);
    std::vector<const RankLog*> out;
    for (const RankLog& log : logs) {
        if (log.rank && log.splitFromCombined && ranksWithOwnLog.count(*log.rank)) continue;
        if (!log.rank && !ranksWithOwnLog.empty()) continue;
        out.push_back(&log);
    }
    return out;
}

std::string comparableVersion(const std::string& version)
{
    return version.substr(0, version.find('+'));
}

std::map<std::string, std::vector<int>> ranksByValue(const PerRank& values,
                                                     const std::vector<int>& among)
{
    std::map<std::string, std::vector<int>> out;
    for (const auto& [rank, fact] : values)
        if (among.empty() || std::binary_search(among.begin(), among.end(), rank))
            out[fact.value].push_back(rank);
    return out;
}

Evidence RankFacts::lineEvidence(const RankLog& log, int index)
{
    Evidence e;
    e.path = log.sourcePath.toStdString();
    e.line = log.lineNumber(index);
    e.text = log.lineText(index).trimmed().toStdString();
    e.rank = log.rank.value_or(-1);
    return e;
}

PerRank RankFacts::first(LogFactKind kind,
                         const std::function<std::string(const LogFact&)>& pick) const
{
    PerRank out;
    for (const auto& [rank, streams] : logs)
        for (const RankLog* log : streams) {
            if (out.count(rank)) break;
            for (const LogFact* f : log->factsOfKind(kind)) {
                std::string v = pick(*f);
                if (v.empty()) continue;
                out[rank] = {std::move(v), lineEvidence(*log, f->line)};
                break;
            }
        }
    return out;
}

std::vector<int> RankFacts::ranksWithout(const PerRank& values) const
{
    std::vector<int> out;
    for (int r : ranks)
        if (!values.count(r)) out.push_back(r);
    return out;
}

int RankFacts::largest(const PerRank& values)
{
    int n = 0;
    for (const auto& [rank, fact] : values)
        n = std::max(n, number(fact.value));
    return n;
}

RankFacts RankFacts::build(const std::vector<RankLog>& allLogs, const QList<SourceFile>& sources,
                           int tracesWorldSize)
{
    RankFacts facts;
    std::set<int> ranks;
    for (const SourceFile& s : sources) {
        if (s.rank) ranks.insert(*s.rank);
        if (s.rank && (s.kind == SourceKind::Kineto || s.kind == SourceKind::HorovodTimeline))
            facts.traces.emplace(*s.rank, s.relativePath); // keeps each rank's first
        if (tracesWorldSize == 0)
            facts.tracesWorldSize = std::max(facts.tracesWorldSize, s.stated.worldSize);
    }
    if (tracesWorldSize > 0) facts.tracesWorldSize = tracesWorldSize;
    facts.statedWorldSize = facts.tracesWorldSize;
    for (const RankLog& log : allLogs)
        facts.statedWorldSize = std::max(facts.statedWorldSize, log.worldSize.value_or(0));
    for (const RankLog* log : rankLogStreams(allLogs))
        if (log->rank) {
            facts.logs[*log->rank].push_back(log);
            ranks.insert(*log->rank);
        }
    facts.ranks.assign(ranks.begin(), ranks.end());

    // The launcher's own lines, whether or not they speak for the ranks.
    for (const RankLog& log : allLogs) {
        if (log.rank) continue;
        for (const LogFact& f : log.facts())
            if (f.kind == LogFactKind::Environment)
                for (const auto& [k, v] : f.fields())
                    if (!v.empty()) facts.launcherEnvironment[lower(k)].insert(v);
    }

    const auto environment = [&](const char* key) {
        return facts.first(LogFactKind::Environment, [key](const LogFact& f) {
            for (const auto& [k, v] : f.fields())
                if (lower(k) == key) return v;
            return std::string();
        });
    };
    facts.masterAddr = environment("master_addr");
    facts.masterPort = environment("master_port");
    facts.worldSize = environment("world_size");
    const auto component = [&](const char* name) {
        return facts.first(LogFactKind::Version, [name](const LogFact& f) {
            return f.value("component") == name ? f.value("version") : std::string();
        });
    };
    facts.torchVersion = component("torch");
    facts.cudaVersion = component("cuda");
    facts.ncclVersion = facts.first(LogFactKind::NcclVersion, [](const LogFact& f) {
        return comparableVersion(f.value("version"));
    });
    // NCCL names the CUDA it was built for; only where the rank printed no runtime version.
    for (auto& [rank, v] :
         facts.first(LogFactKind::NcclVersion, [](const LogFact& f) { return f.value("cuda"); }))
        facts.cudaVersion.emplace(rank, std::move(v));
    // A rank's trace states the NCCL version its log may not print (NCCL_DEBUG unset).
    for (const SourceFile& s : sources) {
        if (!s.rank || s.statedNcclVersion.isEmpty() || facts.ncclVersion.count(*s.rank)) continue;
        Fact& v = facts.ncclVersion[*s.rank];
        v.value = comparableVersion(s.statedNcclVersion.toStdString());
        v.source.path = s.relativePath.toStdString();
        v.source.rank = *s.rank;
        v.source.text =
            "distributedInfo.nccl_version \"" + s.statedNcclVersion.toStdString() + "\"";
    }
    for (const auto& [rank, streams] : facts.logs) {
        int best = -1;
        for (const RankLog* log : streams)
            for (const LogFact* f : log->factsOfKind(LogFactKind::NcclInit))
                if (const int n = number(f->value("nranks")); n > best) {
                    best = n;
                    facts.communicatorSize[rank] = {std::to_string(n), lineEvidence(*log, f->line)};
                }
        for (const RankLog* log : streams)
            if (!log->steps().empty()) {
                const LogStep& s = log->steps().back();
                facts.lastLogStep[rank] = {std::to_string(s.step), lineEvidence(*log, s.line)};
                break;
            }
    }
    facts.ncclNetwork = facts.first(LogFactKind::NcclNetInterface, [](const LogFact& f) {
        return f.has("transport") ? f.value("transport") + " " + interfaceNames(f.value("using"))
                                  : std::string();
    });
    return facts;
}

RankFacts RankFacts::of(const TraceRead& read, const JobSplit& jobs)
{
    const QList<SourceFile>& all = read.folder.sources();
    if (!jobs.mixed()) return build(read.logs, all, read.folder.statedWorldSize());
    QList<SourceFile> analysed;
    for (int i = 0; i < int(all.size()); ++i)
        if (!jobs.setAside[std::size_t(i)]) analysed.append(all[i]);
    return build(read.logs, analysed);
}

RankFacts RankFacts::of(const TraceRead& read)
{
    return of(read, splitJobs(read.folder.sources()));
}

} // namespace rankscope
