#include "model/analysis/collectivematcher.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string_view>

namespace rankscope {

namespace {

using State = CollectiveRecord::State;

bool contains(std::string_view s, std::string_view part)
{
    return s.find(part) != s.npos;
}

enum class SizeRule : std::uint8_t { Same, AllGather, ReduceScatter, AllToAll, Gather, Scatter };

SizeRule sizeRuleOf(std::string_view op)
{
    if (contains(op, "all_gather") || contains(op, "allgather")) return SizeRule::AllGather;
    if (contains(op, "reduce_scatter") || contains(op, "reducescatter"))
        return SizeRule::ReduceScatter;
    if (contains(op, "all_to_all") || contains(op, "alltoall")) return SizeRule::AllToAll;
    if (contains(op, "gather")) return SizeRule::Gather;
    if (contains(op, "scatter")) return SizeRule::Scatter;
    return SizeRule::Same;
}

std::string rankList(const std::vector<int>& ranks)
{
    std::string s;
    for (int r : ranks) {
        if (!s.empty()) s += ", ";
        s += std::to_string(r);
    }
    return s;
}

// The value most members share, and the ranks whose value differs. When no value has a strict
// majority every member that differs from another is a candidate.
template <typename Value>
std::vector<int> deviants(const std::vector<std::pair<int, Value>>& values, Value* common)
{
    // Nearly every collective agrees on everything: answer that without building a histogram.
    if (std::all_of(values.begin(), values.end(),
                    [&](const auto& p) { return p.second == values.front().second; })) {
        if (common && !values.empty()) *common = values.front().second;
        return {};
    }
    std::map<Value, int> counts;
    for (const auto& [rank, v] : values)
        ++counts[v];
    if (counts.size() <= 1) {
        if (common && !values.empty()) *common = values.front().second;
        return {};
    }
    auto best = counts.begin();
    bool tie = false;
    for (auto it = counts.begin(); it != counts.end(); ++it) {
        if (it->second > best->second) {
            best = it;
            tie = false;
        } else if (it != best && it->second == best->second) {
            tie = true;
        }
    }
    if (common) *common = best->first;
    std::vector<int> out;
    for (const auto& [rank, v] : values)
        if (tie || v != best->first) out.push_back(rank);
    return out;
}

void check(const EventStore& store, const CollectiveGroup& group, MatchedCollective& row)
{
    const auto& recs = store.collectives;
    std::vector<int> missing;
    std::vector<std::pair<int, StringId>> ops;
    for (std::size_t m = 0; m < group.members.size(); ++m) {
        if (row.records[m] < 0)
            missing.push_back(group.members[m]);
        else
            ops.emplace_back(group.members[m], recs[std::size_t(row.records[m])].op);
    }
    StringId op = 0;
    std::vector<int> otherOp = deviants(ops, &op);
    row.op = op;
    if (!missing.empty()) {
        row.mismatch = MismatchKind::Participation;
        row.culprits = missing;
        row.detail = "rank" + std::string(missing.size() > 1 ? "s " : " ") + rankList(missing) +
                     " did not issue this collective";
        return;
    }
    if (!otherOp.empty()) {
        row.mismatch = MismatchKind::OpType;
        row.culprits = otherOp;
        for (const auto& [rank, o] : ops) {
            if (!row.detail.empty()) row.detail += ", ";
            row.detail += "rank " + std::to_string(rank) + " " + std::string(store.strings.view(o));
        }
        return;
    }
    const SizeRule rule = sizeRuleOf(store.strings.view(op));
    const auto groupSize = std::int64_t(group.members.size());
    std::vector<std::pair<int, std::int64_t>> ins, outs;
    std::vector<int> selfInconsistent;
    std::int64_t sumIn = 0, sumOut = 0;
    bool sumsKnown = true;
    for (std::size_t m = 0; m < group.members.size(); ++m) {
        const CollectiveRecord& c = recs[std::size_t(row.records[m])];
        const int rank = group.members[m];
        if (c.inNelems >= 0) ins.emplace_back(rank, c.inNelems);
        if (c.outNelems >= 0) outs.emplace_back(rank, c.outNelems);
        if (c.inNelems < 0 || c.outNelems < 0) {
            sumsKnown = false;
            continue;
        }
        sumIn += c.inNelems;
        sumOut += c.outNelems;
        const bool ok = rule == SizeRule::AllGather       ? c.outNelems == c.inNelems * groupSize
                        : rule == SizeRule::ReduceScatter ? c.inNelems == c.outNelems * groupSize
                        : rule == SizeRule::Same ? c.inNelems == c.outNelems || c.outNelems == 0
                                                 : true;
        if (!ok) selfInconsistent.push_back(rank);
    }
    std::vector<int> sizeCulprits = selfInconsistent;
    if (rule != SizeRule::AllToAll && rule != SizeRule::Scatter)
        for (int r : deviants<std::int64_t>(ins, nullptr))
            sizeCulprits.push_back(r);
    if (rule != SizeRule::AllToAll && rule != SizeRule::Gather)
        for (int r : deviants<std::int64_t>(outs, nullptr))
            sizeCulprits.push_back(r);
    if (rule == SizeRule::AllToAll && sumsKnown && sumIn != sumOut) sizeCulprits = group.members;
    if (!sizeCulprits.empty()) {
        std::sort(sizeCulprits.begin(), sizeCulprits.end());
        sizeCulprits.erase(std::unique(sizeCulprits.begin(), sizeCulprits.end()),
                           sizeCulprits.end());
        row.mismatch = MismatchKind::Size;
        row.culprits = sizeCulprits;
        for (std::size_t m = 0; m < group.members.size(); ++m) {
            const CollectiveRecord& c = recs[std::size_t(row.records[m])];
            if (!row.detail.empty()) row.detail += "; ";
            row.detail += "rank " + std::to_string(group.members[m]) + " in " +
                          std::to_string(c.inNelems) + " out " + std::to_string(c.outNelems);
        }
        return;
    }
    std::vector<std::pair<int, StringId>> dtypes;
    for (std::size_t m = 0; m < group.members.size(); ++m) {
        const CollectiveRecord& c = recs[std::size_t(row.records[m])];
        if (c.dtype != 0) dtypes.emplace_back(group.members[m], c.dtype);
    }
    std::vector<int> otherDtype = deviants(dtypes, static_cast<StringId*>(nullptr));
    if (!otherDtype.empty()) {
        row.mismatch = MismatchKind::Dtype;
        row.culprits = otherDtype;
        for (const auto& [rank, d] : dtypes) {
            if (!row.detail.empty()) row.detail += ", ";
            row.detail += "rank " + std::to_string(rank) + " " + std::string(store.strings.view(d));
        }
        return;
    }
    bool anyCompleted = false;
    std::vector<int> notCompleted;
    for (std::size_t m = 0; m < group.members.size(); ++m) {
        const CollectiveRecord& c = recs[std::size_t(row.records[m])];
        if (c.state == State::Completed)
            anyCompleted = true;
        else
            notCompleted.push_back(group.members[m]);
    }
    if (anyCompleted && !notCompleted.empty()) {
        row.mismatch = MismatchKind::State;
        row.culprits = notCompleted;
        row.detail = "completed on some ranks but not on rank" +
                     std::string(notCompleted.size() > 1 ? "s " : " ") + rankList(notCompleted);
    }
}

std::int64_t orderTime(const CollectiveRecord& c)
{
    return c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs;
}

// Per-rank order of collectives, aligned greedily: a rank whose current op differs from the
// others' while matching what they issue next is taken to have skipped one (a participation
// gap), so one missing record does not shift every later pairing.
void alignByOrdinal(const EventStore& store, CollectiveGroup& group,
                    const std::vector<std::vector<std::int32_t>>& perMember)
{
    const auto& recs = store.collectives;
    const std::size_t n = group.members.size();
    std::vector<std::size_t> cursor(n, 0);
    std::int64_t ordinal = 0;
    std::vector<std::pair<int, StringId>> ops;
    while (true) {
        ops.clear();
        for (std::size_t m = 0; m < n; ++m)
            if (cursor[m] < perMember[m].size())
                ops.emplace_back(int(m), recs[std::size_t(perMember[m][cursor[m]])].op);
        if (ops.empty()) break;
        StringId common = 0;
        const std::vector<int> odd = deviants(ops, &common);
        std::vector<bool> skipped(n, false);
        if (!odd.empty() && odd.size() < ops.size()) {
            for (int m : odd) {
                const StringId mine =
                    recs[std::size_t(perMember[std::size_t(m)][cursor[std::size_t(m)]])].op;
                std::vector<std::pair<int, StringId>> next;
                for (std::size_t o = 0; o < n; ++o) {
                    if (std::find(odd.begin(), odd.end(), int(o)) != odd.end()) continue;
                    if (cursor[o] + 1 < perMember[o].size())
                        next.emplace_back(int(o),
                                          recs[std::size_t(perMember[o][cursor[o] + 1])].op);
                }
                StringId nextCommon = 0;
                if (!next.empty() && deviants(next, &nextCommon).empty() && nextCommon == mine)
                    skipped[std::size_t(m)] = true;
            }
        }
        MatchedCollective row;
        row.seq = ordinal++;
        row.records.assign(n, -1);
        for (std::size_t m = 0; m < n; ++m) {
            if (cursor[m] >= perMember[m].size() || skipped[m]) continue;
            row.records[m] = perMember[m][cursor[m]++];
        }
        group.collectives.push_back(std::move(row));
    }
}

void alignBySeq(const EventStore& store, CollectiveGroup& group,
                const std::vector<std::vector<std::int32_t>>& perMember)
{
    const auto& recs = store.collectives;
    const std::size_t n = group.members.size();
    // Ring buffers and late profiler starts drop a rank's oldest entries: start where every
    // rank that has records has them.
    std::int64_t from = std::numeric_limits<std::int64_t>::min();
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = from;
    std::size_t total = 0;
    for (const auto& list : perMember) {
        if (list.empty()) continue;
        from = std::max(from, recs[std::size_t(list.front())].seq);
        lo = std::min(lo, recs[std::size_t(list.front())].seq);
        hi = std::max(hi, recs[std::size_t(list.back())].seq);
        total += list.size();
    }
    std::vector<std::int64_t> seqs;
    if (total > 0 && std::uint64_t(hi - lo) < 4 * std::uint64_t(total) + 64) {
        // Dense sequence numbers (the normal case): mark them instead of sorting them all.
        std::vector<char> seen(std::size_t(hi - lo + 1), 0);
        for (const auto& list : perMember)
            for (std::int32_t i : list)
                seen[std::size_t(recs[std::size_t(i)].seq - lo)] = 1;
        for (std::size_t k = 0; k < seen.size(); ++k)
            if (seen[k]) seqs.push_back(lo + std::int64_t(k));
    } else {
        for (const auto& list : perMember)
            for (std::int32_t i : list)
                seqs.push_back(recs[std::size_t(i)].seq);
        std::sort(seqs.begin(), seqs.end());
        seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
    }
    std::vector<std::size_t> cursor(n, 0);
    for (std::int64_t seq : seqs) {
        if (seq < from) continue;
        MatchedCollective row;
        row.seq = seq;
        row.records.assign(n, -1);
        for (std::size_t m = 0; m < n; ++m) {
            const auto& list = perMember[m];
            while (cursor[m] < list.size() && recs[std::size_t(list[cursor[m]])].seq < seq)
                ++cursor[m];
            if (cursor[m] < list.size() && recs[std::size_t(list[cursor[m]])].seq == seq)
                row.records[m] = list[cursor[m]];
        }
        group.collectives.push_back(std::move(row));
    }
}

} // namespace

const char* mismatchKindName(MismatchKind kind)
{
    switch (kind) {
    case MismatchKind::None:
        return "none";
    case MismatchKind::Participation:
        return "participation";
    case MismatchKind::OpType:
        return "op_type";
    case MismatchKind::Size:
        return "size";
    case MismatchKind::Dtype:
        return "dtype";
    case MismatchKind::State:
        return "state";
    }
    return "none";
}

int CollectiveGroup::slotOf(int rank) const
{
    const auto it = std::lower_bound(members.begin(), members.end(), rank);
    return it != members.end() && *it == rank ? int(it - members.begin()) : -1;
}

std::vector<CollectiveGroup> CollectiveMatcher::match(const EventStore& store,
                                                      std::vector<int> worldRanks)
{
    const auto& recs = store.collectives;
    for (const CollectiveRecord& c : recs)
        if (worldRanks.empty() || worldRanks.back() != c.rank) worldRanks.push_back(c.rank);
    std::sort(worldRanks.begin(), worldRanks.end());
    worldRanks.erase(std::unique(worldRanks.begin(), worldRanks.end()), worldRanks.end());
    worldRanks.erase(
        std::remove_if(worldRanks.begin(), worldRanks.end(), [](int r) { return r < 0; }),
        worldRanks.end());

    // Group identity = name + member set; a group without either is the "unknown" group.
    std::map<std::pair<std::string, std::vector<int>>, std::vector<std::int32_t>> byKey;
    std::vector<std::int32_t>* lastList = nullptr;
    const CollectiveRecord* lastRec = nullptr;
    for (std::size_t i = 0; i < recs.size(); ++i) {
        const CollectiveRecord& c = recs[i];
        if (c.rank < 0) continue;
        // Consecutive records of a rank are mostly in the same group: skip the key lookup.
        if (lastRec && lastRec->processGroupName == c.processGroupName &&
            lastRec->groupRanks == c.groupRanks) {
            lastList->push_back(std::int32_t(i));
            continue;
        }
        std::vector<int> members = c.groupRanks;
        std::sort(members.begin(), members.end());
        lastList =
            &byKey[{std::string(store.strings.view(c.processGroupName)), std::move(members)}];
        lastList->push_back(std::int32_t(i));
        lastRec = &c;
    }

    std::vector<CollectiveGroup> groups;
    for (auto& [key, indices] : byKey) {
        CollectiveGroup g;
        g.name = key.first;
        g.membersFromSource = !key.second.empty();
        g.members = g.membersFromSource ? key.second : worldRanks;
        bool anySeq = false;
        for (std::int32_t i : indices)
            anySeq = anySeq || recs[std::size_t(i)].seqFromSource;
        g.byOrdinal = g.name.empty() && !g.membersFromSource && !anySeq;
        std::vector<std::vector<std::int32_t>> perMember(g.members.size());
        for (std::int32_t i : indices) {
            const int slot = g.slotOf(recs[std::size_t(i)].rank);
            if (slot >= 0) perMember[std::size_t(slot)].push_back(i);
        }
        for (auto& list : perMember) {
            if (g.byOrdinal) {
                std::stable_sort(list.begin(), list.end(), [&](std::int32_t a, std::int32_t b) {
                    return orderTime(recs[std::size_t(a)]) < orderTime(recs[std::size_t(b)]);
                });
                continue;
            }
            const auto bySeq = [&](std::int32_t a, std::int32_t b) {
                return recs[std::size_t(a)].seq < recs[std::size_t(b)].seq;
            };
            if (!std::is_sorted(list.begin(), list.end(), bySeq))
                std::stable_sort(list.begin(), list.end(), bySeq);
            // Several sources of one rank may describe the same collective: keep the record
            // that got furthest (it carries the execution). In place: large jobs have millions.
            std::size_t w = 0;
            for (std::size_t k = 0; k < list.size(); ++k) {
                const std::int32_t i = list[k];
                if (w > 0 && recs[std::size_t(list[w - 1])].seq == recs[std::size_t(i)].seq) {
                    if (recs[std::size_t(i)].state > recs[std::size_t(list[w - 1])].state)
                        list[w - 1] = i;
                    continue;
                }
                list[w++] = i;
            }
            list.resize(w);
        }
        if (g.byOrdinal)
            alignByOrdinal(store, g, perMember);
        else
            alignBySeq(store, g, perMember);
        for (std::size_t k = 0; k < g.collectives.size(); ++k) {
            check(store, g, g.collectives[k]);
            if (g.collectives[k].mismatch == MismatchKind::None) continue;
            ++g.mismatchCount;
            if (g.firstMismatch < 0) g.firstMismatch = int(k);
        }
        groups.push_back(std::move(g));
    }
    return groups;
}

} // namespace rankscope
