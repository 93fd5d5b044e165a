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

unsigned fileOf(const SourceFile& s)
{
    if (s.status == SourceStatus::Error) return kUnreadFile;
    switch (s.kind) {
    case SourceKind::Kineto:
    case SourceKind::HorovodTimeline:
        return s.status == SourceStatus::Truncated ? kTraceFile | kCutTrace : kTraceFile;
    case SourceKind::FlightRecorder:
        return kDumpFile;
    case SourceKind::ElasticError:
        return kErrorFile;
    case SourceKind::NcclLog:
    case SourceKind::LauncherLog:
    case SourceKind::Log:
        return kLogFile;
    case SourceKind::Unknown:
        break;
    }
    return kUnreadFile;
}

} // namespace

std::string describeRankFiles(unsigned files)
{
    static const std::pair<unsigned, const char*> kNames[] = {
        {kTraceFile, "a trace"},
        {kDumpFile, "a Flight Recorder dump"},
        {kLogFile, "a log"},
        {kCollectiveLog, "NCCL collective lines"},
        {kErrorFile, "an error file"},
        {kOtherFile, "a file"},
        {kUnreadFile, "an unreadable file"},
    };
    std::vector<std::string> names;
    for (const auto& [bit, name] : kNames)
        if (files & bit) names.push_back(name);
    if (names.empty()) return "nothing";
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

std::vector<int> RankPresence::present() const
{
    // A rank whose only files could not be read (empty, binary under a trace's name) told
    // nothing: for the job it is as absent as one that left none.
    std::vector<int> out;
    for (const auto& [rank, kinds] : files)
        if (kinds & ~kUnreadFile) out.push_back(rank);
    return out;
}

std::vector<int> RankPresence::with(unsigned kinds) const
{
    std::vector<int> out;
    for (const auto& [rank, have] : files)
        if (have & kinds) out.push_back(rank);
    return out;
}

bool RankPresence::left(int rank, unsigned kinds) const
{
    const auto it = files.find(rank);
    return it != files.end() && (it->second & kinds) != 0;
}

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
        if (s.rank) {
            ranks.insert(*s.rank);
            facts.files[*s.rank] |= fileOf(s);
        }
        if (s.rank && (s.kind == SourceKind::Kineto || s.kind == SourceKind::HorovodTimeline))
            facts.traces.emplace(*s.rank, s.relativePath); // keeps each rank's first
        if (s.kind == SourceKind::Kineto || s.kind == SourceKind::HorovodTimeline)
            facts.tracesWorldSize = std::max(facts.tracesWorldSize, s.stated.worldSize);
        else
            facts.statedWorldSize = std::max(facts.statedWorldSize, s.stated.worldSize);
    }
    if (tracesWorldSize > 0) facts.tracesWorldSize = tracesWorldSize;
    facts.statedWorldSize = std::max(facts.statedWorldSize, facts.tracesWorldSize);
    for (const RankLog& log : allLogs)
        facts.statedWorldSize = std::max(facts.statedWorldSize, log.worldSize.value_or(0));
    for (const RankLog* log : rankLogStreams(allLogs))
        if (log->rank) {
            facts.logs[*log->rank].push_back(log);
            facts.files[*log->rank] |= kLogFile;
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
    facts.launchWorldSize = environment("world_size");
    // A rank's world size is the last one it states: a program's own
    // init_process_group(world_size=) follows the WORLD_SIZE it was launched with, and is the size
    // it tried to join with.
    for (const auto& [rank, streams] : facts.logs)
        for (const RankLog* log : streams)
            for (const LogFact* f : log->factsOfKind(LogFactKind::Environment))
                for (const auto& [k, v] : f->fields())
                    if (!v.empty() && lower(k) == "world_size")
                        facts.worldSize[rank] = {v, lineEvidence(*log, f->line)};
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
        for (const RankLog* log : streams) {
            if (!log->host.empty() && !facts.host.count(rank)) {
                Evidence e;
                e.path = log->sourcePath.toStdString();
                e.rank = rank;
                e.text = "host " + log->host;
                facts.host[rank] = {log->host, e};
            }
            for (const LogFact* f : log->factsOfKind(LogFactKind::NcclInit))
                if (f->value("status") == "complete") facts.pastRendezvous = true;
            // A collective the watchdog timed out was issued on a process group, which exists
            // only once every rank joined the rendezvous: no rank of the job failed to start.
            if (!log->factsOfKind(LogFactKind::Watchdog).empty()) facts.pastRendezvous = true;
            if (!log->factsOfKind(LogFactKind::NcclColl).empty())
                facts.files[rank] |= kCollectiveLog;
        }
    }
    facts.pastRendezvous = facts.pastRendezvous || !facts.lastLogStep.empty();
    // NCCL's init line names the device; its other lines' prefixes do too.
    facts.cudaDevice =
        facts.first(LogFactKind::NcclInit, [](const LogFact& f) { return f.value("cudaDev"); });
    for (const LogFactKind kind : {LogFactKind::NcclVersion, LogFactKind::NcclWarn})
        for (auto& [rank, v] :
             facts.first(kind, [](const LogFact& f) { return f.value("cudaDev"); }))
            facts.cudaDevice.emplace(rank, std::move(v));
    facts.ncclNetwork = facts.first(LogFactKind::NcclNetInterface, [](const LogFact& f) {
        return f.has("transport") ? f.value("transport") + " " + interfaceNames(f.value("using"))
                                  : std::string();
    });
    facts.presence = facts.decidePresence();
    if (ranksByValue(facts.worldSize).size() > 1) facts.statedWorldSize = facts.presence.worldSize;
    return facts;
}

void RankFacts::addEvents(const EventStore& events)
{
    std::set<int> ranksSeen(ranks.begin(), ranks.end());
    std::map<int, std::set<std::int64_t>> devices; // per rank, the devices of its GPU streams
    std::map<int, const Lane*> firstGpuLane;
    for (const Lane& lane : events.lanes) {
        if (lane.rank < 0) continue;
        files[lane.rank] |= kTraceFile;
        ranksSeen.insert(lane.rank);
        if (lane.kind != LaneKind::GpuStream) continue;
        devices[lane.rank].insert(lane.pid);
        firstGpuLane.emplace(lane.rank, &lane);
    }
    std::set<RankListId> lists;
    for (const CollectiveRecord& c : events.collectives) {
        if (c.groupRanks != 0) lists.insert(c.groupRanks);
        if (c.rank < 0) continue;
        pastRendezvous = true;
        ranksSeen.insert(c.rank);
        files[c.rank] |= c.laneIndex >= 0                      ? kTraceFile
                         : c.sourceLine >= 0 || c.stateUnknown ? kCollectiveLog
                                                               : kDumpFile;
    }
    std::set<int> members(groupMembers.begin(), groupMembers.end());
    for (RankListId id : lists)
        for (int r : events.rankLists.ranks(id))
            if (r >= 0) members.insert(r);
    groupMembers.assign(members.begin(), members.end());
    for (const auto& [rank, devs] : devices) {
        if (devs.size() != 1 || cudaDevice.count(rank)) continue;
        const Lane& lane = *firstGpuLane.at(rank);
        Fact& f = cudaDevice[rank];
        f.value = std::to_string(*devs.begin());
        const auto trace = traces.find(rank);
        if (trace != traces.end()) f.source.path = trace->second.toStdString();
        f.source.rank = rank;
        f.source.timeNs = lane.startNs.empty() ? -1 : lane.startNs.front();
        f.source.text = "GPU stream on device " + f.value;
    }
    ranks.assign(ranksSeen.begin(), ranksSeen.end());
    presence = decidePresence();
}

void RankFacts::addErrors(const std::vector<ElasticError>& errors, const QList<SourceFile>& sources)
{
    std::set<int> ranksSeen(ranks.begin(), ranks.end());
    for (const ElasticError& err : errors) {
        if (!err.rank) continue;
        files[*err.rank] |= kErrorFile;
        ranksSeen.insert(*err.rank);
        if (err.host.empty() || host.count(*err.rank)) continue;
        Fact& f = host[*err.rank];
        f.value = err.host;
        if (err.sourceIndex >= 0 && err.sourceIndex < sources.size())
            f.source.path = sources[err.sourceIndex].relativePath.toStdString();
        f.source.rank = *err.rank;
        f.source.text = "host " + err.host;
    }
    ranks.assign(ranksSeen.begin(), ranksSeen.end());
    presence = decidePresence();
}

RankPresence RankFacts::decidePresence() const
{
    RankPresence p;
    p.files = files;
    p.setAside = setAside;
    p.listedMembers = groupMembers;
    // The largest size a file states, and where: a rank's WORLD_SIZE, its NCCL communicator, a
    // trace's distributedInfo.world_size.
    const auto consider = [&p](const PerRank& values, const char* statedAs) {
        for (const auto& [rank, fact] : values)
            if (const int n = number(fact.value); n > p.worldSize) {
                p.worldSize = n;
                p.worldSizeStatedAs = statedAs;
                p.worldSizeSource = fact.source;
            }
    };
    // Ranks that disagree on their WORLD_SIZE (ConfigCheck names the odd ones) do not make the
    // job as large as the largest of them: it is the size they were meant to have, if any.
    PerRank agreed;
    const std::string intended = intendedWorldSize();
    const bool disagree = ranksByValue(worldSize).size() > 1;
    for (const auto& [rank, fact] : worldSize)
        if (!disagree || fact.value == intended) agreed.emplace(rank, fact);
    consider(agreed, "WORLD_SIZE");
    consider(communicatorSize, "NCCL nranks");
    if (tracesWorldSize > p.worldSize) {
        p.worldSize = tracesWorldSize;
        p.worldSizeStatedAs = "distributedInfo.world_size";
        p.worldSizeSource = Evidence{};
        p.worldSizeSource.text = "distributedInfo.world_size " + std::to_string(tracesWorldSize);
        for (const auto& [rank, path] : traces) {
            p.worldSizeSource.path = path.toStdString();
            p.worldSizeSource.rank = rank;
            break;
        }
    }
    p.absent = absentRankRanges(p.present(), p.worldSize, p.listedMembers);
    std::set<std::string> stated;
    for (const auto& [rank, fact] : worldSize)
        stated.insert(fact.value);
    p.neverStarted = !p.absent.empty() && !pastRendezvous && stated.size() == 1 &&
                     p.worldSizeStatedAs == "WORLD_SIZE" && p.worldSize > 0 &&
                     p.worldSize <= 9'999'999; // more ranks than any job has is a typo
    return p;
}

std::string RankFacts::intendedWorldSize() const
{
    const std::map<std::string, std::vector<int>> last = ranksByValue(worldSize);
    if (last.size() < 2) return {};
    const std::map<std::string, std::vector<int>> launched = ranksByValue(launchWorldSize);
    if (launched.size() == 1 && last.count(launched.begin()->first)) return launched.begin()->first;
    std::size_t most = 0;
    std::string value;
    for (const auto& [v, ranks] : last)
        if (ranks.size() > most) {
            most = ranks.size();
            value = v;
        } else if (ranks.size() == most) {
            value.clear(); // a tie so far
        }
    return value;
}

RankFacts RankFacts::of(const TraceRead& read, const JobSplit& jobs,
                        const EventStore* analysedEvents)
{
    const QList<SourceFile>& all = read.folder.sources();
    if (!jobs.mixed()) {
        // The sources' own statements; a digest restores only the folder's figure, which then
        // stands for its traces' (a folder without traces has its logs', read again here).
        const bool sourcesState = std::any_of(
            all.begin(), all.end(), [](const SourceFile& s) { return s.stated.worldSize > 0; });
        const bool traced = std::any_of(all.begin(), all.end(), [](const SourceFile& s) {
            return s.kind == SourceKind::Kineto || s.kind == SourceKind::HorovodTimeline;
        });
        RankFacts facts =
            build(read.logs, all, sourcesState || !traced ? 0 : read.folder.statedWorldSize());
        facts.addEvents(read.events);
        facts.addErrors(read.errors, all);
        return facts;
    }
    QList<SourceFile> analysed;
    std::map<int, std::string> setAside;
    for (int i = 0; i < int(all.size()); ++i)
        if (!jobs.setAside[std::size_t(i)])
            analysed.append(all[i]);
        else if (all[i].rank)
            setAside.emplace(*all[i].rank, all[i].relativePath.toStdString());
    RankFacts facts = build(read.logs, analysed);
    facts.setAside = std::move(setAside);
    facts.addEvents(analysedEvents ? *analysedEvents : withoutSources(read.events, jobs.setAside));
    facts.addErrors(read.errors, all);
    return facts;
}

} // namespace rankscope
