#pragma once

#include "model/store/eventstore.h"

#include <cstdint>
#include <vector>

namespace rankscope {

// One bucket of a level-of-detail row: how much of its time the row was busy, how many events
// start in it and which name covers most of it.
struct LodBucket {
    float busy = 0.0f;       // busy fraction 0..1 of the bucket's span
    std::uint32_t count = 0; // events that start in the bucket
    StringId dominant = 0;   // name of the event that covers the most of the bucket
};

// The pyramid of one depth row of a lane: level k has buckets of `baseNs << k` starting at
// `originNs`; the coarsest level has a single bucket.
struct LodRow {
    std::int64_t originNs = 0;
    std::int64_t baseNs = 1;
    std::vector<std::vector<LodBucket>> levels;

    std::int64_t bucketNs(int level) const { return baseNs << level; }
    // The coarsest level whose bucket is at most `nsPerPx` (one bucket or more per pixel); level 0
    // when even that is wider than a pixel, -1 when the row is empty.
    int levelFor(double nsPerPx) const;
};

// Built once at load time for every lane (one LodRow per depth), never while painting.
struct LaneLod {
    std::vector<LodRow> rows; // index = depth
};

// Level 0 holds about kEventsPerBaseBucket events per bucket, so the pyramid costs a fraction of
// the events' own memory while a frame drawn from it costs O(pixels).
inline constexpr std::int64_t kEventsPerBaseBucket = 4;
inline constexpr std::int64_t kMinBaseBuckets = 64;

LaneLod buildLaneLod(const Lane& lane);
// One LaneLod per lane of the store, same index; lanes are built in parallel.
std::vector<LaneLod> buildLaneLods(const EventStore& store);
std::size_t memoryBytes(const std::vector<LaneLod>& lods);

} // namespace rankscope
