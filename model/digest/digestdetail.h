#pragma once

#include <cstdint>

namespace rankscope::Digest {

// What a digest says of where its detail is exact (digest.h; kept apart so that a session can
// carry it without the rest of the digest).

// A full-detail window of a digest: on `rank`'s lanes, every event of the trace that overlaps
// [startNs, endNs] (the rank's own clock) is in the digest. Around finding `finding` (its index
// in the diagnosis' findings), or -1: the last events of the rank (Digest::kTailWindowNs).
struct Window {
    int finding = -1;
    int rank = -1;
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
    std::int64_t events = 0; // the trace's events in it
    bool narrowed = false;   // the cap narrowed it around the finding's start
    bool operator==(const Window&) const = default;

    // Every field above in their order, as f(name, field) on `self` (a window, const or not):
    // the one list of the fields that the digest writes and reads.
    template <typename Self, typename F> static constexpr void forEachField(Self& self, F&& f)
    {
        f("finding", self.finding);
        f("rank", self.rank);
        f("startNs", self.startNs);
        f("endNs", self.endNs);
        f("events", self.events);
        f("narrowed", self.narrowed);
    }
};

// How one rank's lanes were reduced: events of depth <= 1 no longer than `resolutionNs` were left
// out (0: none of them; deeper events are left out at any resolution), `eventsKept` of
// `eventsRead` remain. Outside the windows, only the original trace has the rest.
struct Reduction {
    std::int64_t resolutionNs = 0;
    std::int64_t eventsRead = 0;
    std::int64_t eventsKept = 0;
    bool operator==(const Reduction&) const = default;
};

} // namespace rankscope::Digest
