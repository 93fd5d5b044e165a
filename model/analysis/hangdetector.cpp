#include "model/analysis/hangdetector.h"

#include "model/analysis/symptomids.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace rankscope {

std::int64_t hangLengthNs(std::int64_t typicalNs)
{
    constexpr std::int64_t kMinHangNs = 1'000'000'000;
    constexpr std::int64_t kHangFactor = 20;
    return std::max(kMinHangNs, kHangFactor * typicalNs);
}

namespace {

using State = CollectiveRecord::State;

// The typical execution time of the group's collectives other than row `except`, the one being
// judged: a hang in the first collective must not be its own yardstick.
std::int64_t medianExecNs(const AnalysisContext& ctx, const CollectiveGroup& g, std::size_t except)
{
    // A sample of rows is enough for a typical duration on large jobs.
    constexpr std::size_t kRows = 256;
    const std::size_t stride = std::max<std::size_t>(1, g.collectives.size() / kRows);
    std::vector<std::int64_t> d;
    for (std::size_t k = 0; k < g.collectives.size(); k += stride) {
        if (k == except) continue;
        for (std::int32_t i : g.collectives[k].records) {
            if (i < 0) continue;
            const CollectiveRecord& c = ctx.store.collectives[std::size_t(i)];
            if (c.state == State::Completed && c.execEndNs > c.execStartNs && c.execStartNs >= 0)
                d.push_back(c.execEndNs - c.execStartNs);
        }
    }
    if (d.empty()) return 0;
    std::nth_element(d.begin(), d.begin() + std::ptrdiff_t(d.size() / 2), d.end());
    return d[d.size() / 2];
}

std::string opName(const AnalysisContext& ctx, StringId op)
{
    const std::string_view v = ctx.store.strings.view(op);
    return v.empty() ? std::string("collective") : std::string(v);
}

struct RowFacts {
    std::vector<int> present;
    std::int64_t maxHeldNs = 0;
    bool anyOpen = false; // a present record never completed
    int step = -1;
    std::int64_t beginNs = -1, endNs = -1; // aligned
};

RowFacts factsOf(const AnalysisContext& ctx, const CollectiveGroup& g, const MatchedCollective& row)
{
    RowFacts f;
    for (std::size_t m = 0; m < g.members.size(); ++m) {
        const std::int32_t i = row.records[m];
        if (i < 0) continue;
        const CollectiveRecord& c = ctx.store.collectives[std::size_t(i)];
        f.present.push_back(g.members[m]);
        f.maxHeldNs = std::max(f.maxHeldNs, ctx.heldNs(c));
        f.anyOpen = f.anyOpen || (!c.stateUnknown && c.state != State::Completed);
        if (c.step >= 0) f.step = std::max(f.step, c.step);
        const std::int64_t b = ctx.clock.toReference(c.rank, ctx.beginNs(c));
        const std::int64_t e = ctx.clock.toReference(c.rank, ctx.finishNs(c));
        f.beginNs = f.beginNs < 0 ? b : std::min(f.beginNs, b);
        f.endNs = std::max(f.endNs, e);
    }
    return f;
}

void addRowEvidence(const AnalysisContext& ctx, const CollectiveGroup& g,
                    const MatchedCollective& row, Finding& f, const std::string& what)
{
    std::size_t added = 0;
    for (std::size_t m = 0; m < g.members.size() && added < 16; ++m) {
        if (row.records[m] < 0) continue;
        f.evidence.push_back(ctx.evidenceOf(row.records[m], what));
        ++added;
    }
}

// Last collective of the rank in this group, as evidence of where it stopped.
void addLastOf(const AnalysisContext& ctx, const CollectiveGroup& g, int rank, Finding& f)
{
    const int slot = g.slotOf(rank);
    for (auto it = g.collectives.rbegin(); it != g.collectives.rend(); ++it) {
        const std::int32_t i = it->records[std::size_t(slot)];
        if (i < 0) continue;
        f.evidence.push_back(ctx.evidenceOf(i, "its last collective in this group"));
        return;
    }
    const auto& steps = ctx.steps.stepsOf(rank);
    if (!steps.empty()) {
        Evidence e;
        e.rank = rank;
        e.timeNs = steps.back().startNs;
        e.text = "rank " + std::to_string(rank) + ": last step " +
                 ctx.steps.label(rank, int(steps.size()) - 1) + " lasts " +
                 formatDurationNs(steps.back().durationNs()) + " with no collective";
        for (std::size_t l = 0; l < ctx.store.lanes.size(); ++l)
            if (ctx.store.lanes[l].rank == rank) {
                e.path = ctx.pathOfLane(int(l));
                break;
            }
        f.evidence.push_back(e);
    }
}

// How often `op` appeared before row `k` on `slot`: an op a rank never issued before at this
// point of its loop is the likelier deviation.
int priorUses(const AnalysisContext& ctx, const CollectiveGroup& g, std::size_t k, int slot,
              StringId op)
{
    int n = 0;
    for (std::size_t r = 0; r < k; ++r) {
        const std::int32_t i = g.collectives[r].records[std::size_t(slot)];
        if (i >= 0 && ctx.store.collectives[std::size_t(i)].op == op) ++n;
    }
    return n;
}

Finding base(const CollectiveGroup& g, const MatchedCollective& row, const RowFacts& facts)
{
    Finding f;
    f.processGroup = g.name;
    f.seq = row.seq;
    f.step = facts.step;
    f.startNs = facts.beginNs;
    f.endNs = facts.endNs;
    return f;
}

// The row of the blamed ranks' last collective of the group when they were held in it for a
// hang's length while every other member got through it quickly: they did not stop before the
// collective the others wait in, they were stuck in the one before it, paired differently from
// the others in it (another root or peer on one rank). SIZE_MAX when not.
std::size_t stuckWhereOthersPassed(const AnalysisContext& ctx, const CollectiveGroup& g,
                                   const std::vector<int>& blamed)
{
    if (blamed.empty() || blamed.size() >= g.members.size()) return SIZE_MAX;
    std::size_t last = SIZE_MAX;
    for (int r : blamed) {
        const int slot = g.slotOf(r);
        std::size_t k = g.collectives.size();
        while (k > 0 && g.collectives[k - 1].records[std::size_t(slot)] < 0)
            --k;
        if (k == 0 || (last != SIZE_MAX && last != k - 1)) return SIZE_MAX;
        last = k - 1;
    }
    const MatchedCollective& row = g.collectives[last];
    std::int64_t shortestHeld = INT64_MAX, longestPassed = 0;
    for (std::size_t m = 0; m < g.members.size(); ++m) {
        const std::int32_t i = row.records[m];
        if (i < 0) return SIZE_MAX;
        const CollectiveRecord& c = ctx.store.collectives[std::size_t(i)];
        if (c.stateUnknown) return SIZE_MAX;
        const bool isBlamed = std::find(blamed.begin(), blamed.end(), g.members[m]) != blamed.end();
        if (isBlamed)
            shortestHeld = std::min(shortestHeld, ctx.heldNs(c));
        else if (c.state != State::Completed)
            return SIZE_MAX;
        else
            longestPassed = std::max(longestPassed, ctx.heldNs(c));
    }
    return shortestHeld >= hangLengthNs(longestPassed) ? last : SIZE_MAX;
}

// `culprits`: the ranks of row `k` that did not issue it, less those whose trace was cut before it.
void participation(const AnalysisContext& ctx, const CollectiveGroup& g, std::size_t k,
                   const std::vector<int>& culprits, std::vector<Finding>& out)
{
    const MatchedCollective& row = g.collectives[k];
    const RowFacts facts = factsOf(ctx, g, row);
    // Blame the ranks with the least progress; others missing here got further elsewhere.
    std::map<int, std::size_t> lastPresent;
    for (int r : culprits) {
        const int slot = g.slotOf(r);
        std::size_t p = g.collectives.size();
        while (p > 0 && g.collectives[p - 1].records[std::size_t(slot)] < 0)
            --p;
        lastPresent[r] = p;
    }
    std::size_t lowest = SIZE_MAX;
    for (const auto& [r, p] : lastPresent)
        lowest = std::min(lowest, p);
    std::vector<int> blamed;
    for (const auto& [r, p] : lastPresent)
        if (p == lowest) blamed.push_back(r);

    if (const std::size_t j = stuckWhereOthersPassed(ctx, g, blamed); j != SIZE_MAX) {
        const MatchedCollective& held = g.collectives[j];
        const RowFacts heldFacts = factsOf(ctx, g, held);
        std::vector<int> passed;
        std::int64_t passedNs = 0;
        for (std::size_t m = 0; m < g.members.size(); ++m)
            if (std::find(blamed.begin(), blamed.end(), g.members[m]) == blamed.end()) {
                passed.push_back(g.members[m]);
                passedNs = std::max(
                    passedNs, ctx.heldNs(ctx.store.collectives[std::size_t(held.records[m])]));
            }
        const std::string what = (g.byOrdinal ? " collective " : " collective #") +
                                 std::to_string(held.seq) +
                                 (g.byOrdinal ? " (in issue order)" : "");
        Finding f = base(g, held, heldFacts);
        f.kind = FindingKind::Desync;
        f.symptom = symptoms::kHang;
        f.severity = Severity::Error;
        f.confidence = 0.8;
        f.ranks = blamed;
        f.conditions = {"stuck_where_others_passed"};
        f.summary = formatRanks(blamed) + " were held " + formatDurationNs(heldFacts.maxHeldNs) +
                    " in " + opName(ctx, held.op) + what + ", which " + formatRanks(passed) +
                    " got through in " + formatDurationNs(passedNs) + "; they never issued " +
                    opName(ctx, row.op) + (g.byOrdinal ? " collective " : " collective #") +
                    std::to_string(row.seq) + ", which the others entered";
        addRowEvidence(ctx, g, held, f, "");
        addRowEvidence(ctx, g, row, f, "waiting for " + formatRanks(blamed));
        out.push_back(std::move(f));
        return;
    }
    const bool atFrontier = k + 1 == g.collectives.size();
    // The blamed ranks issued nothing of this group from here on while the others went on:
    // collectives are enqueued asynchronously, so peers run ahead of a rank that stopped (the
    // wavefront of Flight Recorder's analyzer). Only a gap followed by later records is a
    // record the source lost.
    const bool stopped = lowest == k;
    const std::int64_t typical = medianExecNs(ctx, g, k);
    const bool longWait = facts.maxHeldNs >= hangLengthNs(typical);
    Finding f = base(g, row, facts);
    f.ranks = blamed;
    f.symptom = symptoms::kHang;
    const std::string op = opName(ctx, row.op);
    const std::string seq = (g.byOrdinal ? "collective " : "collective #") +
                            std::to_string(row.seq) + (g.byOrdinal ? " (in issue order)" : "");
    if (!atFrontier && stopped) {
        const std::size_t ahead = g.collectives.size() - k;
        f.kind = longWait ? FindingKind::Hang : FindingKind::Desync;
        f.severity = Severity::Error;
        f.confidence = longWait ? 0.85 : 0.6;
        f.summary = formatRanks(blamed) + " stopped before " + op + " " + seq + ", while " +
                    formatRanks(facts.present) + " went on to issue " + std::to_string(ahead) +
                    " collective" + (ahead > 1 ? "s" : "") + " of this group";
        if (longWait)
            f.summary += "; they waited " + formatDurationNs(facts.maxHeldNs) + " in " + seq;
    } else if (atFrontier) {
        f.kind = longWait ? FindingKind::Hang : FindingKind::Desync;
        f.severity = Severity::Error;
        f.confidence = longWait ? 0.9 : 0.7;
        f.summary = formatRanks(blamed) + " never issued " + op + " " + seq + "; " +
                    formatRanks(facts.present);
        if (facts.maxHeldNs > 0) {
            f.summary += (longWait ? " waited " : " sat in it for ") +
                         formatDurationNs(facts.maxHeldNs) +
                         (facts.anyOpen ? " without completing" : " before failing");
            if (!longWait) f.summary += " (a short wait: the missing rank probably failed first)";
        } else {
            // A dump's entries carry no end for an op that never finished.
            f.summary += facts.anyOpen ? " issued it and never completed it (how long they waited "
                                         "is not in the sources)"
                                       : " issued it";
        }
    } else {
        f.kind = FindingKind::Desync;
        f.severity = Severity::Warning;
        f.confidence = 0.4;
        f.summary = formatRanks(blamed) + " has no record of " + op + " " + seq +
                    " although other ranks went on to later collectives; its trace may stop early";
    }
    addRowEvidence(ctx, g, row, f, "waiting for " + formatRanks(blamed));
    for (int r : blamed)
        addLastOf(ctx, g, r, f);
    out.push_back(std::move(f));
}

void opMismatch(const AnalysisContext& ctx, const CollectiveGroup& g, std::size_t k,
                std::vector<Finding>& out)
{
    const MatchedCollective& row = g.collectives[k];
    const RowFacts facts = factsOf(ctx, g, row);
    std::vector<int> blamed = row.culprits;
    std::string why;
    if (blamed.size() == facts.present.size() && blamed.size() > 1) {
        // No majority: the rank whose op is new to its own sequence deviates; then the rank
        // that ran fewer steps (it left the loop early).
        std::map<int, int> uses;
        int fewest = INT32_MAX;
        for (int r : blamed) {
            const int slot = g.slotOf(r);
            uses[r] =
                priorUses(ctx, g, k, slot,
                          ctx.store.collectives[std::size_t(row.records[std::size_t(slot)])].op);
            fewest = std::min(fewest, uses[r]);
        }
        std::vector<int> novel;
        for (int r : blamed)
            if (uses[r] == fewest) novel.push_back(r);
        if (novel.size() < blamed.size()) {
            blamed = novel;
            why = "; its op breaks the pattern it repeated before";
        }
        std::map<int, std::size_t> steps;
        std::size_t minSteps = SIZE_MAX, maxSteps = 0;
        for (int r : blamed) {
            steps[r] = ctx.steps.stepsOf(r).size();
            minSteps = std::min(minSteps, steps[r]);
            maxSteps = std::max(maxSteps, steps[r]);
        }
        if (blamed.size() > 1 && minSteps < maxSteps) {
            std::vector<int> fewer;
            for (int r : blamed)
                if (steps[r] == minSteps) fewer.push_back(r);
            blamed = fewer;
            why = "; it ran fewer steps";
        }
    }
    std::vector<int> others;
    for (int r : facts.present)
        if (std::find(blamed.begin(), blamed.end(), r) == blamed.end()) others.push_back(r);
    std::size_t blamedSteps = 0, otherSteps = 0;
    for (int r : blamed)
        blamedSteps = std::max(blamedSteps, ctx.steps.stepsOf(r).size());
    for (int r : others)
        otherSteps = std::max(otherSteps, ctx.steps.stepsOf(r).size());
    if (blamedSteps < otherSteps)
        why += " (" + std::to_string(blamedSteps) + " step spans vs " + std::to_string(otherSteps) +
               ")";

    // Ranks wait in different collectives only where one did not complete it (or its source
    // cannot tell, as an NCCL log line cannot) and nothing came after it. Collectives of
    // different kinds that completed exchanged mismatched data instead: PyTorch's Flight
    // Recorder analyzer calls it a collective type mismatch.
    const bool atFrontier = k + 1 == g.collectives.size();
    // A trace exported as its rank died closes the span of the call it failed in: held for a
    // hang's length in the group's last collective, it was a wait that ended in the failure.
    const std::int64_t typical = medianExecNs(ctx, g, k);
    const bool failedWaiting = atFrontier && facts.maxHeldNs >= hangLengthNs(typical);
    const bool leftWaiting =
        facts.anyOpen || failedWaiting ||
        std::any_of(row.records.begin(), row.records.end(), [&](std::int32_t i) {
            return i >= 0 && ctx.store.collectives[std::size_t(i)].stateUnknown;
        });
    const bool desync = atFrontier && leftWaiting;
    Finding f = base(g, row, facts);
    f.ranks = blamed;
    f.symptom = desync ? symptoms::kHang : symptoms::kTensorMismatch;
    f.kind = desync ? FindingKind::Desync : FindingKind::CollectiveMismatch;
    f.severity = Severity::Error;
    f.confidence = blamed.size() < facts.present.size() ? 0.85 : 0.6;
    const std::string where =
        (g.byOrdinal ? "collective " : "collective #") + std::to_string(row.seq);
    f.summary = (desync ? "ranks wait in different collectives at " + where
                        : "op type mismatch in " + where) +
                ": " + row.detail + "; " + formatRanks(blamed) + " deviates" + why;
    if (!leftWaiting) f.summary += "; every rank completed it";
    if (!atFrontier && g.mismatchCount > 1)
        f.summary +=
            "; " + std::to_string(g.mismatchCount - 1) + " later mismatches follow from it";
    addRowEvidence(ctx, g, row, f, "");
    out.push_back(std::move(f));
}

// `culprits`: the row's, less the ranks whose cut trace cannot show what it blames them for
// (Cut); `cutWhy` names those cuts.
void contentMismatch(const AnalysisContext& ctx, const CollectiveGroup& g, std::size_t k,
                     const std::vector<int>& culprits, const std::string& cutWhy,
                     std::vector<Finding>& out)
{
    const MatchedCollective& row = g.collectives[k];
    const RowFacts facts = factsOf(ctx, g, row);
    Finding f = base(g, row, facts);
    f.ranks = culprits.size() < facts.present.size() ? culprits : std::vector<int>{};
    if (f.ranks.empty()) f.ranks = culprits;
    // A coalescing block is compared by its totals: say so, or "size" reads as one tensor's.
    const bool block = std::any_of(row.records.begin(), row.records.end(), [&](std::int32_t i) {
        return i >= 0 && ctx.store.collectives[std::size_t(i)].coalesced;
    });
    const std::string where = (block ? "coalesced " : "") + opName(ctx, row.op) + " #" +
                              std::to_string(row.seq) + (block ? " (block totals)" : "");
    if (row.mismatch == MismatchKind::State) {
        f.kind = FindingKind::Hang;
        f.symptom = symptoms::kHang;
        f.severity = k + 1 == g.collectives.size() ? Severity::Error : Severity::Warning;
        f.confidence = 0.5;
        f.summary = where + " " + row.detail;
        if (culprits != row.culprits)
            f.summary += "; " + cutWhy + ", so whether its calls completed is unknown";
    } else {
        f.kind = FindingKind::CollectiveMismatch;
        f.symptom = symptoms::kTensorMismatch;
        f.severity = Severity::Error;
        f.confidence = 0.9;
        f.summary = std::string(row.mismatch == MismatchKind::Size        ? "size"
                                : row.mismatch == MismatchKind::GroupSize ? "group size"
                                : row.mismatch == MismatchKind::ReduceOp  ? "reduce op"
                                : row.mismatch == MismatchKind::Root      ? "root"
                                                                          : "dtype") +
                    " mismatch in " + where + ": " + row.detail + "; " + formatRanks(f.ranks) +
                    " deviates";
    }
    if (g.mismatchCount > 1)
        f.summary +=
            "; " + std::to_string(g.mismatchCount - 1) + " later mismatches follow from it";
    addRowEvidence(ctx, g, row, f, "");
    out.push_back(std::move(f));
}

// Every member issued the last collective and none finished it, after earlier ones finished:
// the peers or the network, or a mismatch the trace cannot show (no sizes). `uncomparedWhy`
// says which ranks' records cannot be compared with the others' and why (none when empty).
void stuckEverywhere(const AnalysisContext& ctx, const CollectiveGroup& g,
                     const std::string& uncomparedWhy, std::vector<Finding>& out)
{
    if (g.collectives.size() < 2) return;
    const MatchedCollective& row = g.collectives.back();
    const RowFacts facts = factsOf(ctx, g, row);
    // Only sources that see execution can say nobody completed it (an NCCL log line cannot).
    bool anyKnown = false, noneCompleted = true;
    for (std::int32_t i : row.records) {
        if (i < 0 || ctx.store.collectives[std::size_t(i)].stateUnknown) continue;
        anyKnown = true;
        if (ctx.store.collectives[std::size_t(i)].state == State::Completed) noneCompleted = false;
    }
    if (!anyKnown) return;
    bool earlierCompleted = false;
    for (std::int32_t i : g.collectives[g.collectives.size() - 2].records)
        if (i >= 0 && ctx.store.collectives[std::size_t(i)].state == State::Completed)
            earlierCompleted = true;
    const std::int64_t typical = medianExecNs(ctx, g, g.collectives.size() - 1);
    const bool longWait = facts.maxHeldNs >= hangLengthNs(typical);
    if (!(noneCompleted && earlierCompleted) && !longWait) return;
    Finding f = base(g, row, facts);
    f.kind = FindingKind::Hang;
    f.symptom = symptoms::kHang;
    f.severity = longWait ? Severity::Error : Severity::Warning;
    f.confidence = 0.4;
    const std::string what = opName(ctx, row.op) + " #" + std::to_string(row.seq) + " and " +
                             (longWait ? "waited " + formatDurationNs(facts.maxHeldNs) + " in it"
                                       : std::string("none completed it"));
    if (!uncomparedWhy.empty()) {
        // The ranks that recorded nothing of the group (or nothing after a cut) may be the ones
        // that never issued it: nothing can say, so this blames nobody and says what is missing.
        f.summary = formatRanks(facts.present) + " issued " + what + "; " + uncomparedWhy +
                    ": cannot compare, so which rank kept them waiting is unknown";
        f.conditions = {"peer_unrecorded"};
        f.detail = uncomparedWhy;
    } else {
        f.summary = "every rank issued " + what +
                    ": no rank is missing, so suspect a mismatch the trace cannot show, a dead "
                    "peer or the network; see the logs";
    }
    addRowEvidence(ctx, g, row, f, "");
    out.push_back(std::move(f));
}

// A rank whose trace was cut short records nothing after the cut, whether it went on or not:
// the rows after its last record are compared on the other ranks only. Nor does it show whether
// the calls it did record completed: a Kineto file lists the GPU kernels that end them after
// the CPU ops that issue them, so a cut loses completions first, and "completed on the others
// but not on this rank" would blame the cut, not the rank.
struct Cut {
    std::size_t firstMismatch = SIZE_MAX; // the first row that still mismatches, SIZE_MAX if none
    std::vector<int> culprits;            // its culprits, less the ranks cut before it
    std::string why;                      // the cut ranks, for people (empty: none cut)
};

Cut cutOf(const AnalysisContext& ctx, const CollectiveGroup& g)
{
    Cut cut;
    std::map<int, std::size_t> endOf; // cut member -> the row after its last record
    for (std::size_t m = 0; m < g.members.size(); ++m) {
        if (!ctx.cutTraces.count(g.members[m])) continue;
        std::size_t end = g.collectives.size();
        while (end > 0 && g.collectives[end - 1].records[m] < 0)
            --end;
        if (end == g.collectives.size()) continue;
        endOf[g.members[m]] = end;
        if (!cut.why.empty()) cut.why += "; ";
        cut.why +=
            "the trace of rank " + std::to_string(g.members[m]) + " is cut short " +
            (end == 0 ? std::string("before its first collective")
                      : "after its collective #" + std::to_string(g.collectives[end - 1].seq));
    }
    for (std::size_t k = std::size_t(g.firstMismatch); k < g.collectives.size(); ++k) {
        const MatchedCollective& row = g.collectives[k];
        if (row.mismatch == MismatchKind::None) continue;
        std::vector<int> culprits;
        for (int r : row.culprits) {
            const auto it = endOf.find(r);
            const bool afterCut =
                row.mismatch == MismatchKind::Participation && it != endOf.end() && k >= it->second;
            const bool completionLost =
                row.mismatch == MismatchKind::State && ctx.cutTraces.count(r) != 0;
            if (!afterCut && !completionLost) culprits.push_back(r);
        }
        if (culprits.empty()) continue;
        cut.firstMismatch = k;
        cut.culprits = std::move(culprits);
        break;
    }
    if (!g.unrecordedWhy.empty())
        cut.why = g.unrecordedWhy + (cut.why.empty() ? "" : "; " + cut.why);
    return cut;
}

// A group whose collectives could not be paired across ranks: say so, so that finding nothing
// is not read as a clean bill of health.
void unpaired(const CollectiveGroup& g, std::vector<Finding>& out)
{
    Finding f;
    f.kind = FindingKind::UnpairedCollectives;
    f.severity = Severity::Info;
    f.confidence = 1.0;
    f.processGroup = g.name;
    f.summary = "the collectives of " + formatRanks(g.members) +
                (g.name.empty() ? std::string() : " in group " + g.name) +
                " could not be paired: the traces carry no sequence numbers and " +
                g.unpairedReason + "; no mismatch, hang or clock offset is derived from them";
    out.push_back(std::move(f));
}

// A rank blamed for never reaching a group's collective may itself sit in another group's
// collective, waiting for a rank blamed there (tensor- and data-parallel groups: rank 3 stalls
// in its own code, rank 1 waits for it in their data-parallel all_reduce and so never issues its
// next tensor-parallel one). That is a consequence: the finding that blames only such ranks
// says where they waited and for whom, and no longer counts as an error; the chain ends at the
// rank that waits nowhere.
} // namespace

void HangDetector::demoteWaitersElsewhere(const std::vector<CollectiveGroup>& groups,
                                          std::vector<Finding>& findings)
{
    const auto isBlame = [](const Finding& f) {
        return (f.kind == FindingKind::Hang || f.kind == FindingKind::Desync) &&
               f.severity == Severity::Error && !f.ranks.empty() && !f.processGroup.empty();
    };
    const auto has = [](const Finding& f, const char* condition) {
        return std::find(f.conditions.begin(), f.conditions.end(), condition) != f.conditions.end();
    };
    // rank -> (group, where it waits, the ranks it waits for): the members that issued a
    // collective an error finding says its blamed ranks never issued wait in it for them; where
    // it blames nobody (the rank that kept them waiting left no record: "cannot compare"), for a
    // rank that left no record. A send or recv with no partner keeps the rank that posted it.
    struct Wait {
        std::string group;
        bool pointToPoint = false; // a send or recv, not one of the group's collectives
        std::string where;
        std::vector<int> forRanks;
    };
    std::map<int, std::vector<Wait>> waits;
    for (const Finding& f : findings) {
        const bool blamesNobody = f.ranks.empty() && has(f, "peer_unrecorded");
        if (!(isBlame(f) || blamesNobody) || f.seq < 0 || f.processGroup.empty()) continue;
        if (has(f, "point_to_point")) {
            // The unpaired op is the finding's first evidence, on the rank that posted it.
            if (!f.evidence.empty() && f.evidence.front().rank >= 0 &&
                std::find(f.ranks.begin(), f.ranks.end(), f.evidence.front().rank) == f.ranks.end())
                waits[f.evidence.front().rank].push_back({f.processGroup, true, f.detail, f.ranks});
            continue;
        }
        const auto g = std::find_if(groups.begin(), groups.end(), [&](const CollectiveGroup& x) {
            return x.name == f.processGroup;
        });
        if (g == groups.end()) continue;
        const auto row = std::find_if(g->collectives.begin(), g->collectives.end(),
                                      [&](const MatchedCollective& c) { return c.seq == f.seq; });
        if (row == g->collectives.end()) continue;
        for (std::size_t m = 0; m < g->members.size(); ++m)
            if (row->records[m] >= 0 &&
                std::find(f.ranks.begin(), f.ranks.end(), g->members[m]) == f.ranks.end())
                waits[g->members[m]].push_back(
                    {g->name, false,
                     "collective #" + std::to_string(f.seq) + " of group " + g->name, f.ranks});
    }
    // Whether a rank's wait leads, through the ranks it waits for, to one that waits nowhere
    // (the one to look at). Ranks that wait for each other (a deadlock across groups) lead to
    // none, and their findings stay.
    std::set<int> visiting;
    std::map<int, bool> decided; // a rank's answer once known: jobs of many ranks share chains
    std::function<bool(int)> leadsToCause;
    const auto anyLeadsToCause = [&](const std::vector<int>& ranks) {
        return ranks.empty() || std::any_of(ranks.begin(), ranks.end(), leadsToCause);
    };
    leadsToCause = [&](int rank) {
        const auto it = waits.find(rank);
        if (it == waits.end()) return true;
        if (const auto known = decided.find(rank); known != decided.end()) return known->second;
        if (!visiting.insert(rank).second) return false;
        bool found = false;
        for (const Wait& w : it->second)
            found = found || anyLeadsToCause(w.forRanks);
        visiting.erase(rank);
        decided[rank] = found;
        return found;
    };
    for (Finding& f : findings) {
        if (!isBlame(f)) continue;
        std::string where;
        std::vector<int> waited, stayed;
        for (int r : f.ranks) {
            const Wait* elsewhere = nullptr;
            if (const auto it = waits.find(r); it != waits.end())
                for (const Wait& w : it->second)
                    if ((w.pointToPoint || w.group != f.processGroup) &&
                        anyLeadsToCause(w.forRanks)) {
                        elsewhere = &w;
                        break;
                    }
            if (!elsewhere) {
                stayed.push_back(r);
                continue;
            }
            waited.push_back(r);
            where += (where.empty() ? "" : "; ") + formatRanks({r}) + " sat in " +
                     elsewhere->where + ", waiting for " +
                     (elsewhere->forRanks.empty() ? std::string("a rank that left no record of it")
                                                  : formatRanks(elsewhere->forRanks));
        }
        if (waited.empty()) continue;
        if (!stayed.empty()) {
            // Of the ranks it blames, those that waited elsewhere only followed the others.
            f.ranks = stayed;
            f.summary += "; " + where + ": " + (waited.size() == 1 ? "it" : "they") +
                         " only waited, which leaves " + formatRanks(stayed);
            continue;
        }
        f.severity = Severity::Warning;
        f.confidence = std::min(f.confidence, 0.3);
        f.conditions = {"waiting_elsewhere"};
        f.detail = where;
        f.summary += "; but " + where + ": a consequence of that wait, not a cause";
    }
}

HangDetector::Result HangDetector::detect(const AnalysisContext& ctx,
                                          const std::vector<CollectiveGroup>& groups)
{
    Result res;
    for (const CollectiveGroup& g : groups) {
        GroupProgress p;
        p.group = g.name;
        for (std::size_t m = 0; m < g.members.size(); ++m) {
            RankProgress rp;
            rp.rank = g.members[m];
            // From the end: a member's last rows are all that decide, and large jobs have
            // millions of cells.
            for (auto row = g.collectives.rbegin();
                 row != g.collectives.rend() && rp.lastCompleted < 0; ++row) {
                const std::int32_t i = row->records[m];
                if (i < 0) continue;
                const CollectiveRecord& c = ctx.store.collectives[std::size_t(i)];
                if (rp.lastIssued < 0) rp.lastIssued = row->seq;
                if (c.state >= State::Started && rp.lastStarted < 0) rp.lastStarted = row->seq;
                if (c.state == State::Completed) rp.lastCompleted = row->seq;
            }
            p.wavefront = std::max(p.wavefront, rp.lastIssued);
            p.ranks.push_back(rp);
        }
        res.progress.push_back(std::move(p));
        if (!g.unpairedReason.empty()) {
            unpaired(g, res.findings);
            continue;
        }
        if (g.members.size() < 2 || g.collectives.empty()) continue;

        const std::size_t before = res.findings.size();
        const auto noteWindow = [&] {
            if (g.comparedFromSeq < 0) return;
            for (std::size_t i = before; i < res.findings.size(); ++i)
                res.findings[i].summary +=
                    " (compared from #" + std::to_string(g.comparedFromSeq) +
                    " on, the window every rank's records still hold; older collectives are "
                    "not checked)";
        };
        if (g.firstMismatch < 0) {
            stuckEverywhere(ctx, g, g.unrecordedWhy, res.findings);
            noteWindow();
            continue;
        }
        const Cut cut = cutOf(ctx, g);
        const std::size_t k = cut.firstMismatch;
        if (k == SIZE_MAX) {
            stuckEverywhere(ctx, g, cut.why, res.findings);
            noteWindow();
            continue;
        }
        switch (g.collectives[k].mismatch) {
        case MismatchKind::Participation:
            participation(ctx, g, k, cut.culprits, res.findings);
            break;
        case MismatchKind::OpType:
            opMismatch(ctx, g, k, res.findings);
            break;
        case MismatchKind::Size:
        case MismatchKind::Dtype:
        case MismatchKind::State:
        case MismatchKind::GroupSize:
        case MismatchKind::ReduceOp:
        case MismatchKind::Root:
            contentMismatch(ctx, g, k, cut.culprits, cut.why, res.findings);
            break;
        case MismatchKind::None:
            break;
        }
        noteWindow();
    }
    return res;
}

} // namespace rankscope
