#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rankscope::bench {

// The JSON paths measured side by side for #22, each over the same in-memory traceEvents array
// (the window), each pulling out the fields the Kineto reader keeps and folding them into the
// same digest, so that they can be checked against each other.
enum class ScanCandidate { Scanner, SimdStructural, SimdjsonOnDemand, SimdjsonWindows };

struct ScanDigest {
    std::int64_t events = 0;
    std::uint64_t sum = 0;
    bool ok = true;
    bool operator==(const ScanDigest& o) const
    {
        return events == o.events && sum == o.sum && ok == o.ok;
    }
};

// `text` is a whole trace with at least 64 bytes of padding readable after text.size().
ScanDigest scanEvents(ScanCandidate candidate, std::string_view text);

} // namespace rankscope::bench
