#include "model/store/eventstore.h"

#include <algorithm>
#include <limits>

namespace rankscope {

bool Lane::isUnfinished(std::int64_t event) const
{
    return std::binary_search(unfinished.begin(), unfinished.end(), event);
}

void EventStore::merge(EventStore&& other)
{
    std::vector<StringId> remap(other.strings.size());
    for (std::size_t i = 0; i < remap.size(); ++i)
        remap[i] = strings.intern(other.strings.view(StringId(i)));
    const auto map = [&remap](StringId id) { return remap[std::size_t(id)]; };
    std::vector<RankListId> rankListRemap(other.rankLists.size());
    for (std::size_t i = 0; i < rankListRemap.size(); ++i)
        rankListRemap[i] = rankLists.intern(other.rankLists.ranks(RankListId(i)));
    // Sources of one job name the same things in the same order, and the first source goes into
    // an empty table: the names of their events then keep their ids, and the pass over every
    // event is saved.
    bool identity = true;
    for (std::size_t i = 0; i < remap.size() && identity; ++i)
        identity = remap[i] == StringId(i);
    const int laneBase = int(lanes.size());
    for (Lane& lane : other.lanes) {
        if (!identity)
            for (StringId& id : lane.nameId)
                id = map(id);
        lanes.push_back(std::move(lane));
    }
    for (CollectiveRecord& c : other.collectives) {
        c.op = map(c.op);
        c.processGroupName = map(c.processGroupName);
        c.processGroupDesc = map(c.processGroupDesc);
        c.dtype = map(c.dtype);
        c.reduceOp = map(c.reduceOp);
        c.groupRanks = rankListRemap[std::size_t(c.groupRanks)];
        if (c.laneIndex >= 0) c.laneIndex += laneBase;
        collectives.push_back(std::move(c));
    }
    for (FlowLink& f : other.flows) {
        f.fromLane += laneBase;
        f.toLane += laneBase;
        f.category = map(f.category);
    }
    // Moved rather than copied when possible: flows can be as many as the events.
    if (flows.empty())
        flows = std::move(other.flows);
    else
        flows.insert(flows.end(), other.flows.begin(), other.flows.end());
    other = EventStore();
}

const FlowLink* EventStore::flowInto(int lane, std::int64_t event) const
{
    const auto it =
        std::lower_bound(flows.begin(), flows.end(), std::pair{lane, event},
                         [](const FlowLink& f, const std::pair<int, std::int64_t>& k) {
                             return std::pair{int(f.toLane), std::int64_t(f.toEvent)} < k;
                         });
    return it != flows.end() && it->toLane == lane && std::int64_t(it->toEvent) == event ? &*it
                                                                                         : nullptr;
}

std::int64_t EventStore::eventCount() const
{
    std::int64_t n = 0;
    for (const Lane& lane : lanes)
        n += std::int64_t(lane.size());
    return n;
}

std::int64_t EventStore::eventCountOfRank(int rank) const
{
    std::int64_t n = 0;
    for (const Lane& lane : lanes)
        if (lane.rank == rank) n += std::int64_t(lane.size());
    return n;
}

std::int64_t EventStore::collectiveCountOfRank(int rank) const
{
    return std::count_if(collectives.begin(), collectives.end(),
                         [rank](const CollectiveRecord& c) { return c.rank == rank; });
}

std::pair<std::int64_t, std::int64_t> EventStore::timeRangeNs() const
{
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
    for (const Lane& lane : lanes) {
        if (lane.size() == 0) continue;
        lo = std::min(lo, lane.startNs.front());
        hi = std::max(hi, *std::max_element(lane.endNs.begin(), lane.endNs.end()));
    }
    return lo > hi ? std::pair<std::int64_t, std::int64_t>{0, 0} : std::pair{lo, hi};
}

std::size_t firstEndingAfter(const Lane& lane, std::int64_t tNs)
{
    // Events are sorted by start; an event that starts after tNs ends after it too, so the
    // answer lies at or before the first such start. Walk back over the events that started
    // earlier but still end after tNs (bounded by nesting, not by lane length).
    auto it = std::upper_bound(lane.startNs.begin(), lane.startNs.end(), tNs);
    std::size_t i = std::size_t(it - lane.startNs.begin());
    std::size_t first = i;
    while (i > 0) {
        --i;
        if (lane.endNs[i] > tNs)
            first = i;
        else if (lane.depth[i] == 0)
            break; // a finished top-level span: nothing earlier is open
    }
    return first;
}

std::int64_t innermostAt(const Lane& lane, std::int64_t tNs)
{
    // The latest-starting event that contains t is the innermost one; walking back stops at a
    // finished top-level span, as in firstEndingAfter.
    auto it = std::upper_bound(lane.startNs.begin(), lane.startNs.end(), tNs);
    std::size_t i = std::size_t(it - lane.startNs.begin());
    while (i > 0) {
        --i;
        if (lane.endNs[i] >= tNs) return std::int64_t(i);
        if (lane.depth[i] == 0) break;
    }
    return -1;
}

} // namespace rankscope
