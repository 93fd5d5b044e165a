#include "model/analysis/jobsplit.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/rankfacts.h"

#include <QDateTime>
#include <QRegularExpression>
#include <QTimeZone>
#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace rankscope {

namespace {

// A clock whose readings fall after 2001 counts wall time (Kineto's epoch µs, or relative ones
// plus baseTimeNanoseconds); a relative or monotonic clock says nothing about when a job ran.
constexpr std::int64_t kWallClockFromNs = 978'307'200LL * 1'000'000'000;
constexpr std::size_t kNamedFiles = 4;
constexpr std::size_t kNamedJobs = 6;

bool isTrace(const SourceFile& s)
{
    return s.kind == SourceKind::Kineto || s.kind == SourceKind::HorovodTimeline;
}

bool onWallClock(const StatedJob& s)
{
    return s.firstNs >= kWallClockFromNs && s.lastNs >= s.firstNs;
}

// The subfolder a source lies in ("" at the folder's top), '/' separated.
QString directoryOf(const SourceFile& s)
{
    const qsizetype slash = s.relativePath.lastIndexOf(u'/');
    return slash < 0 ? QString() : s.relativePath.left(slash);
}

bool within(const QString& path, const QString& directory)
{
    return path == directory || path.startsWith(directory + u'/');
}

// Two traces claim one rank from different subfolders, and one of them has no wall clock that
// fits() could place it by: the subfolders hold different runs. One rank's traces in one
// subfolder (profiling windows of one run) say nothing.
bool ranksClaimedFromTwoSubfolders(const QList<SourceFile>& sources)
{
    struct Claims {
        std::set<QString> directories;
        bool unclocked = false;
    };
    std::map<int, Claims> byRank;
    for (const SourceFile& s : sources) {
        if (!isTrace(s) || !s.rank) continue;
        Claims& c = byRank[*s.rank];
        c.directories.insert(directoryOf(s));
        c.unclocked = c.unclocked || !onWallClock(s.stated);
    }
    return std::any_of(byRank.begin(), byRank.end(), [](const auto& rank) {
        return rank.second.unclocked && rank.second.directories.size() > 1;
    });
}

// What a job's traces state together, to check the next trace against.
struct JobFacts {
    QString directory; // of its first trace
    int worldSize = 0;
    QString backend;
    std::map<QString, int> groupSizes;
    int maxRank = -1;
    std::int64_t firstNs = -1, lastNs = -1; // wall clock only
};

bool fits(const JobFacts& job, const SourceFile& s, bool bySubfolder)
{
    const StatedJob& t = s.stated;
    if (bySubfolder && directoryOf(s) != job.directory) return false;
    if (t.worldSize > 0 && job.worldSize > 0 && t.worldSize != job.worldSize) return false;
    if (!t.backend.isEmpty() && !job.backend.isEmpty() && t.backend != job.backend) return false;
    for (const auto& [name, size] : t.processGroupSizes) {
        const auto it = job.groupSizes.find(name);
        if (it != job.groupSizes.end() && it->second != size) return false;
    }
    if (s.rank && job.worldSize > 0 && *s.rank >= job.worldSize) return false;
    if (t.worldSize > 0 && job.maxRank >= t.worldSize) return false;
    if (onWallClock(t) && job.firstNs >= 0 &&
        (t.firstNs > job.lastNs + JobSplit::kSameJobGapNs ||
         job.firstNs > t.lastNs + JobSplit::kSameJobGapNs))
        return false;
    return true;
}

void join(JobFacts& job, const SourceFile& s)
{
    const StatedJob& t = s.stated;
    if (t.worldSize > 0) job.worldSize = t.worldSize;
    if (!t.backend.isEmpty()) job.backend = t.backend;
    job.groupSizes.insert(t.processGroupSizes.begin(), t.processGroupSizes.end());
    if (s.rank) job.maxRank = std::max(job.maxRank, *s.rank);
    if (onWallClock(t)) {
        job.firstNs = job.firstNs < 0 ? t.firstNs : std::min(job.firstNs, t.firstNs);
        job.lastNs = std::max(job.lastNs, t.lastNs);
    }
}

std::string utc(std::int64_t ns)
{
    return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, QTimeZone::utc())
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
        .toStdString();
}

std::string timeRange(std::int64_t firstNs, std::int64_t lastNs)
{
    if (firstNs < 0) return "no wall-clock time";
    return utc(firstNs) + " to " + utc(lastNs) + " UTC";
}

std::string fileName(const SourceFile& s)
{
    return s.relativePath.toStdString();
}

// "job 2 (analysed): a.json, b.json (ranks 0, 1; world size 128; nccl; 2023-04-29 ... UTC)".
std::string describe(const TraceJob& job, std::size_t index, bool analysed,
                     const QList<SourceFile>& sources)
{
    std::string files;
    for (std::size_t i = 0; i < job.sources.size() && i < kNamedFiles; ++i)
        files += (i ? ", " : "") + fileName(sources.at(job.sources[i]));
    if (job.sources.size() > kNamedFiles)
        files += " and " + std::to_string(job.sources.size() - kNamedFiles) + " more";
    return "job " + std::to_string(index + 1) + (analysed ? " (analysed): " : ": ") + files + " (" +
           jobFacts(job) + ")";
}

// The launch a rank's log names: the rendezvous (MASTER_ADDR:MASTER_PORT) and torchelastic run id
// of its first line that states them, "" when none does.
struct LaunchOfLog {
    std::string key;
    Evidence line;
};

LaunchOfLog launchOf(const RankLog& log)
{
    for (const LogFact* f : log.factsOfKind(LogFactKind::Environment)) {
        std::string addr, port, runId;
        for (const auto& [k, v] : f->fields()) {
            const QString key = QString::fromStdString(k).toLower();
            if (key == u"master_addr") addr = v;
            if (key == u"master_port") port = v;
            if (key == u"torchelastic_run_id" || key == u"run_id") runId = v;
        }
        if (port.empty() && runId.empty()) continue;
        std::string key = addr + ":" + port;
        if (!runId.empty()) key += " run " + runId;
        return {key, RankFacts::lineEvidence(log, f->line)};
    }
    return {};
}

// Where no log names a launch: each rank log's start, its first start-up line (key=value pairs:
// RANK, WORLD_SIZE...) with a date, keyed by the run it started: starts within
// JobSplit::kSameJobGapNs of one another are one run, unless the world sizes the logs state tell
// apart runs that started together. Per log (same index as `logs`), its run's key ("2026-12-02
// 13:41:15 UTC, world size 2": the run's first start), an empty one for a log without a dated
// start, or when a run's logs leave it unsure which run a log of no stated world size started.
std::vector<LaunchOfLog> launchesByStart(const std::vector<RankLog>& logs)
{
    struct Start {
        std::int64_t ns = -1;
        Evidence line;
    };
    std::vector<Start> starts(logs.size());
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < logs.size(); ++i) {
        const RankLog& log = logs[i];
        if (!log.rank) continue;
        for (const LogFact* f : log.factsOfKind(LogFactKind::Environment))
            if (log.timestampHasDate(f->line) && log.timestampNs(f->line) >= 0) {
                starts[i] = {log.timestampNs(f->line), RankFacts::lineEvidence(log, f->line)};
                order.push_back(i);
                break;
            }
    }
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return starts[a].ns < starts[b].ns; });
    std::vector<LaunchOfLog> out(logs.size());
    for (std::size_t from = 0; from < order.size();) {
        // One run's starts: each within the gap of the one before.
        std::size_t to = from + 1;
        while (to < order.size() &&
               starts[order[to]].ns <= starts[order[to - 1]].ns + JobSplit::kSameJobGapNs)
            ++to;
        std::set<int> sizes;
        for (std::size_t k = from; k < to; ++k)
            if (const int n = logs[order[k]].worldSize.value_or(0); n > 0) sizes.insert(n);
        for (std::size_t k = from; k < to; ++k) {
            const std::size_t i = order[k];
            int size = logs[i].worldSize.value_or(0);
            if (size == 0 && sizes.size() == 1) size = *sizes.begin();
            if (size == 0 && sizes.size() > 1) continue;
            // The run's first start of this world size names it.
            std::size_t first = from;
            while (logs[order[first]].worldSize.value_or(size) != size)
                ++first;
            out[i] = {utc(starts[order[first]].ns) + " UTC" +
                          (size > 0 ? ", world size " + std::to_string(size) : std::string()),
                      starts[i].line};
        }
        from = to;
    }
    return out;
}

// A file's name without its directory's other files' common parts: the name less its rank token
// and everything from its first '.', with its directory ("runs/a_rank0.pt.trace.json" and
// "runs/a_rank0.log" are both "runs/a").
QString stemOf(const SourceFile& s)
{
    static const QRegularExpression rankToken(QStringLiteral("(?:rank|worker)[-_]?\\d+"),
                                              QRegularExpression::CaseInsensitiveOption);
    const QString directory = directoryOf(s);
    QString name = s.relativePath.mid(directory.isEmpty() ? 0 : directory.size() + 1);
    name.remove(rankToken);
    if (const qsizetype dot = name.indexOf(u'.'); dot >= 0) name.truncate(dot);
    while (!name.isEmpty() && (name.back() == u'_' || name.back() == u'-'))
        name.chop(1);
    while (!name.isEmpty() && (name.front() == u'_' || name.front() == u'-'))
        name.remove(0, 1);
    return directory + u'/' + name;
}

struct LaunchGroup {
    LaunchOfLog launch;
    std::set<int> ranks;
    std::set<int> logSources;
    std::set<QString> stems;
    int worldSize = 0;
    std::int64_t firstNs = -1, lastNs = -1; // its logs' dated lines
};

bool apart(const LaunchGroup& a, const LaunchGroup& b)
{
    return a.firstNs >= 0 && b.firstNs >= 0 &&
           (a.firstNs > b.lastNs + JobSplit::kSameJobGapNs ||
            b.firstNs > a.lastNs + JobSplit::kSameJobGapNs);
}

void noteDatedRange(const RankLog& log, LaunchGroup& group)
{
    const auto note = [&](int i) {
        if (!log.timestampHasDate(i)) return false;
        const std::int64_t ns = log.timestampNs(i);
        if (ns < 0) return false;
        group.firstNs = group.firstNs < 0 ? ns : std::min(group.firstNs, ns);
        group.lastNs = std::max(group.lastNs, ns);
        return true;
    };
    // The first dated line and the last one bound the log's range.
    for (int i = 0; i < log.lineCount(); ++i)
        if (note(i)) break;
    for (int i = log.lineCount() - 1; i >= 0; --i)
        if (note(i)) break;
}

// The jobs of a folder whose runs' files lie side by side (JobSplit::byLaunch), or nothing when
// the launches of the logs (`launches`, one per log) do not tell them apart beyond doubt.
// Launches keyed by their starts (launchesByStart) are two runs only where a rank started under
// both: starts far apart can be one run's logs, one of them dated only late.
std::vector<TraceJob> splitByLaunch(const QList<SourceFile>& sources,
                                    const std::vector<RankLog>& logs,
                                    const std::vector<LaunchOfLog>& launches, bool byStart)
{
    std::map<std::string, LaunchGroup> groups;
    std::map<int, std::set<std::string>> launchesOfSource;
    for (std::size_t l = 0; l < logs.size(); ++l) {
        const RankLog& log = logs[l];
        if (!log.rank) continue;
        LaunchOfLog launch = launches[l];
        if (launch.key.empty()) continue;
        LaunchGroup& g = groups[launch.key];
        if (g.launch.key.empty()) g.launch = std::move(launch);
        g.ranks.insert(*log.rank);
        g.logSources.insert(log.sourceIndex);
        g.worldSize = std::max(g.worldSize, log.worldSize.value_or(0));
        noteDatedRange(log, g);
        launchesOfSource[log.sourceIndex].insert(g.launch.key);
    }
    if (groups.size() < 2) return {};
    // Every two launches must be two runs: one rank launched under both, or far apart in time.
    for (auto a = groups.begin(); a != groups.end(); ++a)
        for (auto b = std::next(a); b != groups.end(); ++b) {
            std::vector<int> both;
            std::set_intersection(a->second.ranks.begin(), a->second.ranks.end(),
                                  b->second.ranks.begin(), b->second.ranks.end(),
                                  std::back_inserter(both));
            if (both.empty() && (byStart || !apart(a->second, b->second))) return {};
        }
    std::vector<LaunchGroup*> order;
    for (auto& [key, g] : groups) {
        for (const int i : g.logSources)
            if (launchesOfSource[i].size() == 1) g.stems.insert(stemOf(sources.at(i)));
        order.push_back(&g);
    }
    std::stable_sort(order.begin(), order.end(), [](const LaunchGroup* a, const LaunchGroup* b) {
        const std::int64_t never = std::numeric_limits<std::int64_t>::max();
        return (a->firstNs >= 0 ? a->firstNs : never) < (b->firstNs >= 0 ? b->firstNs : never);
    });
    std::vector<TraceJob> jobs(order.size());
    const auto only = [&](const std::function<bool(const LaunchGroup&)>& holds) {
        int found = -1;
        for (std::size_t j = 0; j < order.size(); ++j)
            if (holds(*order[j])) {
                if (found >= 0) return -1;
                found = int(j);
            }
        return found;
    };
    for (int i = 0; i < int(sources.size()); ++i) {
        const SourceFile& s = sources[i];
        int job = -1;
        if (const auto launches = launchesOfSource.find(i); launches != launchesOfSource.end()) {
            // A log that speaks for one launch is its; a launcher log with both runs' ranks in
            // it is neither's.
            if (launches->second.size() == 1)
                job = only([&](const LaunchGroup& g) { return g.logSources.count(i) > 0; });
        } else {
            const QString stem = stemOf(s);
            job = only([&](const LaunchGroup& g) { return g.stems.count(stem) > 0; });
            if (job < 0 && s.rank)
                job = only([&](const LaunchGroup& g) { return g.ranks.count(*s.rank) > 0; });
        }
        if (job < 0) {
            if (isTrace(s)) return {}; // a trace no launch claims: which run it is is not known
            continue;                  // a file of neither: it stays with the analysed job
        }
        TraceJob& t = jobs[std::size_t(job)];
        t.sources.push_back(i);
        t.bytes += s.sizeBytes;
        if (s.rank) t.ranks.push_back(*s.rank);
        if (isTrace(s) && s.stated.worldSize > 0) t.worldSize = s.stated.worldSize;
        if (isTrace(s) && !s.stated.backend.isEmpty()) t.backend = s.stated.backend;
    }
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        TraceJob& t = jobs[j];
        const LaunchGroup& g = *order[j];
        t.ranks.insert(t.ranks.end(), g.ranks.begin(), g.ranks.end());
        std::sort(t.ranks.begin(), t.ranks.end());
        t.ranks.erase(std::unique(t.ranks.begin(), t.ranks.end()), t.ranks.end());
        if (t.worldSize == 0) t.worldSize = g.worldSize;
        t.firstNs = g.firstNs;
        t.lastNs = g.lastNs;
        t.launch = g.launch.key;
        t.launchLine = g.launch.line;
    }
    return jobs;
}

// Why the launches are two runs: "their ranks' logs name different launches (MASTER_ADDR:PORT
// 127.0.0.1:57775, 127.0.0.1:45925), and ranks 0, 1 were launched under more than one".
std::string launchReason(const JobSplit& split)
{
    std::string launches;
    std::map<int, int> launchesOfRank;
    for (const TraceJob& job : split.jobs) {
        launches += (launches.empty() ? "" : split.byStart ? "; " : ", ") + job.launch;
        for (const int r : job.ranks)
            ++launchesOfRank[r];
    }
    std::vector<int> twice;
    for (const auto& [rank, n] : launchesOfRank)
        if (n > 1) twice.push_back(rank);
    if (split.byStart)
        return "their ranks' logs name no launch (MASTER_ADDR:MASTER_PORT, run id), and " +
               formatRanks(twice) + (twice.size() == 1 ? " was" : " were") +
               " started more than once (" + launches +
               "); each trace goes with the start whose logs share its name or its rank";
    return "their ranks' logs name different launches (MASTER_ADDR:MASTER_PORT " + launches +
           "), and " +
           (twice.empty()
                ? "their logs' dated lines lie more than " +
                      std::to_string(JobSplit::kSameJobGapNs / 60'000'000'000) + " minutes apart"
                : formatRanks(twice) + (twice.size() == 1 ? " was" : " were") +
                      " launched under more than one") +
           "; each trace goes with the launch whose logs share its name or its rank";
}

} // namespace

JobSplit splitJobs(const QList<SourceFile>& sources, const std::vector<RankLog>& logs)
{
    JobSplit split;
    split.setAside.assign(std::size_t(sources.size()), false);
    split.bySubfolder = ranksClaimedFromTwoSubfolders(sources);
    std::vector<int> traces;
    for (int i = 0; i < int(sources.size()); ++i)
        if (isTrace(sources[i])) traces.push_back(i);
    // In order of time, so a job is seeded by its earliest trace; traces without a wall clock
    // last, to join a job that a clock placed.
    std::stable_sort(traces.begin(), traces.end(), [&](int a, int b) {
        const StatedJob& x = sources[a].stated;
        const StatedJob& y = sources[b].stated;
        const std::int64_t never = std::numeric_limits<std::int64_t>::max();
        return (onWallClock(x) ? x.firstNs : never) < (onWallClock(y) ? y.firstNs : never);
    });
    std::vector<JobFacts> facts;
    for (const int i : traces) {
        const SourceFile& s = sources[i];
        std::size_t j = 0;
        while (j < facts.size() && !fits(facts[j], s, split.bySubfolder))
            ++j;
        if (j == facts.size()) {
            facts.emplace_back();
            facts.back().directory = directoryOf(s);
            split.jobs.emplace_back();
        }
        join(facts[j], s);
        TraceJob& job = split.jobs[j];
        job.sources.push_back(i);
        if (s.rank) job.ranks.push_back(*s.rank);
        job.bytes += s.sizeBytes;
    }
    for (std::size_t j = 0; j < split.jobs.size(); ++j) {
        TraceJob& job = split.jobs[j];
        std::sort(job.sources.begin(), job.sources.end());
        std::sort(job.ranks.begin(), job.ranks.end());
        job.ranks.erase(std::unique(job.ranks.begin(), job.ranks.end()), job.ranks.end());
        job.worldSize = facts[j].worldSize;
        job.backend = facts[j].backend;
        job.firstNs = facts[j].firstNs;
        job.lastNs = facts[j].lastNs;
    }
    if (!split.mixed() && !split.bySubfolder) {
        std::vector<LaunchOfLog> launches;
        for (const RankLog& log : logs)
            launches.push_back(launchOf(log));
        // Only where no log names a launch: a log that does not, beside others that do, is a
        // rank that did not print it, not a run of its own.
        split.byStart = std::all_of(launches.begin(), launches.end(),
                                    [](const LaunchOfLog& l) { return l.key.empty(); });
        if (split.byStart) launches = launchesByStart(logs);
        if (std::vector<TraceJob> launched = splitByLaunch(sources, logs, launches, split.byStart);
            launched.size() > 1) {
            split.jobs = std::move(launched);
            split.byLaunch = true;
        } else {
            split.byStart = false;
        }
    }
    if (split.jobs.empty()) return split;
    const auto best = std::min_element(split.jobs.begin(), split.jobs.end(),
                                       [](const TraceJob& a, const TraceJob& b) {
                                           if (a.ranks.size() != b.ranks.size())
                                               return a.ranks.size() > b.ranks.size();
                                           return a.bytes > b.bytes;
                                       });
    split.analysed = int(best - split.jobs.begin());
    // The other files of a job's subfolder (the deepest that holds them) are its own: its logs'
    // launch lines and dumps are not the analysed job's. Files outside every job's subfolder stay
    // with the analysed job.
    if (split.bySubfolder) {
        for (int i = 0; i < int(sources.size()); ++i) {
            if (isTrace(sources[i])) continue;
            const QString directory = directoryOf(sources[i]);
            int owner = -1;
            for (std::size_t j = 0; j < split.jobs.size(); ++j)
                if (within(directory, facts[j].directory) &&
                    (owner < 0 ||
                     facts[j].directory.size() > facts[std::size_t(owner)].directory.size()))
                    owner = int(j);
            if (owner >= 0) split.jobs[std::size_t(owner)].sources.push_back(i);
        }
        for (TraceJob& job : split.jobs)
            std::sort(job.sources.begin(), job.sources.end());
    }
    for (std::size_t j = 0; j < split.jobs.size(); ++j)
        if (int(j) != split.analysed)
            for (const int i : split.jobs[j].sources)
                split.setAside[std::size_t(i)] = true;
    return split;
}

int JobSplit::jobOf(int sourceIndex) const
{
    if (sourceIndex >= 0 && std::size_t(sourceIndex) < setAside.size() &&
        setAside[std::size_t(sourceIndex)])
        for (std::size_t j = 0; j < jobs.size(); ++j)
            if (std::binary_search(jobs[j].sources.begin(), jobs[j].sources.end(), sourceIndex))
                return int(j);
    return analysed;
}

std::string splitReason(const JobSplit& split)
{
    if (split.bySubfolder)
        return "traces in different subfolders claim the same ranks, with no wall clock to place "
               "them in one run";
    if (split.byLaunch) return launchReason(split);
    return "they state different world sizes, backends or process-group sizes, a rank beyond "
           "another's world size, or ran more than " +
           std::to_string(JobSplit::kSameJobGapNs / 60'000'000'000) + " minutes apart";
}

std::string jobFacts(const TraceJob& job)
{
    std::string facts = job.ranks.empty() ? "no rank stated" : formatRanks(job.ranks);
    facts += job.worldSize > 0 ? "; world size " + std::to_string(job.worldSize)
                               : std::string("; no world size stated");
    if (!job.backend.isEmpty()) facts += "; " + job.backend.toStdString();
    return facts + "; " + timeRange(job.firstNs, job.lastNs);
}

Finding mixedJobsFinding(const JobSplit& split, const QList<SourceFile>& sources)
{
    Finding f;
    f.kind = FindingKind::MixedJobs;
    f.severity = Severity::Warning;
    f.confidence = 1.0;
    std::string jobs;
    std::size_t named = 0;
    std::vector<std::string> sizes;
    for (std::size_t j = 0; j < split.jobs.size(); ++j) {
        const TraceJob& job = split.jobs[j];
        const bool analysed = int(j) == split.analysed;
        // A summary stays readable: the analysed job and the first others are described.
        if (analysed || named + 1 < kNamedJobs) {
            jobs += (jobs.empty() ? "" : "; ") + describe(job, j, analysed, sources);
            ++named;
        }
        sizes.push_back(job.worldSize > 0 ? std::to_string(job.worldSize) : "unstated");
        if (split.byLaunch && f.evidence.size() < kMaxFindingEvidence) {
            Evidence e = job.launchLine;
            e.text = "job " + std::to_string(j + 1) +
                     (split.byStart ? " started " : " was launched with ") + job.launch + ": " +
                     e.text;
            f.evidence.push_back(std::move(e));
        }
        for (const int i : job.sources) {
            const SourceFile& s = sources.at(i);
            if (f.evidence.size() >= kMaxFindingEvidence) break;
            Evidence e;
            e.path = fileName(s);
            e.rank = s.rank.value_or(-1);
            e.text = "job " + std::to_string(j + 1) + ": " +
                     (s.rank ? "rank " + std::to_string(*s.rank) : std::string("no rank")) +
                     (s.stated.worldSize > 0 ? ", world size " + std::to_string(s.stated.worldSize)
                                             : std::string(", no world size")) +
                     (s.stated.backend.isEmpty() ? std::string()
                                                 : ", " + s.stated.backend.toStdString()) +
                     ", " +
                     (onWallClock(s.stated) ? timeRange(s.stated.firstNs, s.stated.lastNs)
                                            : std::string("no wall-clock time"));
            f.evidence.push_back(std::move(e));
        }
    }
    if (named < split.jobs.size())
        jobs += "; and " + std::to_string(split.jobs.size() - named) + " more jobs";
    f.summary =
        "the folder mixes " + std::string(split.byLaunch ? "files" : "traces") + " of " +
        std::to_string(split.jobs.size()) + " different jobs (" + splitReason(split) +
        "): " + jobs +
        ". No collective, clock or step of one job is compared with another's: the cross-rank "
        "checks cover job " +
        std::to_string(split.analysed + 1) +
        " only (the most ranks, then the most bytes); the other jobs' " +
        (split.setsAsideEveryFile() ? "files (traces, logs, dumps) are" : "traces are") +
        " set aside, each measured in the time breakdown as a file of its own, never as a rank "
        "of job " +
        std::to_string(split.analysed + 1) + ": open each job's files as a folder of their own";
    std::string detail = "stated world sizes ";
    for (std::size_t i = 0; i < sizes.size(); ++i)
        detail += (i ? ", " : "") + sizes[i];
    f.detail = detail;
    return f;
}

EventStore withoutSources(const EventStore& store, const std::vector<bool>& setAside)
{
    const auto aside = [&](int sourceIndex) {
        return sourceIndex >= 0 && std::size_t(sourceIndex) < setAside.size() &&
               setAside[std::size_t(sourceIndex)];
    };
    EventStore out;
    // Interned in order, every string keeps its id (a table's views point into its own strings,
    // so it is rebuilt rather than copied).
    for (std::size_t id = 1; id < store.strings.size(); ++id)
        out.strings.intern(store.strings.view(StringId(id)));
    out.rankLists = store.rankLists;
    out.lanes = store.lanes;
    for (Lane& lane : out.lanes)
        if (aside(lane.sourceIndex)) lane.rank = -1;
    out.collectives = store.collectives;
    for (CollectiveRecord& c : out.collectives)
        if (aside(c.sourceIndex) ||
            (c.laneIndex >= 0 && std::size_t(c.laneIndex) < out.lanes.size() &&
             aside(out.lanes[std::size_t(c.laneIndex)].sourceIndex)))
            c.rank = -1;
    out.flows = store.flows;
    return out;
}

} // namespace rankscope
