// libFuzzer harness for the Flight Recorder reader on top of the pickle and JSON decoders: any
// dump must give entries or a one-line error, and its collectives must be well formed.
#include "model/trace/flightrecorderreader.h"

#include <cstdlib>

using namespace rankscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    QString error;
    int skipped = 0;
    const auto dump =
        FlightRecorderReader::read(bytes, QStringLiteral("nccl_trace_rank_3"), &error, &skipped);
    if (!dump) {
        if (error.isEmpty() || error.contains(QLatin1Char('\n'))) std::abort();
        return 0;
    }
    if (skipped < 0) std::abort();
    EventStore store;
    FlightRecorderReader::appendCollectives(*dump, store);
    for (const CollectiveRecord& c : store.collectives)
        if (c.rank != 3 || std::size_t(c.op) >= store.strings.size()) std::abort();
    for (const FlightRecorderEntry& e : dump->entries)
        (void)dump->groupRanks(e.pgName);
    // Small budgets, reached by small inputs: a dump cut by one keeps at most the entry budget,
    // and a cut names its limit and reason.
    FlightRecorderReader::Cut cut;
    const auto small = FlightRecorderReader::read(bytes, QStringLiteral("nccl_trace_rank_3"),
                                                  &error, &skipped, &cut, {2, 16 * 1024});
    if (small && ((cut.limit == LoadLimit::None) != cut.reason.isEmpty() ||
                  (cut.limit != LoadLimit::None && small->entries.size() > 2)))
        std::abort();
    return 0;
}
