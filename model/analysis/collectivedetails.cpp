#include "model/analysis/collectivedetails.h"

#include "model/trace/traceread.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace rankscope {

namespace {

using State = CollectiveRecord::State;

bool contains(const std::vector<int>& ranks, int rank)
{
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

// A row of a rank with a record, its state as the record says.
CollectiveRankRow recordRow(const TraceRead& read, std::size_t index)
{
    const EventStore& store = read.events;
    const CollectiveRecord& c = store.collectives[index];
    CollectiveRankRow row;
    row.rank = c.rank;
    row.record = std::int32_t(index);
    row.op = std::string(store.strings.view(c.op));
    row.dtype = std::string(store.strings.view(c.dtype));
    row.inNelems = c.inNelems;
    row.outNelems = c.outNelems;
    std::tie(row.enterNs, row.exitNs) = collectiveEnterExit(c);
    row.state = c.state == State::Completed ? CollectiveRankState::Completed
                : c.state == State::Started ? CollectiveRankState::Started
                                            : CollectiveRankState::Issued;
    if (c.stateUnknown) {
        row.state = CollectiveRankState::LoggedOnly;
        const QList<SourceFile>& sources = read.folder.sources();
        if (c.sourceIndex >= 0 && c.sourceIndex < sources.size()) {
            row.note = sources[c.sourceIndex].relativePath.toStdString();
            if (c.sourceLine > 0) row.note.append(1, ':').append(std::to_string(c.sourceLine));
        }
    }
    return row;
}

// What a member with no record of the group left instead.
std::string leftInstead(const RankPresence& presence, int rank)
{
    const auto it = presence.files.find(rank);
    if (it == presence.files.end() || it->second == 0) return "no file at all";
    return "only " + describeRankFiles(it->second);
}

// The hang or desync the analysis reports on this collective (point-to-point findings count
// their own ops, not the group's), or nullptr.
const Finding* waitFinding(const AnalysisResult& analysis, const CollectiveGroup& g,
                           const MatchedCollective& row)
{
    for (const Finding& f : analysis.findings) {
        if (f.kind != FindingKind::Hang && f.kind != FindingKind::Desync) continue;
        if (f.processGroup != g.name || f.seq != row.seq) continue;
        if (std::find(f.conditions.begin(), f.conditions.end(), "point_to_point") !=
            f.conditions.end())
            continue;
        return &f;
    }
    return nullptr;
}

} // namespace

std::pair<std::int64_t, std::int64_t> collectiveEnterExit(const CollectiveRecord& c)
{
    return {c.issueStartNs >= 0 ? c.issueStartNs : c.execStartNs,
            c.execEndNs >= 0 ? c.execEndNs : c.issueEndNs};
}

const char* collectiveRankStateName(CollectiveRankState state)
{
    switch (state) {
    case CollectiveRankState::Completed:
        return "completed";
    case CollectiveRankState::Started:
        return "started";
    case CollectiveRankState::Issued:
        return "issued";
    case CollectiveRankState::LoggedOnly:
        return "logged_only";
    case CollectiveRankState::WaitedFor:
        return "waited_for";
    case CollectiveRankState::NeverArrived:
        return "never_arrived";
    case CollectiveRankState::NoRecord:
        return "no_record";
    }
    return "";
}

CollectiveDetails collectiveDetails(const TraceRead& read, const AnalysisResult& analysis,
                                    int group, int collective)
{
    CollectiveDetails out;
    if (group < 0 || std::size_t(group) >= analysis.groups.size()) return out;
    const CollectiveGroup& g = analysis.groups[std::size_t(group)];
    if (collective < 0 || std::size_t(collective) >= g.collectives.size()) return out;
    const MatchedCollective& row = g.collectives[std::size_t(collective)];
    const RankPresence& presence = analysis.presence;

    bool someoneNeverArrived = false;
    for (std::size_t slot = 0; slot < g.members.size(); ++slot) {
        if (row.records[slot] >= 0) {
            out.rows.push_back(recordRow(read, std::size_t(row.records[slot])));
            continue;
        }
        // A member whose files record the group's collectives and hold none of this one.
        CollectiveRankRow r;
        r.rank = g.members[slot];
        r.state = CollectiveRankState::NeverArrived;
        someoneNeverArrived = true;
        out.rows.push_back(std::move(r));
    }

    // The members that recorded nothing of the group: those its sources list, else the ranks of
    // its stated size (the job's world size when it states none) that are not among the above.
    std::set<int> listed(g.members.begin(), g.members.end());
    std::vector<int> unrecorded = g.membersFromSource ? g.absentMembers : g.unrecorded;
    if (!g.membersFromSource) {
        int size = 0;
        for (std::int32_t i : row.records)
            if (i >= 0) size = std::max(size, read.events.collectives[std::size_t(i)].groupSize);
        const int world = presence.worldSize > 0 ? presence.worldSize : analysis.statedWorldSize;
        if (size <= 0) size = world;
        if (size == world) {
            for (int r = 0; r < size; ++r)
                unrecorded.push_back(r);
        } else if (std::size_t(size) > listed.size() + unrecorded.size()) {
            const std::size_t more = std::size_t(size) - listed.size() - unrecorded.size();
            out.unnamedMembers = std::to_string(more) + " more member" + (more > 1 ? "s" : "") +
                                 " of the group (size " + std::to_string(size) +
                                 ") left no record of it; the sources do not say which ranks";
        }
    }
    for (int r : unrecorded) {
        if (!listed.insert(r).second) continue;
        CollectiveRankRow noRecord;
        noRecord.rank = r;
        noRecord.note = leftInstead(presence, r);
        out.rows.push_back(std::move(noRecord));
    }

    // The ranks a hang or desync finding does not blame waited for those it blames: a record that
    // started and did not complete, or one whose span ended while a member never arrived (the
    // timeout ended it; the collective cannot have completed without that member). A traced call
    // with no execution blocked in it (gloo runs the collective inside the call), while a dump's
    // call that was enqueued and never started waited for nothing inside it.
    if (const Finding* f = waitFinding(analysis, g, row))
        for (CollectiveRankRow& r : out.rows) {
            if (r.record < 0 || contains(f->ranks, r.rank)) continue;
            const CollectiveRecord& c = read.events.collectives[std::size_t(r.record)];
            const bool waited = r.state == CollectiveRankState::Started ||
                                (r.state == CollectiveRankState::Issued && c.laneIndex >= 0) ||
                                (r.state == CollectiveRankState::Completed && someoneNeverArrived);
            if (!waited) continue;
            r.state = CollectiveRankState::WaitedFor;
            r.waitedFor = f->ranks;
            r.finding = f->id;
        }
    std::sort(
        out.rows.begin(), out.rows.end(),
        [](const CollectiveRankRow& a, const CollectiveRankRow& b) { return a.rank < b.rank; });
    return out;
}

CollectiveDetails collectiveDetailsOfRecords(const TraceRead& read,
                                             const std::vector<std::size_t>& records)
{
    CollectiveDetails out;
    for (std::size_t i : records)
        if (i < read.events.collectives.size()) out.rows.push_back(recordRow(read, i));
    return out;
}

} // namespace rankscope
