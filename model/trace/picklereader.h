#pragma once

#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>
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
        // Budgets of a Flight Recorder dump, applied while decoding (-1: none). `maxEntries`:
        // items of the top-level dict's "entries" list; `maxBytes`: an estimate of the memory of
        // the decoded values, counted once while decoding and once while building the output
        // (so the decoder holds at most about twice it). Past one, or past maxNodes, decoding
        // stops: the entries complete so far are kept, the rest of the pickle is not read, and
        // the top-level dict holds what came before "entries". Without an "entries" list yet, a
        // value limit is an error.
        std::int64_t maxEntries = -1;
        std::int64_t maxBytes = -1;
    };
    enum class Stop {
        None,
        Entries, // Limits::maxEntries
        Bytes,   // Limits::maxBytes or maxNodes
    };
    // How a decode ended: `stop` says which budget cut it, `entries` the entries kept.
    struct Outcome {
        Stop stop = Stop::None;
        std::int64_t entries = 0;
        std::int64_t bytes = 0; // the estimate of the decoded values' memory
    };

    // The decoded value, or nullopt with `error` set to one line naming the offset and reason.
    static std::optional<nlohmann::json> decode(const QByteArray& bytes, QString* error);
    static std::optional<nlohmann::json> decode(const QByteArray& bytes, QString* error,
                                                const Limits& limits, Outcome* outcome = nullptr);
};

} // namespace rankscope
