// libFuzzer harness for the Horovod timeline reader: any bytes must give a status and records
// that point into the store, never a crash, a hang or an out-of-bounds read.
#include "model/trace/horovodtimelinereader.h"

#include <cstdlib>

using namespace rankscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    EventStore store;
    const HorovodReadResult r =
        HorovodTimelineReader::readBytes({reinterpret_cast<const char*>(data), size}, store, {});
    if (r.message.empty() || r.message.find('\n') != std::string::npos) std::abort();
    if (r.collectives != std::int64_t(store.collectives.size())) std::abort();
    for (const Lane& lane : store.lanes)
        for (std::size_t i = 0; i < lane.size(); ++i) {
            if (lane.endNs[i] < lane.startNs[i]) std::abort();
            if (i && lane.startNs[i] < lane.startNs[i - 1]) std::abort();
        }
    for (const CollectiveRecord& c : store.collectives) {
        if (c.rank < 0 || c.rank >= r.worldSize) std::abort();
        if (c.laneIndex >= 0 && std::size_t(c.laneIndex) >= store.lanes.size()) std::abort();
    }
    return 0;
}
