#include "model/store/eventstore.h"

#include <algorithm>
#include <limits>

namespace rankscope {

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

} // namespace rankscope
