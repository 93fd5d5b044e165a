#include "model/analysis/collectivematcher.h"

#include "model/analysis/analysiscontext.h"
#include "model/analysis/symptomids.h"
#include "model/store/parallelfor.h"
#include "model/trace/kinetocollectives.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

namespace rankscope {

namespace {

using State = CollectiveRecord::State;

// Fewer rows than this are not worth a task of their own.
constexpr std::size_t kRowsPerTask = 256;

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

// n elements times the group size, or -1 when that overflows: counts come from files.
std::int64_t scaled(std::int64_t n, std::int64_t groupSize)
{
    std::int64_t out = 0;
    return __builtin_mul_overflow(n, groupSize, &out) ? -1 : out;
}

// Ops whose root must be the same rank everywhere (all_reduce's NCCL root field is unused).
bool hasRoot(std::string_view op)
{
    return op == "broadcast" || op == "reduce" || op == "gather" || op == "scatter";
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

// Flags `kind` on the row when some members' value differs from the majority's; `describe`
// says what each member's value is.
template <typename Value, typename Describe>
bool flagDeviants(MatchedCollective& row, MismatchKind kind,
                  const std::vector<std::pair<int, Value>>& values, Describe&& describe)
{
    std::vector<int> odd = deviants(values, static_cast<Value*>(nullptr));
    if (odd.empty()) return false;
    row.mismatch = kind;
    row.culprits = std::move(odd);
    for (const auto& [rank, v] : values) {
        if (!row.detail.empty()) row.detail += ", ";
        row.detail += "rank " + std::to_string(rank) + " " + describe(v);
    }
    return true;
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
    deviants(ops, &op);
    row.op = op;
    if (!missing.empty()) {
        row.mismatch = MismatchKind::Participation;
        row.culprits = missing;
        row.detail = "rank" + std::string(missing.size() > 1 ? "s " : " ") + rankList(missing) +
                     " did not issue this collective";
        return;
    }
    const auto name = [&](StringId id) { return std::string(store.strings.view(id)); };
    if (flagDeviants(row, MismatchKind::OpType, ops, name)) return;
    // Every member's value of one field, where the source gave it (`get` returns nullopt).
    const auto valuesOf = [&](auto get) {
        std::vector<std::pair<int, typename decltype(get(recs.front()))::value_type>> out;
        for (std::size_t m = 0; m < group.members.size(); ++m)
            if (const auto v = get(recs[std::size_t(row.records[m])]))
                out.emplace_back(group.members[m], *v);
        return out;
    };
    // A rank that built its communicator with another world size: the size rules below
    // would only echo it.
    const auto groupSizes = valuesOf([](const CollectiveRecord& c) {
        return c.groupSize >= 0 ? std::optional<int>(c.groupSize) : std::nullopt;
    });
    if (flagDeviants(row, MismatchKind::GroupSize, groupSizes,
                     [](int n) { return "group size " + std::to_string(n); }))
        return;
    const SizeRule rule = sizeRuleOf(store.strings.view(op));
    const auto groupSize = std::int64_t(group.memberCount());
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
        const bool ok = rule == SizeRule::AllGather ? c.outNelems == scaled(c.inNelems, groupSize)
                        : rule == SizeRule::ReduceScatter
                            ? c.inNelems == scaled(c.outNelems, groupSize)
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
    const auto interned = [](StringId CollectiveRecord::*field) {
        return [field](const CollectiveRecord& c) {
            return c.*field != 0 ? std::optional<StringId>(c.*field) : std::nullopt;
        };
    };
    if (flagDeviants(row, MismatchKind::Dtype, valuesOf(interned(&CollectiveRecord::dtype)), name))
        return;
    if (flagDeviants(row, MismatchKind::ReduceOp, valuesOf(interned(&CollectiveRecord::reduceOp)),
                     name))
        return;
    const bool rooted = hasRoot(store.strings.view(op));
    const auto roots = valuesOf([rooted](const CollectiveRecord& c) {
        return rooted && c.root >= 0 ? std::optional<int>(c.root) : std::nullopt;
    });
    if (flagDeviants(row, MismatchKind::Root, roots,
                     [](int r) { return "root " + std::to_string(r); }))
        return;
    // The state rules compare the members whose source shows how far the call got; a record
    // that only shows the call issued (an NCCL log line) is neither behind nor ahead of them.
    bool anyCompleted = false;
    std::vector<int> notCompleted, notStarted;
    std::size_t known = 0;
    for (std::size_t m = 0; m < group.members.size(); ++m) {
        const CollectiveRecord& c = recs[std::size_t(row.records[m])];
        if (c.stateUnknown) continue;
        ++known;
        if (c.state == State::Completed)
            anyCompleted = true;
        else
            notCompleted.push_back(group.members[m]);
        if (c.state == State::Issued) notStarted.push_back(group.members[m]);
    }
    if (anyCompleted && !notCompleted.empty()) {
        row.mismatch = MismatchKind::State;
        row.culprits = notCompleted;
        row.detail = "completed on some ranks but not on rank" +
                     std::string(notCompleted.size() > 1 ? "s " : " ") + rankList(notCompleted);
        return;
    }
    // Nobody finished: the ranks still waiting to start it are held up by earlier work on
    // their own stream, the ones that started wait for them.
    if (!anyCompleted && !notStarted.empty() && notStarted.size() < known) {
        row.mismatch = MismatchKind::State;
        row.culprits = notStarted;
        row.detail = "started on some ranks but never started (still scheduled) on rank" +
                     std::string(notStarted.size() > 1 ? "s " : " ") + rankList(notStarted);
    }
}

// Whether `c` describes a collective better than `kept`, another record of the rank's with the
// same seq: a known state is better than an unknown one, then the further state.
bool supersedes(const CollectiveRecord& c, const CollectiveRecord& kept)
{
    if (c.stateUnknown != kept.stateUnknown) return kept.stateUnknown;
    return c.state > kept.state;
}

// Sizes the per-cell times for the group's rows, uninitialised: writeTimes fills every cell
// once (a second pass over 160 MB of fresh memory in a large job would cost more than the rest
// of the row's work).
void allocateTimes(CollectiveGroup& g)
{
    const std::size_t cells = g.members.size() * g.collectives.size();
    g.completedStartNs.resize(cells);
    g.completedEndNs.resize(cells);
}

// The cell of (slot, row): the execution times of `c` when it completed, else -1 (also when the
// member has no record, `c` null).
void writeTimes(CollectiveGroup& g, std::size_t slot, std::size_t row, const CollectiveRecord* c)
{
    const std::size_t cell = slot * g.collectives.size() + row;
    const bool completed = c && c->state == State::Completed;
    g.completedStartNs[cell] = completed && c->execStartNs >= 0 ? c->execStartNs : -1;
    g.completedEndNs[cell] = completed && c->execEndNs >= 0 ? c->execEndNs : -1;
}

// One member's records of a group, in the order the rows take them (by seq, one per seq, or
// by issue time): store indices [first, first + size) when they are one run of the store, as a
// trace holds a rank's records, so that 10 M records need no list of their indices; else a list.
class MemberRecords {
public:
    MemberRecords() = default;
    MemberRecords(std::int32_t first, std::size_t count) : m_first(first), m_count(count) {}
    explicit MemberRecords(std::vector<std::int32_t> list)
        : m_first(-1), m_count(list.size()), m_list(std::move(list))
    {}

    std::size_t size() const { return m_count; }
    bool empty() const { return m_count == 0; }
    std::int32_t operator[](std::size_t j) const
    {
        return m_first >= 0 ? m_first + std::int32_t(j) : m_list[j];
    }

private:
    std::int32_t m_first = -1;
    std::size_t m_count = 0;
    std::vector<std::int32_t> m_list;
};

std::int64_t orderTime(const CollectiveRecord& c)
{
    return c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs;
}

// Per-rank order of collectives, aligned greedily: a rank whose current op differs from the
// others' while matching what they issue next is taken to have skipped one (a participation
// gap), so one missing record does not shift every later pairing.
void alignByOrdinal(const EventStore& store, CollectiveGroup& group,
                    const std::vector<MemberRecords>& perMember)
{
    const auto& recs = store.collectives;
    const std::size_t n = group.members.size();
    std::vector<std::size_t> cursor(n, 0);
    // Rows count from 1, as the readers number records without a source seq (and as c10d does).
    std::int64_t ordinal = 1;
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

// What a clean row has in common on every member; a member that differs in any of these sends
// the row through the full check().
struct RowRef {
    StringId op = 0, dtype = 0, reduceOp = 0;
    std::int64_t inNelems = -1, outNelems = -1;
    State state = State::Issued;
    int groupSize = -1, root = -1;

    static RowRef of(const CollectiveRecord& c)
    {
        return {c.op, c.dtype, c.reduceOp, c.inNelems, c.outNelems, c.state, c.groupSize, c.root};
    }
    bool operator==(const RowRef&) const = default;
};

// Whether check() can find anything in a row where every member holds exactly `ref`: only the
// per-op size rules, which a uniform row can still break.
bool uniformRowCanMismatch(const EventStore& store, const RowRef& ref, std::int64_t groupSize)
{
    if (ref.inNelems < 0 || ref.outNelems < 0) return false;
    switch (sizeRuleOf(store.strings.view(ref.op))) {
    case SizeRule::AllGather:
        return ref.outNelems != scaled(ref.inNelems, groupSize);
    case SizeRule::ReduceScatter:
        return ref.inNelems != scaled(ref.outNelems, groupSize);
    case SizeRule::Same:
        return !(ref.inNelems == ref.outNelems || ref.outNelems == 0);
    case SizeRule::AllToAll:
        return ref.inNelems != ref.outNelems;
    case SizeRule::Gather:
    case SizeRule::Scatter:
        return false;
    }
    return true;
}

// Rows by seq. Large jobs hold millions of records laid out rank by rank, so every pass walks
// one member's records in store order (sequential memory) rather than a row across members
// (one cache miss per member). Each member's list is sorted by seq without duplicates.
void alignBySeq(const EventStore& store, CollectiveGroup& group,
                const std::vector<MemberRecords>& perMember)
{
    const auto& recs = store.collectives;
    const std::size_t n = group.members.size();
    const auto seqAt = [&](const MemberRecords& list, std::size_t j) {
        return recs[std::size_t(list[j])].seq;
    };
    // Ring buffers and late profiler starts drop a rank's oldest entries: start where every
    // rank that has records has them.
    std::int64_t from = std::numeric_limits<std::int64_t>::min();
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = from;
    std::size_t total = 0;
    for (const auto& list : perMember) {
        if (list.empty()) continue;
        from = std::max(from, seqAt(list, 0));
        lo = std::min(lo, seqAt(list, 0));
        hi = std::max(hi, seqAt(list, list.size() - 1));
        total += list.size();
    }
    if (total > 0 && from > lo) group.comparedFromSeq = from;
    // A member whose seqs have no gap holds exactly [first, last]: its seqs need not be read.
    const auto gapless = [&](const MemberRecords& list) {
        return std::uint64_t(seqAt(list, list.size() - 1) - seqAt(list, 0)) + 1 == list.size();
    };
    std::vector<std::int64_t> seqs;
    if (total > 0 && std::uint64_t(hi - lo) < 4 * std::uint64_t(total) + 64) {
        // Dense sequence numbers (the normal case): mark them instead of sorting them all.
        std::vector<char> seen(std::size_t(hi - lo + 1), 0);
        for (const auto& list : perMember) {
            if (list.empty()) continue;
            if (gapless(list)) {
                std::fill(seen.begin() + std::ptrdiff_t(seqAt(list, 0) - lo),
                          seen.begin() + std::ptrdiff_t(seqAt(list, list.size() - 1) - lo + 1), 1);
                continue;
            }
            for (std::size_t j = 0; j < list.size(); ++j)
                seen[std::size_t(seqAt(list, j) - lo)] = 1;
        }
        for (std::size_t k = 0; k < seen.size(); ++k)
            if (seen[k] && lo + std::int64_t(k) >= from) seqs.push_back(lo + std::int64_t(k));
    } else {
        for (const auto& list : perMember)
            for (std::size_t j = 0; j < list.size(); ++j)
                if (seqAt(list, j) >= from) seqs.push_back(seqAt(list, j));
        std::sort(seqs.begin(), seqs.end());
        seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
    }
    group.collectives.resize(seqs.size());
    allocateTimes(group);
    // Rows are filled and checked in chunks, one chunk per task: each member's records of the
    // chunk are a contiguous slice of its list, and every write is to the chunk's own rows and
    // cells, so the result does not depend on how chunks are spread over threads.
    const std::size_t rows = seqs.size();
    const std::size_t chunk =
        std::max<std::size_t>(kRowsPerTask, rows / (8 * parallelWorkers(rows)) + 1);
    parallelFor((rows + chunk - 1) / chunk, [&](std::size_t task, std::size_t) {
        const std::size_t k0 = task * chunk, k1 = std::min(rows, k0 + chunk);
        for (std::size_t k = k0; k < k1; ++k) {
            group.collectives[k].seq = seqs[k];
            group.collectives[k].records.assign(n, -1);
        }
        std::vector<RowRef> ref(k1 - k0);
        std::vector<std::uint32_t> present(k1 - k0, 0);
        std::vector<char> differs(k1 - k0, 0);
        for (std::size_t m = 0; m < n; ++m) {
            const auto& list = perMember[m];
            std::size_t k = k0;
            // Rows up to `until` that the member has no record of.
            const auto absentUntil = [&](std::size_t until) {
                for (; k < until; ++k)
                    writeTimes(group, m, k, nullptr);
            };
            if (list.empty()) {
                absentUntil(k1);
                continue;
            }
            // Where the chunk starts in the member's list: by arithmetic when it has no gap.
            std::size_t j = 0;
            if (seqs[k0] > seqAt(list, 0)) {
                if (gapless(list)) {
                    j = std::min(list.size(), std::size_t(seqs[k0] - seqAt(list, 0)));
                } else { // the first slot whose seq is not below seqs[k0], by bisection
                    std::size_t end = list.size();
                    while (j < end) {
                        const std::size_t mid = j + (end - j) / 2;
                        if (seqAt(list, mid) < seqs[k0])
                            j = mid + 1;
                        else
                            end = mid;
                    }
                }
            }
            for (; j < list.size(); ++j) {
                const CollectiveRecord& c = recs[std::size_t(list[j])];
                if (c.seq > seqs[k1 - 1]) break;
                while (seqs[k] < c.seq)
                    writeTimes(group, m, k++, nullptr);
                group.collectives[k].records[m] = list[j];
                writeTimes(group, m, k, &c);
                const RowRef mineRef = RowRef::of(c);
                if (present[k - k0]++ == 0)
                    ref[k - k0] = mineRef;
                else if (!(ref[k - k0] == mineRef))
                    differs[k - k0] = 1;
                ++k; // the list has one record per seq
            }
            absentUntil(k1);
        }
        for (std::size_t k = k0; k < k1; ++k) {
            MatchedCollective& row = group.collectives[k];
            if (present[k - k0] == n && !differs[k - k0] &&
                !uniformRowCanMismatch(store, ref[k - k0], std::int64_t(group.memberCount()))) {
                row.op = ref[k - k0].op; // what check() concludes for a row where all members agree
                continue;
            }
            check(store, group, row);
        }
    });
}

// Records no source numbered (no Seq, no group counter) carry their rank's own order, and row k
// pairs every member's k-th collective: sound only when every member's trace holds the same run
// of collectives. Returns why the rows are not pairs, or "" when they are. A member whose
// records just end early stays a hang: that is what a rank that stopped leaves behind.
std::string ordinalPairingProblem(const EventStore& store, const CollectiveGroup& g,
                                  const StepTimeline* steps)
{
    const auto& recs = store.collectives;
    const std::size_t n = g.members.size();
    // Profiling windows that start at different steps pair one step's collectives with another's.
    if (steps) {
        int firstRank = -1, firstStep = -1, firstIndex = -1;
        for (std::size_t m = 0; m < n; ++m) {
            const auto row =
                std::find_if(g.collectives.begin(), g.collectives.end(),
                             [m](const MatchedCollective& r) { return r.records[m] >= 0; });
            if (row == g.collectives.end()) continue;
            const CollectiveRecord& c = recs[std::size_t(row->records[m])];
            const int index = steps->indexAt(c.rank, orderTime(c));
            if (index < 0) continue;
            const int step = steps->stepsOf(c.rank)[std::size_t(index)].number;
            if (firstStep < 0) {
                firstRank = c.rank;
                firstStep = step;
                firstIndex = index;
            } else if (step != firstStep) {
                return "the first collective of rank " + std::to_string(firstRank) + " is in " +
                       steps->label(firstRank, firstIndex) + ", that of rank " +
                       std::to_string(c.rank) + " in " + steps->label(c.rank, index) +
                       ": the profiling windows differ";
            }
        }
    }
    // Where each member's records end: a gap before that is a record its trace lacks.
    std::vector<std::size_t> end(n, 0);
    for (std::size_t k = 0; k < g.collectives.size(); ++k)
        for (std::size_t m = 0; m < n; ++m)
            if (g.collectives[k].records[m] >= 0) end[m] = k + 1;
    std::size_t differing = 0, agreeingBefore = 0, rows = 0;
    for (std::size_t k = 0; k < g.collectives.size(); ++k) {
        const MatchedCollective& row = g.collectives[k];
        ++rows;
        for (std::size_t m = 0; m < n; ++m)
            if (row.records[m] < 0 && k < end[m])
                return "rank " + std::to_string(g.members[m]) + " has no collective at position " +
                       std::to_string(k + 1) +
                       " of the others' order but has later ones: its "
                       "trace lacks events (sampled or partial)";
        switch (row.mismatch) {
        case MismatchKind::None:
            if (differing == 0) ++agreeingBefore;
            break;
        case MismatchKind::Participation:
        case MismatchKind::State:
            break;
        default:
            ++differing;
        }
    }
    if (differing > 1)
        return "the ranks' sequences of collectives differ in op, size or type at " +
               std::to_string(differing) + " of " + std::to_string(rows) +
               " positions: sampled or partial traces, or several process groups interleaved";
    if (differing == 1 && agreeingBefore == 0)
        return "the ranks' first collectives already differ in op, size or type, so nothing "
               "shows that their orders line up";
    return {};
}

// Where a record was read: sources of one kind are paired with each other only (a rank's dump
// and its trace describe the same ops, numbered differently).
enum class Origin : std::uint8_t { Trace, Dump, Log };

Origin originOf(const CollectiveRecord& c)
{
    if (c.laneIndex >= 0) return Origin::Trace;
    return c.sourceLine >= 0 || c.stateUnknown ? Origin::Log : Origin::Dump;
}

// What a recv receives is its output (its input where the source leaves the output unknown).
std::int64_t receivedNelems(const CollectiveRecord& recv)
{
    return recv.outNelems >= 0 ? recv.outNelems : recv.inNelems;
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
    case MismatchKind::GroupSize:
        return "group_size";
    case MismatchKind::ReduceOp:
        return "reduce_op";
    case MismatchKind::Root:
        return "root";
    }
    return "none";
}

int CollectiveGroup::slotOf(int rank) const
{
    const auto it = std::lower_bound(members.begin(), members.end(), rank);
    return it != members.end() && *it == rank ? int(it - members.begin()) : -1;
}

std::vector<CollectiveGroup> CollectiveMatcher::match(const EventStore& store,
                                                      std::vector<int> presentRanks,
                                                      const StepTimeline* steps)
{
    const auto& recs = store.collectives;
    // The runs of consecutive records of one rank in one group (a trace holds one rank's
    // records together, so a group has about one run per rank). Slices of the records are
    // scanned in parallel, then their runs are joined across slice borders in store order:
    // the same runs as one serial pass.
    struct Run {
        int rank;
        std::size_t begin, end;
        std::int64_t firstSeq, lastSeq;
        // Seqs strictly increase along the run: a member whose records are this one run holds
        // its rows in order, one record each, and needs no sort or dedupe.
        bool increasing;
        bool anySeq;

        // Appends the run that follows this one in the store.
        void join(const Run& next)
        {
            increasing = increasing && next.increasing && lastSeq < next.firstSeq;
            end = next.end;
            lastSeq = next.lastSeq;
            anySeq = anySeq || next.anySeq;
        }
    };
    struct Slice {
        std::vector<Run> runs;
        std::vector<int> ranks; // every rank met, point-to-point records' too
    };
    constexpr std::size_t kRecordsPerSlice = 1 << 16;
    std::vector<Slice> slices((recs.size() + kRecordsPerSlice - 1) / kRecordsPerSlice);
    // Point-to-point ops involve two members, not all, and count in their own sequence
    // (Flight Recorder's p2p_seq_id): they would collide with the group's collectives.
    std::vector<std::vector<std::int8_t>> pointToPointOf(parallelWorkers(slices.size()));
    parallelFor(slices.size(), [&](std::size_t k, std::size_t worker) {
        std::vector<std::int8_t>& pointToPoint = pointToPointOf[worker];
        pointToPoint.resize(store.strings.size(), -1); // -1: not looked at yet
        Slice& slice = slices[k];
        const std::size_t end = std::min(recs.size(), (k + 1) * kRecordsPerSlice);
        for (std::size_t i = k * kRecordsPerSlice; i < end; ++i) {
            const CollectiveRecord& c = recs[i];
            if (slice.ranks.empty() || slice.ranks.back() != c.rank) slice.ranks.push_back(c.rank);
            if (c.rank < 0) continue;
            if (std::size_t(c.op) < pointToPoint.size()) {
                std::int8_t& p2p = pointToPoint[std::size_t(c.op)];
                if (p2p < 0) p2p = isPointToPointOp(store.strings.view(c.op)) ? 1 : 0;
                if (p2p == 1) continue;
            }
            const Run one{c.rank, i, i + 1, c.seq, c.seq, true, c.seqFromSource};
            Run* run = slice.runs.empty() ? nullptr : &slice.runs.back();
            if (run && run->end == i && run->rank == c.rank &&
                recs[run->begin].processGroupName == c.processGroupName &&
                recs[run->begin].groupRanks == c.groupRanks)
                run->join(one);
            else
                slice.runs.push_back(one);
        }
    });
    struct Pending {
        std::vector<Run> runs;
        bool anySeq = false;
    };
    std::map<std::pair<std::string, std::vector<int>>, Pending> byKey;
    Pending* last = nullptr;
    const CollectiveRecord* lastRec = nullptr;
    for (const Slice& slice : slices) {
        presentRanks.insert(presentRanks.end(), slice.ranks.begin(), slice.ranks.end());
        for (const Run& run : slice.runs) {
            const CollectiveRecord& c = recs[run.begin];
            // Consecutive runs are mostly in the same group: skip the key lookup.
            if (!lastRec || lastRec->processGroupName != c.processGroupName ||
                lastRec->groupRanks != c.groupRanks) {
                std::vector<int> members = store.rankLists.ranks(c.groupRanks);
                std::sort(members.begin(), members.end());
                last = &byKey[{std::string(store.strings.view(c.processGroupName)),
                               std::move(members)}];
                lastRec = &c;
            }
            last->anySeq = last->anySeq || run.anySeq;
            if (!last->runs.empty() && last->runs.back().rank == run.rank &&
                last->runs.back().end == run.begin)
                last->runs.back().join(run);
            else
                last->runs.push_back(run);
        }
    }
    for (const Lane& lane : store.lanes)
        presentRanks.push_back(lane.rank);
    std::sort(presentRanks.begin(), presentRanks.end());
    presentRanks.erase(std::unique(presentRanks.begin(), presentRanks.end()), presentRanks.end());
    presentRanks.erase(
        std::remove_if(presentRanks.begin(), presentRanks.end(), [](int r) { return r < 0; }),
        presentRanks.end());

    std::vector<CollectiveGroup> groups;
    // Not a structured binding: the lambdas below capture `pending`, which clang before 16 (the
    // fuzz build's compiler on Debian 12) does not allow of a binding.
    for (auto& entry : byKey) {
        const auto& key = entry.first;
        auto& pending = entry.second;
        CollectiveGroup g;
        g.name = key.first;
        g.membersFromSource = !key.second.empty();
        if (!g.membersFromSource) g.members = presentRanks;
        for (int r : key.second)
            (std::binary_search(presentRanks.begin(), presentRanks.end(), r) ? g.members
                                                                             : g.absentMembers)
                .push_back(r);
        g.byOrdinal = g.name.empty() && !g.membersFromSource && !pending.anySeq;
        std::vector<std::size_t> counts(g.members.size(), 0);
        std::vector<int> slotOfRun;
        for (const Run& run : pending.runs) {
            slotOfRun.push_back(g.slotOf(run.rank));
            if (slotOfRun.back() >= 0) counts[std::size_t(slotOfRun.back())] += run.end - run.begin;
        }
        std::vector<std::vector<std::size_t>> runsOfSlot(g.members.size());
        for (std::size_t r = 0; r < pending.runs.size(); ++r)
            if (slotOfRun[r] >= 0) runsOfSlot[std::size_t(slotOfRun[r])].push_back(r);
        std::vector<MemberRecords> perMember(g.members.size());
        // Each member's list is its own: members are sorted and deduplicated in parallel.
        parallelFor(perMember.size(), [&](std::size_t m, std::size_t) {
            // The usual case: one run of the store, in seq order (a trace of the rank).
            if (const auto& runs = runsOfSlot[m];
                !g.byOrdinal && runs.size() == 1 && pending.runs[runs[0]].increasing) {
                const Run& run = pending.runs[runs[0]];
                perMember[m] = MemberRecords(std::int32_t(run.begin), run.end - run.begin);
                return;
            }
            std::vector<std::int32_t> list;
            list.reserve(counts[m]);
            for (std::size_t r : runsOfSlot[m])
                for (std::size_t i = pending.runs[r].begin; i < pending.runs[r].end; ++i)
                    list.push_back(std::int32_t(i));
            if (g.byOrdinal) {
                std::stable_sort(list.begin(), list.end(), [&](std::int32_t a, std::int32_t b) {
                    return orderTime(recs[std::size_t(a)]) < orderTime(recs[std::size_t(b)]);
                });
                perMember[m] = MemberRecords(std::move(list));
                return;
            }
            const auto bySeq = [&](std::int32_t a, std::int32_t b) {
                return recs[std::size_t(a)].seq < recs[std::size_t(b)].seq;
            };
            // Several sources of one rank may describe the same collective: keep the record
            // that got furthest (it carries the execution), and one whose source shows
            // execution over one that cannot. In place: large jobs have millions.
            // How seq sources merge: records meet in one row only when their group key (name +
            // members) and seq are equal, so every source that shares a key must share the
            // numbering. Kineto's Seq, Flight Recorder's collective_seq_id and the watchdog's
            // WorkNCCL SeqNum all come from ProcessGroupNCCL's per-group counter and merge
            // here; a counter of another kind (NCCL's opCount per communicator, which also
            // counts point-to-point and grouped calls) must reach the matcher under its own
            // group name (its commId) unless the reader has mapped it onto the c10d seq.
            // Records without a source seq carry their reader's per-group ordinal and align by
            // it like a seq; only a group with no name, no members and no source seq at all is
            // aligned by issue order (byOrdinal). Point-to-point records are left out above.
            // One pass in the usual case (the source wrote its records in seq order): an
            // out-of-order seq stops it, and the rest is sorted and deduplicated again (the
            // records dropped so far were duplicates that lost, as they would again).
            const auto dedupe = [&] {
                std::size_t w = 0;
                std::int64_t last = 0;
                for (std::size_t k = 0; k < list.size(); ++k) {
                    const std::int32_t i = list[k];
                    const std::int64_t seq = recs[std::size_t(i)].seq;
                    if (w > 0 && seq < last) {
                        list.erase(list.begin() + std::ptrdiff_t(w),
                                   list.begin() + std::ptrdiff_t(k));
                        return false;
                    }
                    if (w > 0 && seq == last) {
                        if (supersedes(recs[std::size_t(i)], recs[std::size_t(list[w - 1])]))
                            list[w - 1] = i;
                        continue;
                    }
                    list[w++] = i;
                    last = seq;
                }
                list.resize(w);
                return true;
            };
            if (!dedupe()) {
                std::stable_sort(list.begin(), list.end(), bySeq);
                dedupe();
            }
            perMember[m] = MemberRecords(std::move(list));
        });
        if (g.byOrdinal) {
            alignByOrdinal(store, g, perMember);
            allocateTimes(g);
            for (std::size_t k = 0; k < g.collectives.size(); ++k) {
                MatchedCollective& row = g.collectives[k];
                for (std::size_t m = 0; m < row.records.size(); ++m)
                    writeTimes(g, m, k,
                               row.records[m] >= 0 ? &recs[std::size_t(row.records[m])] : nullptr);
                check(store, g, row);
            }
        } else {
            alignBySeq(store, g, perMember);
        }
        if (!pending.anySeq && g.members.size() > 1) {
            g.unpairedReason = ordinalPairingProblem(store, g, steps);
            if (!g.unpairedReason.empty()) {
                g.collectives.clear();
                g.completedStartNs.clear();
                g.completedEndNs.clear();
            }
        }
        for (std::size_t k = 0; k < g.collectives.size(); ++k) {
            if (g.collectives[k].mismatch == MismatchKind::None) continue;
            ++g.mismatchCount;
            if (g.firstMismatch < 0) g.firstMismatch = int(k);
        }
        groups.push_back(std::move(g));
    }
    return groups;
}

std::vector<PointToPointLink> CollectiveMatcher::pairPointToPoint(const EventStore& store,
                                                                  const StepTimeline* steps)
{
    const auto& recs = store.collectives;
    // (origin, group, src, dst) -> the link; records in store order, which is each source's own.
    std::map<std::tuple<Origin, std::string, int, int>, PointToPointLink> links;
    std::map<Origin, std::set<int>> recorded; // ranks with any record of that origin
    for (const Lane& lane : store.lanes)
        if (lane.rank >= 0) recorded[Origin::Trace].insert(lane.rank);
    for (std::size_t i = 0; i < recs.size(); ++i) {
        const CollectiveRecord& c = recs[i];
        if (c.rank < 0) continue;
        const Origin origin = originOf(c);
        recorded[origin].insert(c.rank);
        if (origin == Origin::Log || c.root < 0 || c.root == c.rank) continue;
        const std::string_view op = store.strings.view(c.op);
        if (op != "send" && op != "recv") continue;
        const bool send = op == "send";
        const std::string group(store.strings.view(c.processGroupName));
        PointToPointLink& link =
            links[{origin, group, send ? c.rank : c.root, send ? c.root : c.rank}];
        (send ? link.sends : link.recvs).push_back(std::int32_t(i));
    }
    std::vector<PointToPointLink> out;
    for (auto& [key, link] : links) {
        const auto& [origin, group, src, dst] = key;
        link.group = group;
        link.src = src;
        link.dst = dst;
        if (steps && !link.sends.empty() && !link.recvs.empty()) {
            const CollectiveRecord& s = recs[std::size_t(link.sends.front())];
            const CollectiveRecord& r = recs[std::size_t(link.recvs.front())];
            const int sendStep = steps->stepAt(s.rank, orderTime(s));
            const int recvStep = steps->stepAt(r.rank, orderTime(r));
            if (sendStep >= 0 && recvStep >= 0 && sendStep != recvStep) continue;
        }
        const int shortSide = link.sends.size() > link.recvs.size() ? dst : src;
        link.peerRecorded = recorded[origin].count(shortSide) > 0;
        // Paired ops must move the same tensor: the first pair that does not is the cause (a
        // recv posted for another size waits, or fails, and every later pair shifts with it).
        for (std::size_t k = 0; k < link.paired(); ++k) {
            const CollectiveRecord& s = recs[std::size_t(link.sends[k])];
            const CollectiveRecord& r = recs[std::size_t(link.recvs[k])];
            const std::int64_t got = receivedNelems(r);
            if (s.inNelems >= 0 && got >= 0 && s.inNelems != got)
                link.mismatch = MismatchKind::Size;
            else if (s.dtype && r.dtype && s.dtype != r.dtype)
                link.mismatch = MismatchKind::Dtype;
            else
                continue;
            link.firstMismatch = int(k);
            break;
        }
        out.push_back(std::move(link));
    }
    return out;
}

std::vector<Finding>
CollectiveMatcher::pointToPointFindings(const AnalysisContext& ctx,
                                        const std::vector<PointToPointLink>& links)
{
    const auto& recs = ctx.store.collectives;
    const auto seqText = [](const CollectiveRecord& c) {
        return c.seq >= 0 ? " (p2p #" + std::to_string(c.seq) + ")" : std::string();
    };
    // The time range of a trace's record on the common clock (dumps keep their own clock).
    const auto place = [&ctx](Finding& f, const CollectiveRecord& c) {
        if (c.laneIndex < 0 || ctx.beginNs(c) < 0) return;
        f.startNs = ctx.clock.toReference(c.rank, ctx.beginNs(c));
        f.endNs = ctx.clock.toReference(c.rank, ctx.finishNs(c));
        f.step = c.step;
    };
    std::vector<Finding> out;
    for (const PointToPointLink& link : links) {
        const std::string src = std::to_string(link.src), dst = std::to_string(link.dst);
        if (link.firstMismatch >= 0) {
            const std::size_t k = std::size_t(link.firstMismatch);
            const CollectiveRecord& s = recs[std::size_t(link.sends[k])];
            const CollectiveRecord& r = recs[std::size_t(link.recvs[k])];
            const std::string sentType(ctx.store.strings.view(s.dtype));
            const std::string gotType(ctx.store.strings.view(r.dtype));
            Finding f;
            f.kind = FindingKind::CollectiveMismatch;
            f.symptom = symptoms::kTensorMismatch;
            f.severity = Severity::Error;
            f.confidence = 0.85;
            f.ranks = {std::min(link.src, link.dst), std::max(link.src, link.dst)};
            f.processGroup = link.group;
            f.seq = s.seq;
            f.conditions = {"point_to_point", link.mismatch == MismatchKind::Size
                                                  ? "size_mismatch"
                                                  : "dtype_mismatch"};
            f.detail = "send " + src + "->" + dst + seqText(s) + " sent " +
                       std::to_string(s.inNelems) + " " + sentType + ", its recv received " +
                       std::to_string(receivedNelems(r)) + " " + gotType;
            f.summary = std::string(mismatchKindName(link.mismatch)) + " mismatch in send " + src +
                        "->" + dst + seqText(s) + " and its recv on rank " + dst + seqText(r) +
                        ": sent " + std::to_string(s.inNelems) + " " + sentType + ", received " +
                        std::to_string(receivedNelems(r)) + " " + gotType +
                        "; one side posted the wrong tensor (either rank may be at fault)";
            f.evidence.push_back(ctx.evidenceOf(link.sends[k], "send to rank " + dst));
            f.evidence.push_back(ctx.evidenceOf(link.recvs[k], "recv from rank " + src));
            place(f, s);
            out.push_back(std::move(f));
        }
        if (link.sends.size() == link.recvs.size() || !link.peerRecorded) continue;
        const bool sendsLeft = link.sends.size() > link.recvs.size();
        const int blamed = sendsLeft ? link.dst : link.src;
        const std::int32_t first =
            sendsLeft ? link.sends[link.recvs.size()] : link.recvs[link.sends.size()];
        const CollectiveRecord& c = recs[std::size_t(first)];
        const std::size_t extra = sendsLeft ? link.sends.size() - link.recvs.size()
                                            : link.recvs.size() - link.sends.size();
        Finding f;
        f.kind = FindingKind::Desync;
        f.symptom = symptoms::kHang;
        f.severity = Severity::Error;
        f.confidence = 0.8;
        f.ranks = {blamed};
        f.processGroup = link.group;
        f.seq = c.seq;
        f.conditions = {"point_to_point", "never_issued"};
        f.detail =
            (sendsLeft ? "send " + src + "->" + dst : "recv " + dst + "<-" + src) + seqText(c);
        f.summary = f.detail + " has no matching " + (sendsLeft ? "recv" : "send") + " on rank " +
                    std::to_string(blamed) +
                    (extra > 1 ? " (" + std::to_string(extra) + " unpaired)" : "") +
                    ": the ranks disagree on the point-to-point schedule";
        f.evidence.push_back(ctx.evidenceOf(
            first, (sendsLeft ? "no recv on rank " : "no send on rank ") + std::to_string(blamed)));
        place(f, c);
        out.push_back(std::move(f));
    }
    return out;
}

} // namespace rankscope
