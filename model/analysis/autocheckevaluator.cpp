#include "model/analysis/autocheckevaluator.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/logtriage.h"
#include "model/analysis/rankfacts.h"
#include "model/analysis/sessionanalysis.h"
#include "model/trace/traceread.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>

namespace rankscope {

namespace {

// Evidence lists stay readable on a 1,024-rank job: the first few lines make the point.
constexpr std::size_t kMaxEvidence = 8;

QString rankList(const std::vector<int>& ranks)
{
    QStringList parts;
    for (std::size_t i = 0; i < ranks.size() && i < 12; ++i)
        parts << QString::number(ranks[i]);
    if (ranks.size() > 12) parts << QStringLiteral("… (%1 ranks)").arg(ranks.size());
    return (ranks.size() == 1 ? QStringLiteral("rank ") : QStringLiteral("ranks ")) +
           parts.join(QStringLiteral(", "));
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

void addEvidence(AutoCheckResult& r, const Evidence& e)
{
    // One line often shows several facts (MASTER_ADDR, MASTER_PORT and WORLD_SIZE together).
    for (const Evidence& have : r.evidence)
        if (have.path == e.path && have.line == e.line && have.timeNs == e.timeNs &&
            have.text == e.text)
            return;
    if (r.evidence.size() < kMaxEvidence) r.evidence.push_back(e);
}

// The facts a session has, per rank (RankFacts, as ConfigCheck reads them too), with what the
// checks read besides: the analysis' findings, the classified log lines and the read itself.
class Facts {
public:
    Facts(const TraceRead& s, const RankFacts& known, const AnalysisResult& analysis,
          const std::vector<Evidence>& classified, const ParallelControl& control = {})
        : session(s), known(known), analysis(analysis), classified(classified), control(control),
          ranks(known.ranks), logs(known.logs)
    {}

    const TraceRead& session;
    const RankFacts& known;
    const AnalysisResult& analysis;
    const std::vector<Evidence>& classified;
    // Polled by the checks that read every log line. A copy: evaluate() passes none, and a
    // reference to the default argument would outlive it.
    const ParallelControl control;
    const std::vector<int>& ranks;
    const std::map<int, std::vector<const RankLog*>>& logs;

    bool hasLog(int rank) const { return known.hasLog(rank); }
    static Evidence lineEvidence(const RankLog& log, int index)
    {
        return RankFacts::lineEvidence(log, index);
    }

    QString tracePath(int rank) const
    {
        const auto it = known.traces.find(rank);
        return it == known.traces.end() ? QString() : it->second;
    }

    Evidence traceEvidence(int rank, std::int64_t timeNs, const QString& text) const
    {
        Evidence e;
        e.path = tracePath(rank).toStdString();
        e.timeNs = timeNs;
        e.text = text.toStdString();
        e.rank = rank;
        return e;
    }

    std::vector<int> ranksWithout(const PerRank& values) const
    {
        return known.ranksWithout(values);
    }

    std::vector<int> ranksWithoutLog() const
    {
        std::vector<int> out;
        for (int r : ranks)
            if (!hasLog(r)) out.push_back(r);
        return out;
    }
};

// A fact compared across ranks.
struct Compared {
    QString factId;
    QString label; // for people: "torch version"
    PerRank values;
};

// The common shape of "equal on every rank": a disagreement fails, a gap is unknown.
AutoCheckResult compareAcrossRanks(const Facts& facts, const QString& id,
                                   const std::vector<Compared>& compared)
{
    AutoCheckResult r;
    r.checkId = id;
    if (facts.ranks.empty()) {
        r.summary = QStringLiteral("The folder has no file attributed to a rank.");
        return r;
    }
    QStringList differ;
    QStringList agree;
    std::vector<Evidence> agreeing;
    for (const Compared& c : compared) {
        const std::map<std::string, std::vector<int>> byValue = ranksByValue(c.values, facts.ranks);
        if (const std::vector<int> gap = facts.ranksWithout(c.values); !gap.empty())
            r.missing << QStringLiteral("%1 absent on %2").arg(c.factId, rankList(gap));
        if (byValue.size() > 1) {
            QStringList parts;
            for (const auto& [value, ranks] : byValue) {
                parts << QStringLiteral("%1 on %2").arg(qs(value), rankList(ranks));
                addEvidence(r, c.values.at(ranks.front()).source);
            }
            differ
                << QStringLiteral("%1 differs: %2").arg(c.label, parts.join(QStringLiteral("; ")));
        } else if (byValue.size() == 1) {
            agree << QStringLiteral("%1 %2").arg(c.label, qs(byValue.begin()->first));
            agreeing.push_back(c.values.begin()->second.source);
        }
    }
    if (!differ.isEmpty()) {
        r.outcome = AutoCheckOutcome::Failed;
        r.summary = differ.join(QStringLiteral(". ")) + QLatin1Char('.');
        r.missing.clear(); // the disagreement decides, whatever the gaps
        return r;
    }
    for (const Evidence& e : agreeing)
        addEvidence(r, e);
    if (!r.missing.isEmpty()) {
        r.summary = agree.isEmpty()
                        ? QStringLiteral("Not every rank logged what the check compares.")
                        : QStringLiteral("Agree where known (%1), but not every rank logged it.")
                              .arg(agree.join(QStringLiteral(", ")));
        return r;
    }
    r.outcome = AutoCheckOutcome::Passed;
    r.summary = QStringLiteral("%1 on all %2 ranks.")
                    .arg(agree.join(QStringLiteral(", ")))
                    .arg(facts.ranks.size());
    return r;
}

AutoCheckResult sameFrameworkVersion(const Facts& facts)
{
    return compareAcrossRanks(facts, QStringLiteral("same_framework_version"),
                              {{QStringLiteral("rank.framework_version"),
                                QStringLiteral("torch version"), facts.known.torchVersion},
                               {QStringLiteral("rank.nccl_version"), QStringLiteral("NCCL version"),
                                facts.known.ncclVersion},
                               {QStringLiteral("rank.cuda_version"), QStringLiteral("CUDA version"),
                                facts.known.cudaVersion}});
}

AutoCheckResult rendezvousEnvConsistent(const Facts& facts)
{
    // As ConfigCheck compares them: what each rank states (a communicator's size is no WORLD_SIZE:
    // it may be a subgroup's).
    const PerRank& world = facts.known.worldSize;
    AutoCheckResult r = compareAcrossRanks(
        facts, QStringLiteral("rendezvous_env_consistent"),
        {{QStringLiteral("rank.env.MASTER_ADDR"), QStringLiteral("MASTER_ADDR"),
          facts.known.masterAddr},
         {QStringLiteral("rank.env.MASTER_PORT"), QStringLiteral("MASTER_PORT"),
          facts.known.masterPort},
         {QStringLiteral("rank.env.WORLD_SIZE"), QStringLiteral("WORLD_SIZE"), world}});
    if (r.outcome == AutoCheckOutcome::Failed) return r;
    // WORLD_SIZE agrees where printed; the ranks it names must also have started (the one
    // decision on missing ranks, RankPresence, as ConfigCheck reads it).
    const RankPresence& presence = facts.known.presence;
    if (presence.neverStarted) {
        r.outcome = AutoCheckOutcome::Failed;
        r.summary = QStringLiteral("WORLD_SIZE is %1 but only %2 started (%3 left no file and no "
                                   "rank got past the rendezvous).")
                        .arg(presence.worldSize)
                        .arg(rankList(presence.present()))
                        .arg(qs(formatRankRanges(presence.absent)));
        r.missing.clear();
    }
    return r;
}

AutoCheckResult allRanksPresent(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("all_ranks_present");
    // The one decision on missing ranks (RankPresence), as the missing-ranks finding and
    // ConfigCheck read it: the world size the files state, the members process groups list.
    const RankPresence& presence = facts.known.presence;
    const int worldSize = presence.worldSize;
    if (worldSize > 0 && !presence.worldSizeSource.text.empty())
        addEvidence(r, presence.worldSizeSource);
    const std::vector<RankRange>& absent = presence.absent;
    if (worldSize <= 0 && absent.empty()) {
        r.missing << QStringLiteral("rank.env.WORLD_SIZE absent on every rank");
        r.summary = QStringLiteral("No rank printed WORLD_SIZE (nor NCCL nranks, nor a trace "
                                   "world_size), so the expected ranks are not known.");
        return r;
    }

    // Reached initialisation: NCCL said Init COMPLETE, or the rank issued a collective. A rank
    // that logged NCCL output but neither did not get there; one without NCCL output is unknown.
    std::vector<int> stuck;
    std::vector<int> unknown;
    for (int rank : facts.ranks) {
        if (worldSize > 0 && rank >= worldSize) continue;
        bool complete = facts.session.events.collectiveCountOfRank(rank) > 0;
        bool ncclOutput = false;
        const auto it = facts.logs.find(rank);
        if (it != facts.logs.end())
            for (const RankLog* log : it->second)
                for (const LogFact& f : log->facts()) {
                    if (f.kind == LogFactKind::NcclInit ||
                        f.kind == LogFactKind::NcclNetInterface ||
                        f.kind == LogFactKind::NcclVersion || f.kind == LogFactKind::NcclColl)
                        ncclOutput = true;
                    if ((f.kind == LogFactKind::NcclInit && f.value("status") == "complete") ||
                        f.kind == LogFactKind::NcclColl)
                        complete = true;
                }
        if (complete) continue;
        (ncclOutput ? stuck : unknown).push_back(rank);
        if (ncclOutput && it != facts.logs.end()) {
            const RankLog& log = *it->second.front();
            addEvidence(r, Facts::lineEvidence(log, log.lastLine()));
        }
    }
    QStringList problems;
    if (!absent.empty() && worldSize > absent.back().second)
        problems << QStringLiteral("%1 is %2 but %3 left no log, trace or dump")
                        .arg(qs(presence.worldSizeStatedAs))
                        .arg(worldSize)
                        .arg(qs(formatRankRanges(absent)));
    else if (!absent.empty())
        problems << QStringLiteral("%1, listed as group members, left no log, trace or dump")
                        .arg(qs(formatRankRanges(absent)));
    if (!stuck.empty())
        problems << QStringLiteral("%1 logged NCCL output but no Init COMPLETE and no collective")
                        .arg(rankList(stuck));
    if (!problems.isEmpty()) {
        r.outcome = AutoCheckOutcome::Failed;
        r.summary = problems.join(QStringLiteral("; ")) + QLatin1Char('.');
        return r;
    }
    if (!unknown.empty()) {
        r.missing << QStringLiteral("rank.nccl.init_complete absent on %1").arg(rankList(unknown));
        r.summary =
            QStringLiteral("All %1 ranks left files, but %2 neither logged NCCL "
                           "initialisation nor recorded a collective.")
                .arg(std::max<std::size_t>(std::size_t(std::max(worldSize, 0)), facts.ranks.size()))
                .arg(rankList(unknown));
        return r;
    }
    r.outcome = AutoCheckOutcome::Passed;
    r.summary =
        QStringLiteral("All %1 ranks left files and reached process-group initialisation.")
            .arg(std::max<std::size_t>(std::size_t(std::max(worldSize, 0)), facts.ranks.size()));
    return r;
}

AutoCheckResult sameNcclInterface(const Facts& facts)
{
    return compareAcrossRanks(facts, QStringLiteral("same_nccl_interface"),
                              {{QStringLiteral("rank.nccl.net_interface"),
                                QStringLiteral("NCCL network"), facts.known.ncclNetwork}});
}

AutoCheckResult ncclTransportNotSocket(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("nccl_transport_not_socket");
    // Every NET line of a rank counts: one communicator may use IB and another fall back.
    std::map<int, std::set<std::string>> transports;
    std::vector<Evidence> ib;
    std::vector<Evidence> socket;
    for (const auto& [rank, streams] : facts.logs)
        for (const RankLog* log : streams)
            for (const LogFact* f : log->factsOfKind(LogFactKind::NcclNetInterface)) {
                const std::string t = f->value("transport");
                if (t.empty()) continue;
                transports[rank].insert(t);
                if (t == "IB" && ib.size() < kMaxEvidence / 2)
                    ib.push_back(Facts::lineEvidence(*log, f->line));
                if (t == "Socket" && socket.size() < kMaxEvidence / 2)
                    socket.push_back(Facts::lineEvidence(*log, f->line));
            }
    std::vector<int> ibRanks;
    std::vector<int> socketRanks;
    std::vector<int> unknown;
    for (int rank : facts.ranks) {
        const auto it = transports.find(rank);
        if (it == transports.end()) {
            unknown.push_back(rank);
            continue;
        }
        if (it->second.count("IB")) ibRanks.push_back(rank);
        if (it->second.count("Socket")) socketRanks.push_back(rank);
    }
    if (!ibRanks.empty() && !socketRanks.empty()) {
        r.outcome = AutoCheckOutcome::Failed;
        r.summary = QStringLiteral("%1 used InfiniBand/RoCE but %2 fell back to NET/Socket.")
                        .arg(rankList(ibRanks), rankList(socketRanks));
        for (const Evidence& e : ib)
            addEvidence(r, e);
        for (const Evidence& e : socket)
            addEvidence(r, e);
        return r;
    }
    for (const Evidence& e : ib.empty() ? socket : ib)
        addEvidence(r, e);
    if (facts.ranks.empty() || !unknown.empty()) {
        if (!unknown.empty())
            r.missing
                << QStringLiteral("rank.nccl.net_transport absent on %1").arg(rankList(unknown));
        r.summary = QStringLiteral("Not every rank logged which NCCL network it chose "
                                   "(NCCL_DEBUG=INFO prints the NET/ lines).");
        return r;
    }
    r.outcome = AutoCheckOutcome::Passed;
    r.summary = ibRanks.empty()
                    ? QStringLiteral("No rank reported an InfiniBand/RoCE device; all %1 ranks "
                                     "use NET/Socket, so none fell back.")
                          .arg(facts.ranks.size())
                    : QStringLiteral("All %1 ranks use InfiniBand/RoCE.").arg(facts.ranks.size());
    return r;
}

AutoCheckResult noPortInUse(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("no_port_in_use");
    // The store's server side is often only in the launcher's own lines: read every stream.
    std::set<int> ranks;
    for (const RankLog& log : facts.session.logs)
        for (int i = 0; i < log.lineCount(); ++i) {
            if (i % AutoCheckEvaluator::kLinesPerPoll == 0 && stopRequested(facts.control))
                return r;
            // std::string_view's find (memchr for the first byte): on every line of a GB log,
            // ten times faster than QByteArrayView::contains.
            const QByteArrayView bytes = log.lineBytes(i);
            const std::string_view line(bytes.data(), std::size_t(bytes.size()));
            if (line.find("Address already in use") != line.npos ||
                line.find("errno: 98") != line.npos || line.find("EADDRINUSE") != line.npos) {
                addEvidence(r, Facts::lineEvidence(log, i));
                ranks.insert(log.rank.value_or(-1));
            }
        }
    if (!r.evidence.empty()) {
        std::vector<int> named;
        for (int rank : ranks)
            if (rank >= 0) named.push_back(rank);
        r.outcome = AutoCheckOutcome::Failed;
        r.summary = QStringLiteral("A bind failed with “Address already in use”%1: a process "
                                   "from an earlier run, or another job, holds the port.")
                        .arg(named.empty() ? QStringLiteral(" (in the launcher's output)")
                                           : QStringLiteral(" on ") + rankList(named));
        return r;
    }
    if (const std::vector<int> gap = facts.ranksWithoutLog(); !gap.empty() || facts.ranks.empty()) {
        if (!gap.empty())
            r.missing
                << QStringLiteral("rank.log.bind_errors absent on %1 (no log)").arg(rankList(gap));
        r.summary = QStringLiteral("No bind failure in the logs there are, but not every rank "
                                   "left a log.");
        return r;
    }
    r.outcome = AutoCheckOutcome::Passed;
    r.summary =
        QStringLiteral("No bind failure in the logs of all %1 ranks.").arg(facts.ranks.size());
    return r;
}

bool isMemoryKill(const Evidence& e)
{
    const auto endsWith = [&](const char* leaf) {
        const std::string s = leaf;
        return e.symptom.size() >= s.size() &&
               e.symptom.compare(e.symptom.size() - s.size(), s.size(), s) == 0;
    };
    return endsWith("/out-of-memory") || endsWith("/memory-issue");
}

AutoCheckResult noOomBeforeHang(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("no_oom_before_hang");
    const Evidence* firstTimeout = nullptr;
    for (const Evidence& e : facts.classified)
        if (!e.cascade && LogTriage::isWaiting(e) && e.timeNs >= 0 &&
            (!firstTimeout || e.timeNs < firstTimeout->timeNs))
            firstTimeout = &e;
    std::vector<const Evidence*> before;
    std::vector<const Evidence*> undated;
    std::vector<const Evidence*> after;
    for (const Evidence& e : facts.classified) {
        if (!isMemoryKill(e)) continue;
        if (!firstTimeout)
            before.push_back(&e); // no hang: any OOM or kill is the story
        else if (e.timeNs < 0)
            undated.push_back(&e);
        else
            (e.timeNs <= firstTimeout->timeNs ? before : after).push_back(&e);
    }
    if (!before.empty()) {
        r.outcome = AutoCheckOutcome::Failed;
        for (const Evidence* e : before)
            addEvidence(r, e->cited());
        if (firstTimeout) addEvidence(r, firstTimeout->cited());
        r.summary = firstTimeout
                        ? QStringLiteral("Rank %1 ran out of memory or was killed before the first "
                                         "collective timeout: the hang follows from it.")
                              .arg(before.front()->rank)
                        : QStringLiteral("Rank %1 ran out of memory or was killed (no collective "
                                         "timeout was reported).")
                              .arg(before.front()->rank);
        return r;
    }
    if (firstTimeout) addEvidence(r, firstTimeout->cited());
    if (!undated.empty()) {
        addEvidence(r, undated.front()->cited());
        r.missing << QStringLiteral("rank.errors.time absent for the memory error on rank %1")
                         .arg(undated.front()->rank);
        r.summary = QStringLiteral("A memory error has no timestamp, so it cannot be placed "
                                   "before or after the first timeout.");
        return r;
    }
    if (const std::vector<int> gap = facts.ranksWithoutLog(); !gap.empty() || facts.ranks.empty()) {
        if (!gap.empty())
            r.missing
                << QStringLiteral("rank.errors.kind absent on %1 (no log)").arg(rankList(gap));
        r.summary = QStringLiteral("No memory error in the logs there are, but not every rank "
                                   "left a log.");
        return r;
    }
    r.outcome = AutoCheckOutcome::Passed;
    r.summary = after.empty()
                    ? QStringLiteral("No rank reported a CUDA OOM, a host OOM kill or SIGKILL.")
                    : QStringLiteral("Memory errors come only after the first collective timeout "
                                     "(consequences, not the cause).");
    for (const Evidence* e : after)
        addEvidence(r, e->cited());
    return r;
}

// The last training step each rank reached: its log's step lines when every rank has them (the
// numbers the user printed), else its trace's ProfilerStep#N spans.
PerRank lastSteps(const Facts& facts)
{
    const PerRank& fromLogs = facts.known.lastLogStep;
    PerRank fromTrace;
    for (const auto& [rank, spans] : facts.analysis.steps.all()) {
        if (spans.empty()) continue;
        const auto last =
            std::max_element(spans.begin(), spans.end(), [](const StepSpan& a, const StepSpan& b) {
                return a.number < b.number;
            });
        fromTrace[rank] = {std::to_string(last->number),
                           facts.traceEvidence(rank, last->startNs,
                                               QString::fromStdString(facts.analysis.steps.label(
                                                   rank, int(last - spans.begin()))))};
    }
    if (facts.ranksWithout(fromLogs).empty() || fromLogs.size() >= fromTrace.size())
        return fromLogs;
    return fromTrace;
}

// A check about what a detector decides fails on the detector's findings of these kinds (the
// first one's summary, every one's evidence), and with `conditions` only on those that hold one
// of them; true when there is one.
bool failOnFindings(AutoCheckResult& r, const Facts& facts, const std::set<FindingKind>& kinds,
                    const std::set<std::string>& conditions = {})
{
    for (const Finding& f : facts.analysis.findings) {
        if (!kinds.count(f.kind)) continue;
        if (!conditions.empty() &&
            std::none_of(f.conditions.begin(), f.conditions.end(),
                         [&](const std::string& c) { return conditions.count(c) != 0; }))
            continue;
        if (r.outcome != AutoCheckOutcome::Failed)
            r.summary = QStringLiteral("%1 (%2).").arg(qs(f.summary), qs(f.id));
        r.outcome = AutoCheckOutcome::Failed;
        for (const Evidence& e : f.evidence)
            addEvidence(r, e);
    }
    return r.outcome == AutoCheckOutcome::Failed;
}

// The last steps the ranks reached can agree while a rank ran fewer batches: the job stops at
// the step where its input ran out, every rank's last step that one. What the collectives show
// decides first: a rank that never issued the others' collective after fewer steps, or left its
// loop for a barrier while the others still trained (HangDetector's uneven-input findings).
AutoCheckResult allRanksSameStepCount(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("all_ranks_same_step_count");
    if (failOnFindings(r, facts,
                       {FindingKind::Hang, FindingKind::Desync, FindingKind::CollectiveMismatch},
                       {"fewer_steps", "waits_in_barrier"}))
        return r;
    return compareAcrossRanks(
        facts, r.checkId,
        {{QStringLiteral("rank.step_count"), QStringLiteral("last step"), lastSteps(facts)}});
}

// A check whose fact some ranks lack (`without`; or there are no ranks) stays unknown with
// `summary`, naming the ranks and why the fact is absent (`fact` "absent on" ranks "(why)");
// true when it does.
bool unknownWithout(AutoCheckResult& r, const Facts& facts, const std::vector<int>& without,
                    const QString& fact, const QString& why, const QString& summary)
{
    if (!facts.ranks.empty() && without.empty()) return false;
    if (!without.empty())
        r.missing << QStringLiteral("%1 absent on %2 (%3)").arg(fact, rankList(without), why);
    r.summary = summary;
    return true;
}

AutoCheckResult sameCollectiveSequence(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("same_collective_sequence");
    if (failOnFindings(r, facts, {FindingKind::CollectiveMismatch, FindingKind::Desync})) return r;
    std::vector<int> without;
    for (int rank : facts.ranks)
        if (facts.session.events.collectiveCountOfRank(rank) == 0) without.push_back(rank);
    if (unknownWithout(r, facts, without, QStringLiteral("rank.collectives.seq"),
                       QStringLiteral("no trace or Flight Recorder collective"),
                       QStringLiteral("The collectives cannot be compared: not every rank "
                                      "recorded them.")))
        return r;
    r.outcome = AutoCheckOutcome::Passed;
    r.summary = QStringLiteral("%1 collectives matched across %2 ranks without an op, size, "
                               "dtype or order mismatch.")
                    .arg(facts.analysis.collectiveCount)
                    .arg(facts.ranks.size());
    return r;
}

AutoCheckResult uniqueGpuPerRank(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("unique_gpu_per_rank");
    // Each rank's host and device as RankFacts read them, each with where it was read.
    const PerRank& hosts = facts.known.host;
    const PerRank& devices = facts.known.cudaDevice;
    std::map<std::pair<std::string, std::string>, std::vector<int>> byGpu;
    for (int rank : facts.ranks)
        if (hosts.count(rank) && devices.count(rank))
            byGpu[{hosts.at(rank).value, devices.at(rank).value}].push_back(rank);
    QStringList shared;
    for (const auto& [gpu, ranks] : byGpu)
        if (ranks.size() > 1) {
            shared << QStringLiteral("%1 share device %2 on %3")
                          .arg(rankList(ranks), qs(gpu.second), qs(gpu.first));
            for (int rank : ranks)
                addEvidence(r, devices.at(rank).source);
        }
    if (!shared.isEmpty()) {
        r.outcome = AutoCheckOutcome::Failed;
        r.summary = shared.join(QStringLiteral("; ")) + QLatin1Char('.');
        return r;
    }
    const std::vector<int> noHost = facts.ranksWithout(hosts);
    const std::vector<int> noDevice = facts.ranksWithout(devices);
    if (!noHost.empty())
        r.missing << QStringLiteral("rank.host absent on %1").arg(rankList(noHost));
    if (!noDevice.empty())
        r.missing << QStringLiteral("rank.cuda_device absent on %1").arg(rankList(noDevice));
    if (facts.ranks.empty() || !r.missing.isEmpty()) {
        r.summary = QStringLiteral("No two ranks are known to share a GPU, but not every rank's "
                                   "host and device are known.");
        return r;
    }
    for (int rank : facts.ranks)
        addEvidence(r, devices.at(rank).source);
    r.outcome = AutoCheckOutcome::Passed;
    r.summary = QStringLiteral("Each of the %1 ranks has a GPU of its own on its host.")
                    .arg(facts.ranks.size());
    return r;
}

// StragglerDetector decides who the others wait for (after clock alignment, more often than
// chance, by a margin that matters against the step time); the check reports its decision.
AutoCheckResult noStragglerRank(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("no_straggler_rank");
    const AnalysisResult& analysis = facts.analysis;
    if (failOnFindings(r, facts, {FindingKind::Straggler})) return r;
    std::vector<int> without;
    int samples = 0;
    for (int rank : facts.ranks) {
        const auto it = analysis.arrivals.find(rank);
        if (it == analysis.arrivals.end() || it->second.samples == 0)
            without.push_back(rank);
        else
            samples = std::max(samples, it->second.samples);
    }
    if (unknownWithout(r, facts, without, QStringLiteral("rank.collectives.arrival"),
                       QStringLiteral("no completed collective matched with another rank's"),
                       QStringLiteral("Arrival times at the collectives are not known on every "
                                      "rank, so who the others wait for cannot be told.")))
        return r;
    r.outcome = AutoCheckOutcome::Passed;
    r.summary = QStringLiteral("No rank arrives last at the collectives more often than chance "
                               "(up to %1 collectives compared per rank, after clock alignment).")
                    .arg(samples);
    return r;
}

// LogTriage (with the analysis' reconciliation of logs and traces) decides which error is the
// root and which follow from it; the check reports that decision. The step asks whether the
// failing rank is known: a root error the logs hold passes; so does a trace or dump that names
// the rank the others waited for (the step's "or the lagging rank named") when the logs hold
// only consequences and timeouts, and the summary says the cause is the trace's. Logs that hold
// only consequences and nothing else naming a culprit fail: the failing rank left no error of its
// own and no trace shows it.
AutoCheckResult rootErrorBeforeCascade(const Facts& facts)
{
    AutoCheckResult r;
    r.checkId = QStringLiteral("root_error_before_cascade");
    static const std::set<FindingKind> kRootKinds = {FindingKind::Crash, FindingKind::SetupFailure,
                                                     FindingKind::CollectiveMismatch,
                                                     FindingKind::LogSymptom};
    const Finding* root = nullptr;
    const Finding* traced = nullptr; // the first error that blames ranks on a trace's evidence
    const Finding* firstError = nullptr;
    for (const Finding& f : facts.analysis.findings) {
        if (f.severity != Severity::Error) continue;
        if (!firstError) firstError = &f;
        const bool fromLog = std::any_of(f.evidence.begin(), f.evidence.end(),
                                         [](const Evidence& e) { return e.line > 0; });
        // Trace events and dump entries are cited without a line.
        const bool fromTrace = std::any_of(f.evidence.begin(), f.evidence.end(),
                                           [](const Evidence& e) { return e.line < 0; });
        if (!root && fromLog && kRootKinds.count(f.kind)) root = &f;
        if (!traced && fromTrace && !f.ranks.empty()) traced = &f;
    }
    if (root) {
        r.outcome = AutoCheckOutcome::Passed;
        r.summary = QStringLiteral("The root error is in the logs: %1 (%2).")
                        .arg(qs(root->summary), qs(root->id));
        for (const Evidence& e : root->evidence)
            addEvidence(r, e);
        return r;
    }
    if (traced) {
        r.outcome = AutoCheckOutcome::Passed;
        r.summary = QStringLiteral("The failing rank is known from the traces, not from the logs: "
                                   "%1 (%2).%3")
                        .arg(qs(traced->summary), qs(traced->id),
                             facts.classified.empty()
                                 ? QString()
                                 : QStringLiteral(" The logs hold only its consequences and "
                                                  "timeouts waiting for a peer."));
        for (const Evidence& e : traced->evidence)
            if (e.line < 0) addEvidence(r, e);
        return r;
    }
    if (facts.classified.empty()) {
        if (const std::vector<int> gap = facts.ranksWithoutLog(); !gap.empty())
            r.missing << QStringLiteral("rank.errors absent on %1 (no log)").arg(rankList(gap));
        r.summary = QStringLiteral("No rank logged an error the classifier knows.");
        return r;
    }
    r.outcome = AutoCheckOutcome::Failed;
    for (const Evidence& e : facts.classified)
        addEvidence(r, e.cited());
    r.summary = QStringLiteral("The logs hold only consequences and timeouts waiting for a peer, "
                               "and no trace names the rank they waited for: the rank that failed "
                               "left no error of its own.");
    if (firstError)
        r.summary += QStringLiteral(" The analysis can only infer the cause from them: %1 (%2).")
                         .arg(qs(firstError->summary), qs(firstError->id));
    return r;
}

using CheckFn = AutoCheckResult (*)(const Facts&);

const std::vector<std::pair<QString, CheckFn>>& checks()
{
    static const std::vector<std::pair<QString, CheckFn>> table = {
        {QStringLiteral("same_framework_version"), &sameFrameworkVersion},
        {QStringLiteral("rendezvous_env_consistent"), &rendezvousEnvConsistent},
        {QStringLiteral("all_ranks_present"), &allRanksPresent},
        {QStringLiteral("same_nccl_interface"), &sameNcclInterface},
        {QStringLiteral("nccl_transport_not_socket"), &ncclTransportNotSocket},
        {QStringLiteral("no_port_in_use"), &noPortInUse},
        {QStringLiteral("no_oom_before_hang"), &noOomBeforeHang},
        {QStringLiteral("all_ranks_same_step_count"), &allRanksSameStepCount},
        {QStringLiteral("same_collective_sequence"), &sameCollectiveSequence},
        {QStringLiteral("unique_gpu_per_rank"), &uniqueGpuPerRank},
        {QStringLiteral("no_straggler_rank"), &noStragglerRank},
        {QStringLiteral("root_error_before_cascade"), &rootErrorBeforeCascade},
    };
    return table;
}

} // namespace

QString autoCheckOutcomeLabel(AutoCheckOutcome outcome)
{
    switch (outcome) {
    case AutoCheckOutcome::Passed:
        return QStringLiteral("Passed");
    case AutoCheckOutcome::Failed:
        return QStringLiteral("Failed");
    case AutoCheckOutcome::Unknown:
        break;
    }
    return QStringLiteral("Unknown");
}

std::optional<StepStatus> suggestedStepStatus(AutoCheckOutcome outcome)
{
    // A failed check found the problem the step addresses: the step is still to do, and
    // "Failed" would read as a remedy the user tried without success.
    switch (outcome) {
    case AutoCheckOutcome::Passed:
        return StepStatus::Done;
    case AutoCheckOutcome::Failed:
    case AutoCheckOutcome::Unknown:
        break;
    }
    return std::nullopt;
}

QString AutoCheckResult::evidenceText() const
{
    QStringList lines;
    if (!summary.isEmpty()) lines << summary;
    for (const QString& m : missing)
        lines << QStringLiteral("Missing: %1").arg(m);
    for (const Evidence& e : evidence) {
        QString where = qs(e.path);
        if (e.line > 0)
            where += QStringLiteral(":%1").arg(e.line);
        else if (e.timeNs >= 0)
            where += QStringLiteral(" @%1 ns").arg(e.timeNs);
        lines << QStringLiteral("%1: %2").arg(where, qs(e.text));
    }
    return lines.join(QLatin1Char('\n'));
}

QStringList AutoCheckEvaluator::checkIds()
{
    QStringList ids;
    for (const auto& [id, fn] : checks())
        ids << id;
    return ids;
}

bool AutoCheckEvaluator::canEvaluate(const QString& checkId)
{
    return checkIds().contains(checkId);
}

AutoCheckResult AutoCheckEvaluator::evaluate(const TraceRead& read, const RankFacts& known,
                                             const AnalysisResult& analysis, const QString& checkId,
                                             const std::vector<Evidence>& logs)
{
    const Facts facts(read, known, analysis, logs);
    for (const auto& [id, fn] : checks())
        if (id == checkId) return fn(facts);
    AutoCheckResult r;
    r.checkId = checkId;
    r.summary = QStringLiteral("RankScope has no evaluation for this check.");
    return r;
}

std::vector<AutoCheckResult> AutoCheckEvaluator::evaluateAll(const TraceRead& read,
                                                             const RankFacts& known,
                                                             const AnalysisResult& analysis,
                                                             const std::vector<Evidence>& logs,
                                                             const ParallelControl& control)
{
    const Facts facts(read, known, analysis, logs, control);
    std::vector<AutoCheckResult> out;
    for (const auto& [id, fn] : checks()) {
        if (stopRequested(control)) return {};
        out.push_back(fn(facts));
    }
    return stopRequested(control) ? std::vector<AutoCheckResult>{} : out;
}

} // namespace rankscope
