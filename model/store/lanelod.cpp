#include "model/store/lanelod.h"

#include "model/store/parallelfor.h"

#include <algorithm>
#include <bit>

namespace rankscope {

int LodRow::levelFor(double nsPerPx) const
{
    if (levels.empty()) return -1;
    int level = 0;
    while (level + 1 < int(levels.size()) && double(bucketNs(level + 1)) <= nsPerPx)
        ++level;
    return level;
}

namespace {

LodRow buildRow(const Lane& lane, const std::vector<std::size_t>& events)
{
    LodRow row;
    if (events.empty()) return row;
    std::int64_t lo = lane.startNs[events.front()];
    std::int64_t hi = lo + 1;
    for (std::size_t i : events)
        hi = std::max(hi, lane.endNs[i]);
    row.originNs = lo;
    const std::int64_t span = hi - lo;
    // At least kMinBaseBuckets buckets even for a sparse row: a bucket much wider than the row
    // would spread its few events' busy time over time where nothing ran.
    const std::int64_t perBucket = std::max<std::int64_t>(
        1, std::min(span * kEventsPerBaseBucket / std::int64_t(events.size()),
                    span / kMinBaseBuckets));
    row.baseNs = std::int64_t(std::bit_ceil(std::uint64_t(perBucket)));
    const std::size_t n0 = std::size_t((span + row.baseNs - 1) / row.baseNs);

    std::vector<LodBucket> level0(n0);
    std::vector<std::int64_t> bestCover(n0, 0);
    std::vector<double> busyNs(n0, 0.0);
    const std::int64_t base = row.baseNs;
    for (std::size_t i : events) {
        const std::int64_t s = lane.startNs[i] - lo;
        const std::int64_t e = std::max(lane.endNs[i] - lo, s);
        std::size_t b = std::size_t(s / base);
        level0[b].count++;
        // Events of one row do not overlap, so the buckets walked here sum to O(buckets + events).
        for (; b < n0 && std::int64_t(b) * base < e; ++b) {
            const std::int64_t b0 = std::int64_t(b) * base;
            const std::int64_t cover = std::min(e, b0 + base) - std::max(s, b0);
            busyNs[b] += double(cover);
            if (cover > bestCover[b]) {
                bestCover[b] = cover;
                level0[b].dominant = lane.nameId[i];
            }
        }
        if (e == s && bestCover[std::size_t(s / base)] == 0)
            level0[std::size_t(s / base)].dominant = lane.nameId[i];
    }
    for (std::size_t b = 0; b < n0; ++b)
        level0[b].busy = float(std::min(1.0, busyNs[b] / double(base)));
    row.levels.push_back(std::move(level0));

    while (row.levels.back().size() > 1) {
        const std::vector<LodBucket>& fine = row.levels.back();
        std::vector<LodBucket> coarse((fine.size() + 1) / 2);
        for (std::size_t b = 0; b < coarse.size(); ++b) {
            const LodBucket& a = fine[2 * b];
            const LodBucket none;
            const LodBucket& c = 2 * b + 1 < fine.size() ? fine[2 * b + 1] : none;
            coarse[b].busy = (a.busy + c.busy) / 2.0f;
            coarse[b].count = a.count + c.count;
            // The finer bucket that is busier wins: an approximation of the name covering most of
            // the coarse bucket that needs no per-name table. On a tie (both idle, say, one
            // holding an instant event) the one where an event starts names it.
            const bool second = c.busy > a.busy || (c.busy == a.busy && a.count == 0);
            coarse[b].dominant = second ? c.dominant : a.dominant;
        }
        row.levels.push_back(std::move(coarse));
    }
    return row;
}

} // namespace

LaneLod buildLaneLod(const Lane& lane)
{
    LaneLod lod;
    if (lane.size() == 0) return lod;
    std::vector<std::vector<std::size_t>> byDepth(std::size_t(lane.maxDepth) + 1);
    for (std::size_t i = 0; i < lane.size(); ++i) {
        const std::size_t d = lane.depth[i];
        if (d >= byDepth.size()) byDepth.resize(d + 1);
        byDepth[d].push_back(i);
    }
    lod.rows.reserve(byDepth.size());
    for (const auto& events : byDepth)
        lod.rows.push_back(buildRow(lane, events));
    return lod;
}

std::vector<LaneLod> buildLaneLods(const EventStore& store)
{
    std::vector<LaneLod> lods(store.lanes.size());
    parallelFor(lods.size(),
                [&](std::size_t i, std::size_t) { lods[i] = buildLaneLod(store.lanes[i]); });
    return lods;
}

std::size_t memoryBytes(const std::vector<LaneLod>& lods)
{
    std::size_t bytes = lods.capacity() * sizeof(LaneLod);
    for (const LaneLod& lod : lods)
        for (const LodRow& row : lod.rows) {
            bytes += sizeof(LodRow);
            for (const auto& level : row.levels)
                bytes += level.capacity() * sizeof(LodBucket) + sizeof(level);
        }
    return bytes;
}

} // namespace rankscope
