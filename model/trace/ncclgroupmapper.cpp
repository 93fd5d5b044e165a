#include "model/trace/ncclgroupmapper.h"

#include "model/trace/kinetocollectives.h"
#include "model/trace/ncclcollectives.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

namespace rankscope {

namespace {

using Records = std::vector<std::size_t>; // indices into EventStore::collectives

// How a communicator's launches are numbered to meet c10d's seq (see the header).
enum class Numbering : std::uint8_t { CollectivesOnly, OpCount };
constexpr std::array<Numbering, 2> kNumberings = {Numbering::CollectivesOnly, Numbering::OpCount};

// What a launch or a c10d record moved, in the fields both sources give.
struct Shape {
    StringId op = 0;
    std::int64_t inNelems = -1, outNelems = -1;
    StringId dtype = 0;
};

// The lines of one opCount: one NCCL launch (a single call, or a ncclGroupStart/End batch).
struct Launch {
    std::int64_t opCount = -1;
    std::size_t begin = 0, end = 0; // into the rank's records of the communicator
    // Its number among the rank's collective launches, counted on from the first opCount.
    std::int64_t collectiveOrdinal = -1;
    Shape shape;

    std::int64_t seq(Numbering n) const
    {
        return (n == Numbering::CollectivesOnly ? collectiveOrdinal : opCount) + 1;
    }
};

// One rank's records of one NCCL communicator, in opCount order, cut into launches.
struct RankComm {
    Records records;
    std::vector<Launch> launches; // collective launches only
    bool numberingsAgree = true;  // both numberings give every launch the same seq
};

// Sums a launch's lines the way Flight Recorder sums a coalescing block: one op when all
// lines share it, "coalesced" otherwise; a send and a recv with every member is c10d's
// all_to_all, which NCCL before 2.28 runs as such a batch.
Shape shapeOf(EventStore& store, const Records& records, std::size_t begin, std::size_t end,
              int groupSize, bool* pointToPoint)
{
    const auto& recs = store.collectives;
    Shape s;
    s.op = recs[records[begin]].op;
    s.dtype = recs[records[begin]].dtype;
    s.inNelems = s.outNelems = 0;
    int sends = 0, recvs = 0;
    bool sameOp = true;
    for (std::size_t k = begin; k < end; ++k) {
        const CollectiveRecord& c = recs[records[k]];
        const std::string_view op = store.strings.view(c.op);
        const bool send = op == "send", recv = op == "recv";
        sends += send;
        recvs += recv;
        sameOp = sameOp && c.op == s.op;
        const auto add = [](std::int64_t& total, std::int64_t n) {
            total = total < 0 || n < 0 ? -1 : total + n;
        };
        // An all_to_all's input is what it sends, its output what it receives.
        if (!recv) add(s.inNelems, c.inNelems);
        if (!send) add(s.outNelems, c.outNelems);
    }
    const bool onlyPointToPoint = std::size_t(sends + recvs) == end - begin;
    const bool allToAll =
        onlyPointToPoint && groupSize > 0 && sends == groupSize && recvs == groupSize;
    *pointToPoint = onlyPointToPoint && !allToAll;
    if (allToAll)
        s.op = store.strings.intern("all_to_all");
    else if (!sameOp)
        s.op = store.strings.intern("coalesced");
    return s;
}

RankComm launchesOf(EventStore& store, Records records)
{
    const auto& recs = store.collectives;
    const auto byOpCount = [&](std::size_t a, std::size_t b) { return recs[a].seq < recs[b].seq; };
    if (!std::is_sorted(records.begin(), records.end(), byOpCount))
        std::stable_sort(records.begin(), records.end(), byOpCount);
    RankComm rc;
    rc.records = std::move(records);
    const Records& r = rc.records;
    std::int64_t ordinal = r.empty() ? 0 : recs[r.front()].seq;
    for (std::size_t begin = 0, end; begin < r.size(); begin = end) {
        end = begin + 1;
        while (end < r.size() && recs[r[end]].seq == recs[r[begin]].seq)
            ++end;
        bool pointToPoint = false;
        Launch l;
        l.opCount = recs[r[begin]].seq;
        l.begin = begin;
        l.end = end;
        l.shape = shapeOf(store, r, begin, end, recs[r[begin]].groupSize, &pointToPoint);
        if (pointToPoint) continue;
        l.collectiveOrdinal = ordinal++;
        rc.numberingsAgree = rc.numberingsAgree && l.collectiveOrdinal == l.opCount;
        rc.launches.push_back(l);
    }
    return rc;
}

// A c10d group as a rank's records name it: the matcher's key, members sorted as it sorts them.
struct GroupKey {
    StringId name = 0;
    std::vector<int> ranks;

    static GroupKey of(const EventStore& store, const CollectiveRecord& c)
    {
        GroupKey key{c.processGroupName, store.rankLists.ranks(c.groupRanks)};
        std::sort(key.ranks.begin(), key.ranks.end());
        return key;
    }

    bool operator<(const GroupKey& o) const
    {
        return name != o.name ? name < o.name : ranks < o.ranks;
    }
};

// One rank's c10d records of one group.
struct C10dGroup {
    Records records; // numbered by their source: one per seq, in seq order
    // Numbered by their reader instead (a trace without Seq), each source's from 1 at the first
    // collective it saw: one window per source, in its order.
    std::vector<Records> windows;
    int groupSize = -1;
    StringId desc = 0;
};

// Whether a c10d record and an NCCL launch are the same call, comparing what both give.
bool sameCall(const EventStore& store, const CollectiveRecord& c, const Shape& launch)
{
    if (c.op != launch.op) {
        // c10d's barrier is an all_reduce of one element; its sizes are c10d's own choice.
        return store.strings.view(c.op) == "barrier" &&
               store.strings.view(launch.op) == "all_reduce";
    }
    const auto agree = [](std::int64_t a, std::int64_t b) { return a < 0 || b < 0 || a == b; };
    return agree(c.inNelems, launch.inNelems) && agree(c.outNelems, launch.outNelems) &&
           (c.dtype == launch.dtype || c.dtype == 0 || launch.dtype == 0 ||
            NcclCollectives::launchedAs(store.strings.view(c.dtype),
                                        store.strings.view(launch.dtype)));
}

// Walks the group's records and the launches in order, calling `visit(record, launch)` for
// each record whose seq is within the log's range with the launch the numbering gives that
// seq (nullptr: none), until `visit` returns false. Returns how many it visited, or -1 when
// `visit` stopped it.
template <typename Visit>
std::int64_t walkPairs(const EventStore& store, const RankComm& rc, const C10dGroup& g, Numbering n,
                       Visit&& visit)
{
    if (rc.launches.empty()) return 0;
    const std::int64_t first = rc.launches.front().seq(n), last = rc.launches.back().seq(n);
    std::int64_t visited = 0;
    std::size_t l = 0;
    for (const std::size_t i : g.records) {
        const CollectiveRecord& c = store.collectives[i];
        if (c.seq < first || c.seq > last) continue;
        ++visited;
        while (l < rc.launches.size() && rc.launches[l].seq(n) < c.seq)
            ++l;
        const bool found = l < rc.launches.size() && rc.launches[l].seq(n) == c.seq;
        if (!visit(c, found ? &rc.launches[l] : nullptr)) return -1;
    }
    return visited;
}

// Whether the group's records are the launches the numbering names: a c10d seq within the
// log's range must have a launch of that number that is the same call; seqs outside the range
// are the trace's or dump's alone. At least one must be compared.
bool fits(const EventStore& store, const RankComm& rc, const C10dGroup& g, Numbering n)
{
    return walkPairs(store, rc, g, n, [&](const CollectiveRecord& c, const Launch* l) {
               return l && sameCall(store, c, l->shape);
           }) > 0;
}

// What placeWindow returns for a window it does not place.
constexpr std::int64_t kFitsNowhere = -1; // the window is not of this communicator
constexpr std::int64_t kPlaceUnknown = -2;

// Where a window of records numbered by their reader starts among the rank's collective
// launches (an index into RankComm::launches), if that can be told. The window holds every
// collective of the group from its first to its last, so its k-th record is the k-th launch
// from its start; where the start is, the reader's count does not say, since the trace may
// have begun at any step. Only the launches can: over every start at which the window
// overlaps the log, exactly one may have each overlapping record the same call as its launch
// (training repeats its steps, so a window of steady steps fits at every step and is not
// placed), and the window must lie within the log, so that every record's seq comes from a
// launch it was compared with. The log must hold the communicator's first launch (opCount 0),
// or the window might begin before it.
std::int64_t placeWindow(const EventStore& store, const RankComm& rc, const Records& window)
{
    const auto& recs = store.collectives;
    if (rc.records.empty() || recs[rc.records.front()].seq != 0) return kPlaceUnknown;
    const std::size_t length = window.size(), count = rc.launches.size();
    std::int64_t placed = kFitsNowhere;
    for (std::size_t start = 0; start < count; ++start) {
        bool same = true;
        for (std::size_t k = 0; same && k < length && start + k < count; ++k)
            same = sameCall(store, recs[window[k]], rc.launches[start + k].shape);
        if (!same) continue;
        if (placed >= 0) return kPlaceUnknown;
        placed = std::int64_t(start);
    }
    return placed >= 0 && std::size_t(placed) + length > count ? kPlaceUnknown : placed;
}

// Whether a c10d group can be the communicator by its members: a listed membership must hold
// every rank that joined the communicator and be as large as it; a group without a list is the
// world, or its size where the source gave one.
bool sameMembers(const GroupKey& key, const C10dGroup& g, const std::vector<int>& commMembers,
                 int commSize, std::size_t worldSize)
{
    if (!key.ranks.empty()) {
        return std::includes(key.ranks.begin(), key.ranks.end(), commMembers.begin(),
                             commMembers.end()) &&
               (commSize < 0 || std::size_t(commSize) == key.ranks.size());
    }
    const std::size_t size = g.groupSize >= 0 ? std::size_t(g.groupSize) : worldSize;
    return commMembers.size() <= size && (commSize < 0 || std::size_t(commSize) == size);
}

// Whether a rank that has only its log can take the numbering the traced ranks agree on, which
// nothing checks against c10d on it: its lines must name the communicator's size, and unless
// c10d's seq is opCount itself its log must hold the communicator's first launch (opCount 0),
// since a lost point-to-point launch before its first line would shift its collectives' count.
bool takesTracedNumbering(const EventStore& store, const RankComm& rc, int commSize,
                          bool seqIsOpCount)
{
    const auto& recs = store.collectives;
    const bool sameSize =
        commSize > 0 && std::all_of(rc.records.begin(), rc.records.end(),
                                    [&](std::size_t i) { return recs[i].groupSize == commSize; });
    return sameSize && !rc.records.empty() && (seqIsOpCount || recs[rc.records.front()].seq == 0);
}

using C10dGroupsOfRank = std::map<int, std::map<GroupKey, C10dGroup>>;

// One source lists a group's members (a dump, a trace's pg_config), another of the same name
// does not: the matcher takes the unlisted one as the world, so where some rank lists the
// world under that name, a rank's unlisted records of it (whose size, if given, is the world's)
// join the listed group, and the communicator can be that one group.
void foldUnlistedWorldGroups(C10dGroupsOfRank& c10dOf, const std::set<int>& world)
{
    const std::vector<int> worldRanks(world.begin(), world.end());
    std::set<StringId> listedAsWorld;
    for (const auto& [rank, groups] : c10dOf)
        for (const auto& [key, g] : groups)
            if (key.ranks == worldRanks) listedAsWorld.insert(key.name);
    for (auto& [rank, groups] : c10dOf) {
        for (auto it = groups.begin(); it != groups.end();) {
            const bool worldSized =
                it->second.groupSize < 0 || std::size_t(it->second.groupSize) == world.size();
            if (!it->first.ranks.empty() || !worldSized || !listedAsWorld.count(it->first.name)) {
                ++it;
                continue;
            }
            C10dGroup& listed = groups[{it->first.name, worldRanks}];
            const C10dGroup& unlisted = it->second;
            listed.records.insert(listed.records.end(), unlisted.records.begin(),
                                  unlisted.records.end());
            listed.windows.insert(listed.windows.end(), unlisted.windows.begin(),
                                  unlisted.windows.end());
            if (listed.groupSize < 0) listed.groupSize = unlisted.groupSize;
            if (listed.desc == 0) listed.desc = unlisted.desc;
            it = groups.erase(it);
        }
    }
}

} // namespace

NcclGroupMapper::Result NcclGroupMapper::map(EventStore& store, std::size_t firstNcclRecord)
{
    Result result;
    auto& recs = store.collectives;
    std::set<int> world;
    for (std::size_t i = 0; i < recs.size(); ++i)
        if (recs[i].rank >= 0 && (i == 0 || recs[i - 1].rank != recs[i].rank))
            world.insert(recs[i].rank);
    for (const Lane& lane : store.lanes)
        if (lane.rank >= 0) world.insert(lane.rank);

    // Per rank, the c10d groups of records numbered by their source or by their reader.
    C10dGroupsOfRank c10dOf;
    std::vector<std::int8_t> pointToPoint(store.strings.size(), -1);
    // Consecutive records of a rank are mostly in one group: skip the key lookup.
    const CollectiveRecord* last = nullptr;
    C10dGroup* lastGroup = nullptr;
    for (std::size_t i = 0; i < firstNcclRecord && i < recs.size(); ++i) {
        const CollectiveRecord& c = recs[i];
        if (c.rank < 0) continue;
        // A reader's count places a record in a communicator's calls only when it counts the
        // calls of one process group: a named group that gives its size, as record_param_comms
        // does (Horovod's per-tensor negotiations name a tensor and give no size).
        if (!c.seqFromSource && (c.processGroupName == 0 || c.groupSize < 0)) continue;
        std::int8_t& p2p = pointToPoint[std::size_t(c.op)];
        if (p2p < 0) p2p = isPointToPointOp(store.strings.view(c.op)) ? 1 : 0;
        if (p2p == 1) continue;
        if (!last || last->rank != c.rank || last->processGroupName != c.processGroupName ||
            last->groupRanks != c.groupRanks) {
            lastGroup = &c10dOf[c.rank][GroupKey::of(store, c)];
            last = &c;
        }
        C10dGroup& g = *lastGroup;
        if (c.seqFromSource) {
            g.records.push_back(i);
        } else {
            // Each source counts from 1: a count that does not go up is another source's.
            if (g.windows.empty() || recs[g.windows.back().back()].seq >= c.seq)
                g.windows.emplace_back();
            g.windows.back().push_back(i);
        }
        if (g.groupSize < 0) g.groupSize = c.groupSize;
        if (g.desc == 0) g.desc = c.processGroupDesc;
    }
    foldUnlistedWorldGroups(c10dOf, world);
    for (auto& [rank, groups] : c10dOf)
        for (auto& [key, g] : groups) {
            // Several sources of the rank may hold a seq: the first speaks for it.
            std::stable_sort(g.records.begin(), g.records.end(), [&](std::size_t a, std::size_t b) {
                return recs[a].seq < recs[b].seq;
            });
            g.records.erase(std::unique(g.records.begin(), g.records.end(),
                                        [&](std::size_t a, std::size_t b) {
                                            return recs[a].seq == recs[b].seq;
                                        }),
                            g.records.end());
        }

    // Per communicator, per rank, its NCCL records.
    std::map<StringId, std::map<int, Records>> ncclOf;
    last = nullptr;
    Records* lastRecords = nullptr;
    for (std::size_t i = firstNcclRecord; i < recs.size(); ++i) {
        const CollectiveRecord& c = recs[i];
        if (!c.seqFromSource) continue; // a line whose opCount did not parse has no place
        if (!last || last->rank != c.rank || last->processGroupName != c.processGroupName) {
            lastRecords = &ncclOf[c.processGroupName][c.rank];
            last = &c;
        }
        lastRecords->push_back(i);
    }

    for (auto& [comm, byRank] : ncclOf) {
        const CollectiveRecord& any = recs[byRank.begin()->second.front()];
        const std::vector<int> members =
            store.rankLists.ranks(any.groupRanks); // sorted by NcclCollectives
        const int size = any.groupSize;
        std::map<int, RankComm> rankComms;
        // Per (group, numbering): how many ranks' records fit it.
        std::map<std::pair<GroupKey, Numbering>, std::size_t> fittingRanks;
        std::size_t ranksWithFit = 0, ranksWithCandidates = 0;
        // A window of the traces fits the log, but where cannot be told: the log is of a group
        // it stays apart from.
        bool placeUnknown = false;
        int unplacedRank = -1, contradictingRank = -1; // the first such, for the reason
        std::vector<int> logOnly; // ranks without c10d records of a group that could be it
        for (auto& [rank, records] : byRank) {
            const RankComm& rc = rankComms[rank] = launchesOf(store, std::move(records));
            bool anyCandidate = false, anyFit = false;
            if (const auto groups = c10dOf.find(rank); groups != c10dOf.end()) {
                for (const auto& [key, g] : groups->second) {
                    if (!sameMembers(key, g, members, size, world.size())) continue;
                    anyCandidate = true;
                    bool windowsPlaced = true;
                    for (const Records& w : g.windows) {
                        const std::int64_t start = placeWindow(store, rc, w);
                        windowsPlaced = windowsPlaced && start >= 0;
                        if (start == kPlaceUnknown && !placeUnknown) unplacedRank = rank;
                        placeUnknown = placeUnknown || start == kPlaceUnknown;
                    }
                    if (!windowsPlaced) continue;
                    for (const Numbering n : kNumberings) {
                        // Placed windows fit either numbering: only a source's seqs tell.
                        if (!g.records.empty() && !fits(store, rc, g, n)) continue;
                        ++fittingRanks[{key, n}];
                        anyFit = true;
                    }
                }
            }
            ranksWithCandidates += anyCandidate;
            ranksWithFit += anyFit;
            if (anyCandidate && !anyFit && contradictingRank < 0) contradictingRank = rank;
            if (!anyCandidate) logOnly.push_back(rank);
        }
        // No c10d counterpart: a group of its own, as before.
        if (ranksWithFit == 0 && !placeUnknown) continue;
        const std::string commName(store.strings.view(comm));
        const auto keepApart = [&](std::string reason) {
            result.separate.push_back({commName, std::move(reason)});
        };
        // A rank's c10d records contradict its log, or cannot be placed in it.
        if (placeUnknown) {
            keepApart("rank " + std::to_string(unplacedRank) +
                      "'s trace has no Seq and fits its NCCL log at several places, or only "
                      "past the log's end");
            continue;
        }
        if (ranksWithFit < ranksWithCandidates) {
            keepApart("rank " + std::to_string(contradictingRank) +
                      "'s c10d records do not fit its NCCL log: no numbering of opCount gives "
                      "them the op, element count and dtype of the launches they name");
            continue;
        }
        // The (group, numbering) pairs every rank fits; a rank that also fits another group
        // is settled by the others.
        std::set<GroupKey> agreedKeys;
        std::set<Numbering> agreedNumberings;
        for (const auto& [pair, count] : fittingRanks) {
            if (count != ranksWithFit) continue;
            agreedKeys.insert(pair.first);
            agreedNumberings.insert(pair.second);
        }
        if (agreedKeys.size() != 1) {
            keepApart(agreedKeys.empty()
                          ? std::string("no one c10d group fits its NCCL log on every rank")
                          : std::to_string(agreedKeys.size()) +
                                " c10d groups fit its NCCL log on every rank");
            continue;
        }
        const GroupKey& key = *agreedKeys.begin();
        // Every window of the group is renumbered from the launches it is placed at, so that
        // no record of the group keeps a count the others do not share: a window on a rank
        // without the communicator's log, or one that cannot be placed, leaves it as it is.
        struct Placement {
            int rank;
            const Records* window;
            std::int64_t start;
        };
        std::vector<Placement> placements;
        bool numberedBySource = false;
        int unplacedWindowRank = -1;
        for (const auto& [rank, groups] : c10dOf) {
            const auto g = groups.find(key);
            if (g == groups.end()) continue;
            numberedBySource = numberedBySource || !g->second.records.empty();
            const auto rc = rankComms.find(rank);
            for (const Records& w : g->second.windows) {
                placements.push_back(
                    {rank, &w,
                     rc == rankComms.end() ? kFitsNowhere : placeWindow(store, rc->second, w)});
                if (placements.back().start < 0 && unplacedWindowRank < 0)
                    unplacedWindowRank = rank;
            }
        }
        // Where the two numberings part, only one of them may fit; when no source numbers the
        // group, every record of it takes the launches' numbering and either would do.
        const bool numberingsAgree =
            std::all_of(rankComms.begin(), rankComms.end(),
                        [](const auto& rc) { return rc.second.numberingsAgree; });
        if (unplacedWindowRank >= 0) {
            keepApart("rank " + std::to_string(unplacedWindowRank) +
                      "'s trace has no Seq and no NCCL log of this communicator to be placed in");
            continue;
        }
        if (agreedNumberings.size() > 1 && !numberingsAgree && numberedBySource) {
            keepApart("both numberings of opCount (collectives counted from 1, opCount itself) "
                      "fit, and they give different seqs");
            continue;
        }
        const Numbering numbering = *agreedNumberings.begin();
        const bool seqIsOpCount = agreedNumberings.count(Numbering::CollectivesOnly) == 0;
        if (const auto unnumbered = std::find_if(
                logOnly.begin(), logOnly.end(),
                [&](int rank) {
                    return !takesTracedNumbering(store, rankComms[rank], size, seqIsOpCount);
                });
            unnumbered != logOnly.end()) {
            keepApart("rank " + std::to_string(*unnumbered) +
                      " has only its NCCL log, which does not give the communicator's size or "
                      "does not start at its first launch");
            continue;
        }
        StringId desc = 0;
        // Where c10d spells a launch's dtype otherwise (Bool for NCCL's uint8), its spelling,
        // so that a rank with only the log does not differ in name from the traced ranks.
        std::unordered_map<std::int64_t, StringId> c10dDtypeAt;
        for (const auto& [rank, groups] : c10dOf) {
            const auto g = groups.find(key);
            if (g == groups.end()) continue;
            if (desc == 0) desc = g->second.desc;
            if (const auto rc = rankComms.find(rank); rc != rankComms.end())
                walkPairs(store, rc->second, g->second, numbering,
                          [&](const CollectiveRecord& c, const Launch* l) {
                              if (l && c.dtype != 0 && c.dtype != l->shape.dtype)
                                  c10dDtypeAt.try_emplace(c.seq, c.dtype);
                              return true;
                          });
        }
        for (const Placement& p : placements) {
            const std::vector<Launch>& launches = rankComms[p.rank].launches;
            for (std::size_t k = 0; k < p.window->size(); ++k) {
                CollectiveRecord& c = recs[(*p.window)[k]];
                const Launch& l = launches[std::size_t(p.start) + k];
                c.seq = l.seq(numbering);
                if (c.dtype != 0 && c.dtype != l.shape.dtype)
                    c10dDtypeAt.try_emplace(c.seq, c.dtype);
            }
        }
        const RankListId keyRanks = store.rankLists.intern(key.ranks);
        for (const auto& [rank, rc] : rankComms) {
            for (const Launch& l : rc.launches) {
                for (std::size_t k = l.begin; k < l.end; ++k) {
                    CollectiveRecord& c = recs[rc.records[k]];
                    c.processGroupName = key.name;
                    c.processGroupDesc = desc;
                    c.groupRanks = keyRanks;
                    c.seq = l.seq(numbering);
                    ++result.mappedRecords;
                }
                // The launch's first line stands for the batch, as one c10d record does.
                CollectiveRecord& first = recs[rc.records[l.begin]];
                first.op = l.shape.op;
                first.inNelems = l.shape.inNelems;
                first.outNelems = l.shape.outNelems;
                if (const auto d = c10dDtypeAt.find(l.seq(numbering));
                    d != c10dDtypeAt.end() &&
                    NcclCollectives::launchedAs(store.strings.view(d->second),
                                                store.strings.view(first.dtype)))
                    first.dtype = d->second;
            }
        }
        ++result.mappedCommunicators;
    }
    return result;
}

} // namespace rankscope
