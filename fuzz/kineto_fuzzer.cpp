// libFuzzer harness for the Kineto/Chrome-trace reader: any bytes must give a status and a
// well-formed store, never a crash, a hang or an out-of-bounds read.
#include "model/trace/kinetoreader.h"

#include <cstdlib>

using namespace rankscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    EventStore store;
    const KinetoReadResult r =
        KinetoReader::readBytes({reinterpret_cast<const char*>(data), size}, store, {});
    if (r.status == SourceStatus::Ok && !r.message.empty()) std::abort();
    if (r.message.find('\n') != std::string::npos) std::abort();
    for (const Lane& lane : store.lanes) {
        if (lane.endNs.size() != lane.size() || lane.depth.size() != lane.size()) std::abort();
        for (std::size_t i = 0; i < lane.size(); ++i) {
            if (lane.endNs[i] < lane.startNs[i]) std::abort();
            if (i && lane.startNs[i] < lane.startNs[i - 1]) std::abort();
            if (std::size_t(lane.nameId[i]) >= store.strings.size()) std::abort();
        }
    }
    for (const FlowLink& f : store.flows)
        if (f.fromLane < 0 || f.toLane < 0 || std::size_t(f.fromLane) >= store.lanes.size() ||
            std::size_t(f.toLane) >= store.lanes.size())
            std::abort();
    for (const CollectiveRecord& c : store.collectives)
        if (c.laneIndex >= 0 && std::size_t(c.laneIndex) >= store.lanes.size()) std::abort();
    return 0;
}
