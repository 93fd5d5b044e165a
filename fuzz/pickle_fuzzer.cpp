// libFuzzer harness for the Flight Recorder pickle decoder: any input must end in a value or a
// one-line error, within the decoder's limits.
#include "model/trace/picklereader.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    QString error;
    // Small limits keep each run fast; the limits themselves are what is being exercised.
    const auto value = rankscope::PickleReader::decode(bytes, &error, {64, 100'000});
    if (!value && error.isEmpty()) std::abort();
    if (value) (void)value->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // With a dump's budgets, small enough to be reached: a decode cut by one keeps at most the
    // entry budget, and the outcome counts what the "entries" list holds.
    rankscope::PickleReader::Limits budgets{64, 100'000, 3, 64 * 1024};
    rankscope::PickleReader::Outcome outcome;
    const auto cut = rankscope::PickleReader::decode(bytes, &error, budgets, &outcome);
    if (!cut && error.isEmpty()) std::abort();
    if (cut && outcome.stop != rankscope::PickleReader::Stop::None) {
        const auto entries = cut->find("entries");
        if (entries == cut->end() || !entries->is_array() || entries->size() > 3 ||
            std::int64_t(entries->size()) != outcome.entries)
            std::abort();
    }
    return 0;
}
