#include "model/analysis/analyzer.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/fixselection.h"
#include "model/analysis/logtriage.h"
#include "model/analysis/symptomids.h"

#include <algorithm>
#include <optional>
#include <set>

namespace rankscope {

namespace {

constexpr const char* kPriorIterationPhrase = "in the prior iteration";

double severityWeight(Severity s)
{
    return s == Severity::Error ? 1.0 : s == Severity::Warning ? 0.6 : 0.25;
}

bool isTraceHang(const Finding& f)
{
    return (f.kind == FindingKind::Hang || f.kind == FindingKind::Desync) &&
           f.severity == Severity::Error;
}

// Ranks a trace hang finding shows waiting: its evidence ranks that are not blamed.
std::set<int> waitersOf(const Finding& f)
{
    std::set<int> w;
    for (const Evidence& e : f.evidence)
        if (e.rank >= 0 && std::find(f.ranks.begin(), f.ranks.end(), e.rank) == f.ranks.end())
            w.insert(e.rank);
    return w;
}

bool isWaitLikeSymptom(const std::string& s)
{
    return s == symptoms::kCommunicationError || s == symptoms::kHang ||
           s == symptoms::kSetupHang || s == symptoms::kPreparationHang;
}

// " (rank 2 left only a file that could not be read: see the Files list)" for the absent ranks
// whose files could not be read; empty when there are none.
std::string unreadableNote(const RankPresence& p)
{
    std::vector<int> unread;
    for (const auto& [rank, kinds] : p.files)
        if (kinds == kUnreadFile) unread.push_back(rank);
    if (unread.empty()) return {};
    return " (" + formatRanks(unread) + " left only " +
           (unread.size() == 1 ? "a file that could not be read" : "files that could not be read") +
           ": the Files list says why)";
}

// The ranks of the job that left no file (RankPresence::absent), unless ConfigCheck names them
// as never started: one warning that names them and says what it rules out; they are nobody's
// culprit (the matcher leaves them out of every row).
std::optional<Finding> absentRanks(const RankPresence& p)
{
    const std::vector<int> present = p.present();
    if (p.absent.empty() || present.empty() || p.neverStarted) return std::nullopt;
    Finding f;
    f.kind = FindingKind::MissingRanks;
    f.severity = Severity::Warning;
    f.confidence = 1.0;
    const bool one = rankCount(p.absent) == 1;
    const std::string them = one ? "it" : "them";
    // Ranks of the folder whose files are another job's: the analysed job lacks them, the folder
    // does not.
    std::vector<int> elsewhere;
    for (const RankRange& range : p.absent)
        for (auto it = p.setAside.lower_bound(range.first);
             it != p.setAside.end() && it->first <= range.second; ++it)
            elsewhere.push_back(it->first);
    const std::string setAsideNote =
        elsewhere.empty() ? std::string()
        : elsewhere.size() == 1
            ? " of this job (rank " + std::to_string(elsewhere.front()) + "'s " +
                  p.setAside.at(elsewhere.front()) + " is set aside as another job's)"
            : " of this job (the files of " + formatRanks(elsewhere) +
                  " are set aside as another job's)";
    f.summary =
        (elsewhere.empty() ? "the folder holds files for " : "the analysed job's files are of ") +
        formatRanks(present) + " only; " + formatRankRanges(p.absent) +
        (p.worldSize > p.absent.back().second
             ? " (world size " + std::to_string(p.worldSize) + ", as " + p.worldSizeStatedAs +
                   " states)"
             : std::string(one ? " (listed as a member of a process group)"
                               : " (listed as members of a process group)")) +
        " left no readable trace, log or dump" + unreadableNote(p) + setAsideNote +
        ", so whether " + (one ? "it" : "they") +
        " hung, crashed, lagged or issued other collectives is unknown: no finding blames " + them +
        " or counts " + them +
        " missing from a collective, and the cross-rank checks compare only the ranks present";
    if (p.worldSize > p.absent.back().second && !p.worldSizeSource.text.empty())
        f.evidence.push_back(p.worldSizeSource);
    return f;
}

// Where each group's records come from, for people: "Flight Recorder dump", "trace".
std::string recordKind(const EventStore& store, const CollectiveGroup& g)
{
    for (const MatchedCollective& row : g.collectives)
        for (std::int32_t i : row.records) {
            if (i < 0) continue;
            const CollectiveRecord& c = store.collectives[std::size_t(i)];
            if (c.laneIndex >= 0) return "trace";
            if (c.sourceLine >= 0 || c.stateUnknown) return "NCCL collective lines";
            return "Flight Recorder dump";
        }
    return "trace or Flight Recorder dump";
}

// The ranks of each group that recorded none of its collectives, and what they left instead;
// and the job's ranks that left nothing.
void markUnrecorded(std::vector<CollectiveGroup>& groups, const EventStore& store,
                    const RankPresence& p)
{
    for (CollectiveGroup& g : groups) {
        std::vector<int> unrecorded;
        if (g.membersFromSource)
            unrecorded = g.absentMembers;
        else
            for (int r : p.present())
                if (!p.left(r, kRecordsCollectives)) unrecorded.push_back(r);
        // The job's ranks that left no file at all are in no group's members (nothing lists
        // them): they are as uncompared as the members that recorded nothing.
        const bool absentUncompared = !g.membersFromSource && !p.absent.empty() && !p.neverStarted;
        if (absentUncompared) g.unrecordedWhy = formatRankRanges(p.absent) + " left no file at all";
        if (unrecorded.empty()) continue;
        std::map<unsigned, std::vector<int>> byFiles;
        for (int r : unrecorded) {
            const auto it = p.files.find(r);
            byFiles[it == p.files.end() ? 0u : it->second].push_back(r);
        }
        const std::string kind = recordKind(store, g);
        for (const auto& [files, ranks] : byFiles) {
            if (!g.unrecordedWhy.empty()) g.unrecordedWhy += "; ";
            g.unrecordedWhy +=
                formatRanks(ranks) + " left no " +
                (files == 0 ? "file at all" : kind + " (only " + describeRankFiles(files) + ")");
        }
        g.unrecorded = std::move(unrecorded);
    }
}

// A collective the Flight Recorder shows timing out (`f`, its retired entries) in a group whose
// other members recorded none of their collectives: no finding can say which rank kept the
// others waiting. Unless a trace's finding on the group does, the timeout is the headline, with
// what is missing instead of a culprit.
void notComparable(Finding& f, const std::vector<CollectiveGroup>& groups,
                   const std::vector<Finding>& trace, const std::vector<Finding>& dumps)
{
    const auto g = std::find_if(groups.begin(), groups.end(), [&](const CollectiveGroup& g) {
        return g.name == f.processGroup && !g.unrecordedWhy.empty();
    });
    if (g == groups.end()) return;
    const auto explains = [&](const Finding& t) {
        return isTraceHang(t) && t.processGroup == f.processGroup && !t.ranks.empty();
    };
    if (std::any_of(trace.begin(), trace.end(), explains) ||
        std::any_of(dumps.begin(), dumps.end(), explains))
        return;
    f.severity = Severity::Error;
    f.confidence = 0.6;
    f.conditions = {"peer_unrecorded"};
    f.detail = g->unrecordedWhy;
    f.summary +=
        "; " + g->unrecordedWhy + ": cannot compare, so which rank kept them waiting is unknown";
}

// Whether the traces of `ranks` (each a member of some group) show each of them completing the
// last collective of every group it is in: with no hang in the traces, the waiting the logs
// report is outside what the traces hold, so the traces cannot back a rank as never arriving.
bool tracesShowAllCompleted(const std::vector<GroupProgress>& progress,
                            const std::vector<int>& ranks)
{
    std::set<int> seen;
    for (const GroupProgress& g : progress)
        for (const RankProgress& r : g.ranks) {
            if (std::find(ranks.begin(), ranks.end(), r.rank) == ranks.end()) continue;
            if (g.wavefront < 0 || r.lastCompleted != g.wavefront) return false;
            seen.insert(r.rank);
        }
    return seen.size() == ranks.size();
}

// A trace's hang that blames nobody only because members of its group left no trace, when those
// members include every rank the logs name as never arriving: it is the wait the logs' finding
// `f` explains, not a second error that calls the culprit unknown beside it. It merges into `f`,
// which says why the traces cannot confirm the rank it names.
void mergeUncomparedWait(Finding& f, std::vector<Finding>& trace,
                         const std::vector<CollectiveGroup>& groups, const EventStore& store)
{
    std::erase_if(trace, [&](const Finding& t) {
        if (!isTraceHang(t) || !t.ranks.empty() ||
            t.conditions != std::vector<std::string>{"peer_unrecorded"})
            return false;
        const auto g = std::find_if(groups.begin(), groups.end(), [&](const CollectiveGroup& g) {
            return g.name == t.processGroup;
        });
        if (g == groups.end() || !std::all_of(f.ranks.begin(), f.ranks.end(), [&](int r) {
                return std::find(g->unrecorded.begin(), g->unrecorded.end(), r) !=
                       g->unrecorded.end();
            }))
            return false;
        const std::set<int> waiting = waitersOf(t);
        const auto row = std::find_if(g->collectives.begin(), g->collectives.end(),
                                      [&](const MatchedCollective& c) { return c.seq == t.seq; });
        f.summary +=
            "; the traces show " + formatRanks(std::vector<int>(waiting.begin(), waiting.end())) +
            " waiting" +
            (row == g->collectives.end() ? std::string()
                                         : " in " + std::string(store.strings.view(row->op)) +
                                               " #" + std::to_string(row->seq)) +
            " but cannot confirm it: " + t.detail;
        for (const Evidence& e : t.evidence)
            if (f.evidence.size() < kMaxFindingEvidence && e.line < 0) f.evidence.push_back(e);
        f.startNs = t.startNs;
        f.endNs = t.endNs;
        return true;
    });
}

} // namespace

AnalysisResult Analyzer::run(const EventStore& store, std::vector<std::string> sourcePaths,
                             std::vector<int> ranks, const std::vector<Evidence>& logs,
                             const std::vector<FlightRecorderDump>& dumps,
                             std::vector<Finding> config, const RankPresence* presence,
                             const std::vector<RankTimeBreakdown>* breakdown)
{
    AnalysisResult res;
    for (const Lane& lane : store.lanes)
        ranks.push_back(lane.rank);
    for (const Evidence& e : logs)
        ranks.push_back(e.rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    ranks.erase(std::remove_if(ranks.begin(), ranks.end(), [](int r) { return r < 0; }),
                ranks.end());

    // Without the facts: the ranks given and the store's, each with a file of unknown kind.
    RankFacts assumed;
    if (!presence) {
        assumed.ranks = ranks;
        for (int r : ranks)
            assumed.files[r] |= kOtherFile;
        assumed.addEvents(store);
        presence = &assumed.presence;
    }

    FlightRecorderChecks::Result fr = FlightRecorderChecks::check(dumps, sourcePaths);
    AnalysisContext ctx(store, std::move(sourcePaths));
    for (const auto& [rank, files] : presence->files)
        if (files & kCutTrace) ctx.cutTraces.insert(rank);
    // Collectives are compared on the ranks whose files record them: a rank that left only a
    // log is no member that "never issued" anything.
    res.groups = CollectiveMatcher::match(store, presence->with(kRecordsCollectives), &ctx.steps);
    markUnrecorded(res.groups, store, *presence);
    res.presence = *presence;
    ctx.clock = ClockAligner::align(res.groups, ranks);
    HangDetector::Result hang = HangDetector::detect(ctx, res.groups);
    StragglerDetector::Result straggler = StragglerDetector::detect(ctx, res.groups);
    res.breakdown = breakdown ? *breakdown : TimeBreakdown::compute(store);
    std::vector<Finding> idle = TimeBreakdown::idleFindings(res.breakdown);
    for (Finding& f : idle)
        if (f.ranks.size() == 1 && f.startNs >= 0) {
            f.startNs = ctx.clock.toReference(f.ranks.front(), f.startNs);
            f.endNs = ctx.clock.toReference(f.ranks.front(), f.endNs);
        }
    // Only a rank that left a log can be silent in the logs.
    LogTriage::Result log =
        LogTriage::triage(logs, presence->with(kLogFile | kErrorFile | kOtherFile));

    std::vector<Finding> trace = std::move(hang.findings);
    trace.insert(trace.end(), straggler.findings.begin(), straggler.findings.end());
    trace.insert(trace.end(), idle.begin(), idle.end());
    // pg_status tells the same story as the matched entries when they still hold the wavefront:
    // then it corroborates the trace's finding for that group instead of repeating it.
    for (Finding& f : fr.findings) {
        // Entries retired without completing timed out: the ranks that never issued that
        // collective left the others hanging in it, a hang rather than a short desync.
        // (A blamed rank that timed out in it too was in the collective: a desync after all.)
        const auto timedOut = [&f](int rank) {
            return std::any_of(f.evidence.begin(), f.evidence.end(),
                               [rank](const Evidence& e) { return e.rank == rank; });
        };
        if (f.kind == FindingKind::Hang && f.ranks.empty() && f.seq >= 0) {
            notComparable(f, res.groups, trace, fr.findings);
            for (Finding& t : trace)
                if (t.kind == FindingKind::Desync && t.severity == Severity::Error &&
                    !t.ranks.empty() && t.processGroup == f.processGroup && t.seq == f.seq &&
                    std::none_of(t.ranks.begin(), t.ranks.end(), timedOut)) {
                    t.kind = FindingKind::Hang;
                    t.confidence = std::min(1.0, t.confidence + 0.1);
                    t.summary += "; the Flight Recorder shows the others timed out in it";
                }
        }
        const auto same = std::find_if(trace.begin(), trace.end(), [&](const Finding& t) {
            return isTraceHang(t) && t.processGroup == f.processGroup && !f.processGroup.empty() &&
                   f.severity == Severity::Error && t.ranks == f.ranks;
        });
        if (same == trace.end()) {
            trace.push_back(std::move(f));
            continue;
        }
        same->summary += "; Flight Recorder pg_status agrees";
        same->confidence = std::min(1.0, same->confidence + 0.05);
    }
    // Point-to-point pairs are no collective the Flight Recorder's timeouts could make a hang.
    for (Finding& f : CollectiveMatcher::pointToPointFindings(
             ctx, CollectiveMatcher::pairPointToPoint(store, &ctx.steps)))
        trace.push_back(std::move(f));
    for (GroupProgress& p : fr.progress) {
        const auto it = std::find_if(hang.progress.begin(), hang.progress.end(),
                                     [&](const GroupProgress& h) { return h.group == p.group; });
        if (it != hang.progress.end())
            *it = std::move(p); // the watchdog's counters outlive the ring buffer's entries
        else
            hang.progress.push_back(std::move(p));
    }
    HangDetector::demoteWaitersElsewhere(res.groups, trace);
    std::vector<Finding> fromLogs = std::move(log.findings);
    if (std::optional<Finding> absent = absentRanks(*presence))
        fromLogs.push_back(std::move(*absent));

    // The logs' collective timeouts corroborate the trace's hang.
    bool traceHang = false; // a trace's hang that names a rank (one that cannot is no answer)
    for (Finding& f : trace) {
        if (!isTraceHang(f)) continue;
        traceHang = traceHang || !f.ranks.empty();
        if (log.waitingEvidence.empty()) continue;
        for (const Evidence& e : log.waitingEvidence)
            if (f.evidence.size() < kMaxFindingEvidence) f.evidence.push_back(e);
        f.confidence = std::min(1.0, f.confidence + 0.05);
    }
    std::set<int> rootRanks;
    for (const Finding& f : fromLogs)
        if (f.severity == Severity::Error) rootRanks.insert(f.ranks.begin(), f.ranks.end());
    const bool anyTraceHang = std::any_of(trace.begin(), trace.end(), isTraceHang);
    if (!traceHang && !log.waitingRanks.empty()) {
        // A silent rank the logs show failing (killed, crashed) is the one that never arrived;
        // the other silent ranks went down with it (a launcher tears down a failed rank's node).
        const bool explained = std::any_of(log.silentRanks.begin(), log.silentRanks.end(),
                                           [&](int r) { return rootRanks.count(r) != 0; });
        if (!explained) {
            Finding f;
            f.kind = FindingKind::Hang;
            f.symptom = log.waitStageHang.empty() ? symptoms::kHang : log.waitStageHang;
            f.severity = Severity::Error;
            f.ranks = log.silentRanks;
            f.confidence = log.silentRanks.empty() ? 0.5 : 0.75;
            f.summary = formatRanks(log.waitingRanks) + " timed out waiting in a collective";
            // Ranks of the job that left no readable file cannot be told apart from the one
            // that never arrived: "every rank did" would acquit them.
            const std::string unheard =
                presence->absent.empty() || presence->neverStarted
                    ? std::string()
                    : "; " + formatRankRanges(presence->absent) +
                          " left no readable log, so the logs cannot say whether " +
                          (rankCount(presence->absent) == 1 ? "it" : "one of them") +
                          " never arrived";
            f.summary +=
                log.silentRanks.empty()
                    ? (unheard.empty() ? "; every rank did, so the logs single out no rank "
                                         "(ranks may wait in different collectives)"
                                       : "; every rank that left a log did" + unheard)
                    : "; " + formatRanks(log.silentRanks) +
                          " reported no such timeout: the likely rank that never arrived" + unheard;
            f.evidence = log.waitingEvidence;
            std::vector<int> logged = log.waitingRanks;
            logged.insert(logged.end(), log.silentRanks.begin(), log.silentRanks.end());
            std::sort(logged.begin(), logged.end());
            if (!log.silentRanks.empty() && !anyTraceHang &&
                tracesShowAllCompleted(hang.progress, logged)) {
                f.severity = Severity::Warning;
                f.confidence = 0.3;
                f.summary += "; but the traces show " + formatRanks(logged) +
                             " completing every collective they record, so that wait is not in "
                             "them and they do not confirm it";
            } else if (!log.silentRanks.empty()) {
                f.conditions = {"silent_ranks"};
                // Their timeouts are what waiting for the silent ranks looks like, not a root.
                const std::set<int> waiting(log.waitingRanks.begin(), log.waitingRanks.end());
                for (Finding& l : fromLogs)
                    if (l.severity == Severity::Error && !l.ranks.empty() &&
                        isWaitLikeSymptom(l.symptom) &&
                        std::all_of(l.ranks.begin(), l.ranks.end(),
                                    [&](int r) { return waiting.count(r) != 0; })) {
                        l.severity = Severity::Warning;
                        l.confidence = 0.4;
                        l.summary +=
                            " (these ranks were waiting for " + formatRanks(log.silentRanks) + ")";
                    }
                mergeUncomparedWait(f, trace, res.groups, store);
            }
            fromLogs.push_back(std::move(f));
        }
    }

    // Every rank failing "the same way" with a timeout or a lost connection singles out no
    // rank: it is what ranks waiting in different collectives see, when the trace names the
    // ranks that stopped early.
    for (Finding& t : trace) {
        if (!isTraceHang(t) || t.ranks.empty() || t.ranks.size() >= ranks.size()) continue;
        for (Finding& l : fromLogs) {
            if (l.severity != Severity::Error || !isWaitLikeSymptom(l.symptom) || l.ranks != ranks)
                continue;
            l.severity = Severity::Warning;
            l.confidence = 0.4;
            l.summary += " (every rank failed waiting; the trace shows " + formatRanks(t.ranks) +
                         " stopping earlier than the others)";
        }
    }

    // The ranks a trace's hang blames failed waiting too (timed out, or lost their peer, in a
    // collective of their own, as a rank out of batches in its barrier does): they waited in
    // another collective than the others, a desync.
    std::set<int> failedWaiting(log.waitingRanks.begin(), log.waitingRanks.end());
    failedWaiting.insert(log.lostPeerRanks.begin(), log.lostPeerRanks.end());
    for (Finding& t : trace)
        if (isTraceHang(t) && t.kind == FindingKind::Hang && !t.ranks.empty() &&
            t.ranks.size() < ranks.size() &&
            std::all_of(t.ranks.begin(), t.ranks.end(),
                        [&](int r) { return failedWaiting.count(r) != 0; })) {
            t.kind = FindingKind::Desync;
            t.summary += "; " + formatRanks(t.ranks) +
                         " failed waiting as well, so it waited in another collective than the "
                         "others (desync)";
        }

    // A rank that only waited for the one that never arrived is not a root, whatever its log
    // says; a hang caused by a rank's crash is a consequence of the crash.
    // Likewise, timeouts on every rank of a desync are what the ranks' waiting in different
    // collectives looks like from inside; the trace names the rank that deviated.
    for (const Finding& t : trace) {
        if (!isTraceHang(t) || t.ranks.empty()) continue;
        std::set<int> involved = waitersOf(t);
        if (t.kind == FindingKind::Desync) involved.insert(t.ranks.begin(), t.ranks.end());
        for (Finding& l : fromLogs) {
            if (l.severity != Severity::Error || l.ranks.empty() || !isWaitLikeSymptom(l.symptom))
                continue;
            if (std::all_of(l.ranks.begin(), l.ranks.end(),
                            [&](int r) { return involved.count(r) != 0; })) {
                l.severity = Severity::Warning;
                l.confidence = 0.4;
                l.summary += " (these ranks were waiting for " + formatRanks(t.ranks) + ")";
            }
        }
    }
    for (Finding& t : trace) {
        if (!isTraceHang(t) || t.ranks.empty()) continue;
        const Finding* root = nullptr;
        for (const Finding& l : fromLogs)
            if (l.severity == Severity::Error && l.kind != FindingKind::Hang &&
                std::all_of(t.ranks.begin(), t.ranks.end(), [&](int r) {
                    return std::find(l.ranks.begin(), l.ranks.end(), r) != l.ranks.end();
                }))
                root = &l;
        if (!root) continue;
        t.severity = Severity::Warning;
        t.confidence = std::min(t.confidence, 0.5);
        t.summary += "; consistent with " + formatRanks(root->ranks) + " failing (" +
                     findingKindName(root->kind) + ")";
    }

    // A collective mismatch the logs witness (the DETAIL fingerprint check raises on every rank)
    // is why every rank's last collective never completed: the trace's stuck collective is its
    // evidence, not a hang of its own that would point at the network.
    const auto witnessed = std::find_if(fromLogs.begin(), fromLogs.end(), [](const Finding& l) {
        return l.severity == Severity::Error && l.kind == FindingKind::CollectiveMismatch;
    });
    if (witnessed != fromLogs.end())
        std::erase_if(trace, [&](const Finding& t) {
            if (t.kind != FindingKind::Hang || !t.ranks.empty() || !t.conditions.empty() ||
                t.seq < 0)
                return false;
            for (const Evidence& e : t.evidence)
                if (witnessed->evidence.size() < kMaxFindingEvidence)
                    witnessed->evidence.push_back(e);
            return true;
        });

    // A rendezvous setting some ranks got wrong is why the setup failed: the failure is theirs.
    for (Finding& c : config) {
        const auto setup = std::find_if(fromLogs.begin(), fromLogs.end(), [](const Finding& l) {
            return l.severity == Severity::Error && l.kind == FindingKind::SetupFailure;
        });
        if (setup == fromLogs.end() || c.severity != Severity::Error || c.confidence < 0.8) {
            fromLogs.push_back(std::move(c));
            continue;
        }
        setup->ranks = c.ranks;
        setup->summary = c.summary + "; " + setup->summary;
        setup->confidence = std::max(setup->confidence, c.confidence);
        setup->evidence.insert(setup->evidence.begin(), c.evidence.begin(), c.evidence.end());
        // The setting is the cause; what the ranks' logs show of it follows from it.
        setup->conditions.insert(setup->conditions.begin(), c.conditions.begin(),
                                 c.conditions.end());
        setup->detail = c.detail;
    }

    // A rank's trace is exported when it dies, so the last profiler step of the blamed ranks is
    // the one the failure happened in (steps counted in time order, as CollectiveRecord::step).
    for (Finding& l : fromLogs) {
        if (l.severity != Severity::Error || l.ranks.empty() || l.step >= 0) continue;
        for (int r : l.ranks) {
            // A member a witnessed mismatch names but cites only as failing after it went on.
            const bool onlyAfter =
                std::any_of(l.evidence.begin(), l.evidence.end(),
                            [r](const Evidence& e) { return e.rank == r; }) &&
                std::all_of(l.evidence.begin(), l.evidence.end(), [r](const Evidence& e) {
                    return e.rank != r || e.text.ends_with(LogTriage::kConsequenceMark);
                });
            const std::size_t n = ctx.steps.stepsOf(r).size();
            if (!onlyAfter && n > 0 && (l.step < 0 || int(n) - 1 < l.step)) l.step = int(n) - 1;
        }
        // A rank that left no trace (killed before it could export one): its peers' traces end
        // in the step they lost it in, the ranks its evidence cites as failing after it.
        if (l.step < 0)
            for (const Evidence& e : l.evidence) {
                if (e.rank < 0 ||
                    std::find(l.ranks.begin(), l.ranks.end(), e.rank) != l.ranks.end())
                    continue;
                const std::size_t n = ctx.steps.stepsOf(e.rank).size();
                if (n > 0 && (l.step < 0 || int(n) - 1 < l.step)) l.step = int(n) - 1;
            }
        // DDP raises its reducer error at the start of the step after the one whose reduction
        // did not finish ("... in the prior iteration ..."): that earlier step is the fault's.
        const bool prior = std::any_of(l.evidence.begin(), l.evidence.end(), [](const Evidence& e) {
            return e.text.find(kPriorIterationPhrase) != std::string::npos;
        });
        if (prior && l.step > 0) --l.step;
    }

    res.findings = std::move(fromLogs);
    res.findings.insert(res.findings.end(), trace.begin(), trace.end());
    ctx.placeOnTraces(res.findings);
    chooseFixes(res.findings, ctx, res.groups, ranks);
    std::stable_sort(res.findings.begin(), res.findings.end(),
                     [](const Finding& a, const Finding& b) {
                         if (a.severity != b.severity) return a.severity < b.severity;
                         return a.confidence > b.confidence;
                     });
    for (std::size_t i = 0; i < res.findings.size(); ++i)
        res.findings[i].id = "F" + std::to_string(i + 1);

    std::map<std::string, SymptomScore> bySymptom;
    std::map<std::string, double> miss;
    for (const Finding& f : res.findings) {
        if (f.symptom.empty()) continue;
        SymptomScore& s = bySymptom[f.symptom];
        s.symptom = f.symptom;
        s.findings.push_back(f.id);
        auto [it, fresh] = miss.emplace(f.symptom, 1.0);
        it->second *= 1.0 - severityWeight(f.severity) * f.confidence;
        (void)fresh;
    }
    for (auto& [id, s] : bySymptom) {
        s.score = 1.0 - miss[id];
        res.symptoms.push_back(std::move(s));
    }
    std::stable_sort(
        res.symptoms.begin(), res.symptoms.end(),
        [](const SymptomScore& a, const SymptomScore& b) { return a.score > b.score; });

    res.clock = std::move(ctx.clock);
    res.progress = std::move(hang.progress);
    res.arrivals = std::move(straggler.arrivals);
    res.steps = std::move(ctx.steps);
    res.collectiveCount = store.collectives.size();
    return res;
}

} // namespace rankscope
