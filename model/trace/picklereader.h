#pragma once

#include <QByteArray>
#include <QString>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>

namespace rankscope {

// Decodes the data-only subset of Python pickles that PyTorch's Flight Recorder writes
// (protocols 2-5: dict, list, tuple, str, bytes, int, float, bool, None, memo). Any opcode that
// would import, call or build an object (GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, ...) is
// refused: nothing is ever executed. Dict keys that are not strings become their JSON text;
// bytes become JSON binary; integers wider than 64 bits become doubles.
class PickleReader {
public:
    struct Limits {
        std::size_t maxDepth = 200;       // nesting of containers in the output
        std::size_t maxNodes = 5'000'000; // values created, and values emitted (memo sharing)
    };

    // The decoded value, or nullopt with `error` set to one line naming the offset and reason.
    static std::optional<nlohmann::json> decode(const QByteArray& bytes, QString* error);
    static std::optional<nlohmann::json> decode(const QByteArray& bytes, QString* error,
                                                const Limits& limits);
};

} // namespace rankscope
