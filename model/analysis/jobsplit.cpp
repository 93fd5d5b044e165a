#include "model/analysis/jobsplit.h"

#include "model/analysis/analysiscontext.h"

#include <QDateTime>
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
constexpr std::size_t kMaxEvidence = 24;

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

// "job 2: a.json, b.json (ranks 0, 1; world size 128; nccl; 2023-04-29 ... UTC)".
std::string describe(const TraceJob& job, std::size_t index, bool analysed,
                     const QList<SourceFile>& sources)
{
    std::string files;
    for (std::size_t i = 0; i < job.sources.size() && i < kNamedFiles; ++i)
        files += (i ? ", " : "") + fileName(sources.at(job.sources[i]));
    if (job.sources.size() > kNamedFiles)
        files += " and " + std::to_string(job.sources.size() - kNamedFiles) + " more";
    std::string facts = job.ranks.empty() ? "no rank stated" : formatRanks(job.ranks);
    facts += job.worldSize > 0 ? "; world size " + std::to_string(job.worldSize)
                               : std::string("; no world size stated");
    if (!job.backend.isEmpty()) facts += "; " + job.backend.toStdString();
    facts += "; " + timeRange(job.firstNs, job.lastNs);
    return "job " + std::to_string(index + 1) + (analysed ? " (analysed): " : ": ") + files + " (" +
           facts + ")";
}

} // namespace

JobSplit splitJobs(const QList<SourceFile>& sources)
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
        for (const int i : job.sources) {
            const SourceFile& s = sources.at(i);
            if (f.evidence.size() >= kMaxEvidence) break;
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
        "the folder mixes traces of " + std::to_string(split.jobs.size()) + " different jobs (" +
        (split.bySubfolder
             ? std::string("traces in different subfolders claim the same ranks, with no wall "
                           "clock to place them in one run")
             : "they state different world sizes, backends or process-group sizes, a rank "
               "beyond another's world size, or ran more than " +
                   std::to_string(JobSplit::kSameJobGapNs / 60'000'000'000) + " minutes apart") +
        "): " + jobs +
        ". No collective, clock or step of one job is compared with another's: the cross-rank "
        "checks cover job " +
        std::to_string(split.analysed + 1) +
        " only (the most ranks, then the most bytes); the other jobs' " +
        (split.bySubfolder ? "files (traces, logs, dumps) are" : "traces are") +
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
