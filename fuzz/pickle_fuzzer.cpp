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
    return 0;
}
