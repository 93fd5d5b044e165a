#pragma once

#include "model/store/eventstore.h"
#include "model/trace/gzipinput.h"
#include "model/trace/sourcefile.h"

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace rankscope {

struct KinetoReadResult {
    SourceStatus status = SourceStatus::Ok;
    std::string message;          // one line; empty when Ok
    std::int64_t bytes = 0;       // decompressed bytes scanned
    std::int64_t events = 0;      // events stored (X, i, B/E pairs)
    std::int64_t flows = 0;       // s/f pairs kept as FlowLink
    std::int64_t counters = 0;    // C samples, not kept
    std::int64_t skipped = 0;     // E without B, async events, unknown ph, unbound flow ends
    std::int64_t collectives = 0; // records built
    int worldSize = 0;            // distributedInfo.world_size; 0 when the trace does not say
    std::optional<std::int64_t> statedRank; // distributedInfo.rank as written, range unchecked
    std::string ncclVersion; // distributedInfo.nccl_version as written; empty when not stated
    std::string backend;     // distributedInfo.backend as written; empty when not stated
    std::map<std::string, int> processGroupSizes; // distributedInfo.pg_config: name -> pg_size
    // A gzip source's checkpoints, recorded while reading (SourceFile::gzipIndex keeps them for
    // readEventDetails); null for a plain file.
    std::shared_ptr<const GzipIndex> gzipIndex;
    // The budget that stopped a Truncated read, if one did.
    LoadLimit limit = LoadLimit::None;
};

// Reads one Chrome-trace / Kineto JSON source (object with traceEvents, or a bare event array;
// plain or gzip) into an EventStore. Stream-oriented: memory is the stored events plus a window
// as large as the largest single JSON value, whatever the file size.
class KinetoReader {
public:
    // Per-source limits, so one huge or hostile file cannot take all the memory: reading stops
    // at whichever comes first and the source is Truncated, keeping what was read. The defaults
    // fit a 16 GB desktop: 50 M events are about 1.8 GB in the store (35 bytes an event once read,
    // 67 at the peak of reading; BENCHMARKS.md), and 16 GB inflated is far more than such a
    // trace's text.
    //
    // A gzip source that inflates to more than maxInflationRatio times the compressed bytes it
    // has consumed (checked once inflationRatioFloor bytes are inflated) is stopped there: real
    // Kineto traces inflate 5 to 30 times, a gzip bomb of tiny events 300 times and more, and
    // reading its 50 M events would take minutes of CPU (BENCHMARKS.md, "Hostile battery"). 0: no
    // limit.
    //
    // The per-load budgets bound all Kineto sources of one load together (readFolder shares them
    // out, see model/trace/loadshare.h; a single reader ignores them): 150 M events are about
    // 5 GB in the store, and 64 GB of JSON take about a minute of CPU to scan.
    struct Budget {
        std::int64_t maxEvents = 50'000'000;
        std::int64_t maxInflatedBytes = std::int64_t(16) << 30;
        std::int64_t maxEventsPerLoad = 150'000'000;
        std::int64_t maxInflatedBytesPerLoad = std::int64_t(64) << 30;
        std::int64_t maxInflationRatio = 100;
        std::int64_t inflationRatioFloor = std::int64_t(128) << 20; // bytes before the check
    };
    struct Options {
        int rank = -1;
        Budget budget;
        int sourceIndex = -1;
        const std::atomic<bool>* cancel = nullptr;          // polled between reads of a few MB
        std::atomic<std::int64_t>* progressBytes = nullptr; // file bytes consumed are added here
    };

    // The store should be empty; lanes, flows and collectives of the source are added to it.
    static KinetoReadResult readFile(const std::string& path, EventStore& out,
                                     const Options& options);
    // Reads through the descriptor discovery opened (SourceFile::openForReading).
    static KinetoReadResult readSource(const SourceFile& source, EventStore& out,
                                       const Options& options);
    static KinetoReadResult readBytes(std::string_view data, EventStore& out,
                                      const Options& options);
};

// The JSON object of the event at `offset` (Lane::sourceOffset) of `path`, .gz or not; null
// when it cannot be read back. For the details pane: args are not kept in the store. A .gz file
// is inflated from the last of `index`'s checkpoints before the event (from its start without
// one); `produced`, when given, receives the bytes inflated (or read) for it.
nlohmann::json readEventDetails(const std::string& path, std::int64_t offset,
                                const GzipIndex* index = nullptr, std::int64_t* produced = nullptr);
// Through the source's descriptor and its SourceFile::gzipIndex.
nlohmann::json readEventDetails(const SourceFile& source, std::int64_t offset);

} // namespace rankscope
