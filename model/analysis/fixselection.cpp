#include "model/analysis/fixselection.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/hangdetector.h"
#include "model/kb/fixrules.h"
#include "model/kb/taxonomy.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

namespace rankscope {

namespace {

const char* mismatchCondition(MismatchKind kind)
{
    switch (kind) {
    case MismatchKind::OpType:
        return "op_mismatch";
    case MismatchKind::Size:
        return "size_mismatch";
    case MismatchKind::Dtype:
        return "dtype_mismatch";
    case MismatchKind::ReduceOp:
        return "reduce_op_mismatch";
    case MismatchKind::Root:
        return "root_mismatch";
    case MismatchKind::GroupSize:
        return "group_size_mismatch";
    case MismatchKind::State:
        return "state_mismatch";
    case MismatchKind::None:
    case MismatchKind::Participation:
        break;
    }
    return nullptr;
}

bool blames(const Finding& f, int rank)
{
    return std::find(f.ranks.begin(), f.ranks.end(), rank) != f.ranks.end();
}

// The matched collective a trace finding is about: its group and seq, preferring the row whose
// deviating ranks are the finding's.
const MatchedCollective* rowOf(const Finding& f, const std::vector<CollectiveGroup>& groups,
                               const CollectiveGroup** groupOut)
{
    if (f.seq < 0) return nullptr;
    const MatchedCollective* best = nullptr;
    for (const CollectiveGroup& g : groups) {
        if (g.name != f.processGroup) continue;
        for (const MatchedCollective& row : g.collectives) {
            if (row.seq != f.seq) continue;
            const bool same = std::any_of(row.culprits.begin(), row.culprits.end(),
                                          [&](int r) { return blames(f, r); });
            if (!best || same) {
                best = &row;
                *groupOut = &g;
            }
            if (same) return best;
        }
    }
    return best;
}

void add(std::vector<std::string>& conditions, const std::string& c)
{
    if (std::find(conditions.begin(), conditions.end(), c) == conditions.end())
        conditions.push_back(c);
}

// What the collective of a trace finding shows: who has no record of it, what differs, whether
// anyone completed it, whether the blamed ranks only enqueued it while the others started it,
// and whether the blamed ranks ran fewer steps than the others.
void traceConditions(Finding& f, const EventStore& store,
                     const std::vector<CollectiveGroup>& groups, const StepTimeline& steps,
                     std::string& where)
{
    // A send/recv pair is no row of its group (its seq counts point-to-point ops only).
    if (std::find(f.conditions.begin(), f.conditions.end(), "point_to_point") != f.conditions.end())
        return;
    const CollectiveGroup* g = nullptr;
    const MatchedCollective* row = rowOf(f, groups, &g);
    if (!row || !g) return;
    where = std::string(store.strings.view(row->op)) + (g->byOrdinal ? " (collective " : " #") +
            std::to_string(row->seq) + (g->byOrdinal ? " in issue order)" : "");
    // A rank that only waited elsewhere keeps that reading: what the row says of a rank that
    // stopped ("fewer steps: its input ran out") is its cause's, not its own.
    if (std::find(f.conditions.begin(), f.conditions.end(), "waiting_elsewhere") !=
        f.conditions.end())
        return;
    if (const char* c = mismatchCondition(row->mismatch)) add(f.conditions, c);
    bool anyBlamedMissing = false, allBlamedMissing = !f.ranks.empty();
    bool anyCompleted = false, everyoneIssued = true;
    // The blamed ranks' calls were enqueued and never started (their GPU still ran their own
    // earlier work) while every other member's started: known states only.
    bool blamedOnlyEnqueued = !f.ranks.empty(), othersStarted = false, othersAllStarted = true;
    for (std::size_t slot = 0; slot < g->members.size(); ++slot) {
        const std::int32_t i = row->records[slot];
        const bool blamed = blames(f, g->members[slot]);
        if (i < 0) {
            everyoneIssued = false;
            anyBlamedMissing = anyBlamedMissing || blamed;
            blamedOnlyEnqueued = blamedOnlyEnqueued && !blamed;
            othersAllStarted = othersAllStarted && blamed;
            continue;
        }
        if (blamed) allBlamedMissing = false;
        const CollectiveRecord& c = store.collectives[std::size_t(i)];
        if (!c.stateUnknown && c.state == CollectiveRecord::State::Completed) anyCompleted = true;
        if (blamed) {
            blamedOnlyEnqueued =
                blamedOnlyEnqueued && !c.stateUnknown && c.state == CollectiveRecord::State::Issued;
        } else {
            othersStarted = true;
            othersAllStarted =
                othersAllStarted && !c.stateUnknown && c.state == CollectiveRecord::State::Started;
        }
    }
    if (anyBlamedMissing && allBlamedMissing) add(f.conditions, "never_issued");
    if (blamedOnlyEnqueued && othersStarted && othersAllStarted)
        add(f.conditions, "enqueued_not_started");
    if (everyoneIssued && !anyCompleted && row->mismatch == MismatchKind::None)
        add(f.conditions, "all_issued_none_completed");
    // A blamed rank whose last collective of the group is a barrier left its loop and waits
    // for the others to finish theirs: it ran out of work first.
    bool inBarrier = !f.ranks.empty();
    for (int r : f.ranks) {
        const int slot = g->slotOf(r);
        std::int32_t last = -1;
        for (const MatchedCollective& c : g->collectives)
            if (slot >= 0 && c.records[std::size_t(slot)] >= 0) last = c.records[std::size_t(slot)];
        const std::string_view op =
            last < 0 ? std::string_view()
                     : store.strings.view(store.collectives[std::size_t(last)].op);
        inBarrier = inBarrier && op.find("barrier") != std::string_view::npos;
    }
    if (inBarrier) add(f.conditions, "waits_in_barrier");
    std::size_t blamedSteps = 0, otherSteps = 0;
    for (int r : g->members) {
        std::size_t& n = blames(f, r) ? blamedSteps : otherSteps;
        n = std::max(n, steps.stepsOf(r).size());
    }
    if (!f.ranks.empty() && blamedSteps < otherSteps) {
        add(f.conditions, "fewer_steps");
        if (f.detail.empty())
            f.detail = std::to_string(blamedSteps) + " steps where the others ran " +
                       std::to_string(otherSteps);
    }
    if (f.detail.empty()) f.detail = row->detail;
}

// The ranks of `ranks` (every one of them, or none) whose traces end inside a receive that held
// them for a hang's length while no rank's ends inside a send: a recv on every rank, or one
// broadcast or scatter that holds every rank (its root's sends complete as its peers receive
// them, so none of the ranks acted as the root the others waited for). Nobody was sending:
// the ranks disagree on who sends, as a src or peer computed differently on one rank, or every
// rank calling recv before its send, makes them.
std::vector<int> waitingToReceive(const AnalysisContext& ctx, const std::vector<int>& ranks)
{
    if (ranks.size() < 2) return {};
    const auto traced = [&ctx](const CollectiveRecord& c) {
        return c.laneIndex >= 0 && !c.stateUnknown && ctx.beginNs(c) >= 0;
    };
    std::map<int, const CollectiveRecord*> last; // each rank's last traced record
    const CollectiveRecord** slot = nullptr;     // a rank's records mostly follow one another
    int slotRank = -1;
    for (const CollectiveRecord& c : ctx.store.collectives) {
        if (!traced(c)) continue;
        if (!slot || c.rank != slotRank) {
            slot = &last[c.rank];
            slotRank = c.rank;
        }
        if (!*slot || ctx.beginNs(**slot) < ctx.beginNs(c)) *slot = &c;
    }
    if (last.size() < ranks.size()) return {};
    // How long the other records held their ranks: a sample is enough for a typical duration
    // on large jobs, and a median over it ignores the few last ones it may hold.
    constexpr std::size_t kSample = 4096;
    const std::size_t stride = std::max<std::size_t>(1, ctx.store.collectives.size() / kSample);
    std::vector<std::int64_t> others;
    for (std::size_t i = 0; i < ctx.store.collectives.size(); i += stride) {
        const CollectiveRecord& c = ctx.store.collectives[i];
        if (traced(c) && last.at(c.rank) != &c) others.push_back(ctx.heldNs(c));
    }
    std::int64_t typical = 0;
    if (!others.empty()) {
        std::nth_element(others.begin(), others.begin() + std::ptrdiff_t(others.size() / 2),
                         others.end());
        typical = others[others.size() / 2];
    }
    const std::int64_t hang = hangLengthNs(typical);
    std::set<std::string_view> ops;
    for (int r : ranks) {
        const auto it = last.find(r);
        if (it == last.end() || ctx.heldNs(*it->second) < hang) return {};
        ops.insert(ctx.store.strings.view(it->second->op));
    }
    const bool allRecv = ops == std::set<std::string_view>{"recv"};
    const bool oneToMany =
        ops.size() == 1 && (*ops.begin() == "broadcast" || *ops.begin() == "scatter");
    return allRecv || oneToMany ? ranks : std::vector<int>{};
}

} // namespace

void chooseFixes(std::vector<Finding>& findings, const AnalysisContext& ctx,
                 const std::vector<CollectiveGroup>& groups, const std::vector<int>& ranks)
{
    // The knowledge base is parsed at its first use: only when there is a finding to advise on.
    if (findings.empty()) return;
    const Taxonomy& taxonomy = Taxonomy::instance();
    const FixRuleBook& rules = FixRuleBook::builtin();
    // Read from the traces only when a finding could take it.
    const bool waitFound = std::any_of(findings.begin(), findings.end(), [](const Finding& f) {
        return f.kind == FindingKind::Hang || f.kind == FindingKind::Desync;
    });
    const std::vector<int> receiving =
        waitFound ? waitingToReceive(ctx, ranks) : std::vector<int>{};
    for (Finding& f : findings) {
        std::string where;
        traceConditions(f, ctx.store, groups, ctx.steps, where);
        if (!receiving.empty() && (f.kind == FindingKind::Hang || f.kind == FindingKind::Desync) &&
            (f.ranks.empty() || f.ranks == receiving))
            add(f.conditions, "nobody_sends");
        QStringList conditions;
        for (const std::string& c : f.conditions)
            conditions << QString::fromStdString(c);
        const QHash<QString, QString> values = {
            {QStringLiteral("ranks"), f.ranks.empty()
                                          ? QStringLiteral("no single rank")
                                          : QString::fromStdString(formatRanks(f.ranks))},
            {QStringLiteral("detail"), QString::fromStdString(f.detail)},
            {QStringLiteral("where"),
             where.empty() ? QStringLiteral("that collective") : QString::fromStdString(where)},
        };
        const FixChoice choice =
            rules.choose(taxonomy, QString::fromStdString(findingKindName(f.kind)),
                         QString::fromStdString(f.symptom), conditions, values);
        f.fixPatterns.clear();
        for (const QString& id : choice.patternIds)
            f.fixPatterns.push_back(id.toStdString());
        f.fixReason = choice.reason.toStdString();
    }
}

} // namespace rankscope
