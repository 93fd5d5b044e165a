#pragma once

#include "model/store/eventstore.h"
#include "model/trace/sourcefile.h"

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rankscope {

// What a Flight Recorder entry says beyond a CollectiveRecord: the analyzer's checks need the
// per-tensor sizes, the retired flag and the stack; p2p entries name their peer.
struct FlightRecorderEntry {
    std::int64_t recordId = -1;
    std::int64_t pgId = -1;
    std::string pgName; // process_group[0]
    std::string pgDesc; // process_group[1]
    std::int64_t collectiveSeqId = -1;
    std::int64_t p2pSeqId = -1;
    std::int64_t opId = -1;
    std::string profilingName; // nccl:all_reduce, nccl:send 1->2, ...
    std::string op;            // all_reduce, send, recv, coalesced, ...
    std::vector<std::vector<std::int64_t>> inputSizes;
    std::vector<std::vector<std::int64_t>> outputSizes;
    std::vector<std::string> inputDtypes;
    std::vector<std::string> outputDtypes;
    // torch writes "scheduled", "started" or "completed"; any other text is Unknown.
    enum class State : std::uint8_t { Unknown, Scheduled, Started, Completed };
    State state = State::Unknown;
    std::int64_t timeCreatedNs = -1;
    std::int64_t timeStartedNs = -1; // time_discovered_started_ns; -1 when unknown (JSON's 0)
    std::int64_t timeCompletedNs = -1;
    double durationMs = -1;
    bool retired = false;
    std::int64_t timeoutMs = -1;
    bool isP2p = false;
    // The other rank of "send a->b" / "recv a<-b" as written: its place in the entry's process
    // group (CollectiveRecord::root gets its global rank).
    int p2pPeer = -1;
    std::int64_t threadId = -1;
    std::string threadName;
    struct Frame {
        std::string name;
        std::string filename;
        int line = -1;
    };
    std::vector<Frame> frames;

    bool timedOut() const { return retired && state != State::Completed; }
    // The state as torch writes it ("unknown" for text it does not write).
    static const char* stateName(State state);
};

// One collective of a rank as its peers see it: a single entry, or a coalescing block. torch
// (2.7 and later, the "slow path") records each op of a block with the block's collective_seq_id
// and closes the block with an end entry ("nccl:coalesced", "nccl:ALLGATHER_coalesced") of empty
// sizes; the analyzer matches the block as one collective.
struct FlightRecorderUnit {
    std::vector<const FlightRecorderEntry*> ops; // what the block moves, in dump order
    const FlightRecorderEntry* end = nullptr;    // the block's end entry, if any
};

// One rank's Flight Recorder dump (pickle or JSON form).
struct FlightRecorderDump {
    int sourceIndex = -1;
    std::optional<int> rank; // from the file name suffix, as the analyzer does
    std::string version;
    std::string commLibVersion;
    nlohmann::json pgConfig; // {pg_name: {name, desc, ranks}} as written
    nlohmann::json pgStatus; // {pg_id: {last_enqueued_collective, ...}} as written
    std::vector<FlightRecorderEntry> entries;
    // Member ranks of a process group from pg_config's "ranks" ("[0, 1]" or a list); empty if
    // unknown.
    std::vector<int> groupRanks(const std::string& pgName) const;
};

// What a Flight Recorder dump may cost. torch keeps 2,000 entries by default
// (TORCH_NCCL_TRACE_BUFFER_SIZE): the default entry budget is far above any real ring buffer.
// `maxDecodedBytes` bounds the values a pickle dump is decoded into
// (PickleReader::Limits::maxBytes). `maxEntriesPerLoad` bounds the dumps of one load together
// (readFolder shares it out, see model/trace/loadshare.h; read() ignores it): a million entries
// are a full ring buffer from each of 500 ranks, a few GB decoded.
struct FlightRecorderBudget {
    std::int64_t maxEntries = 100'000;
    std::int64_t maxDecodedBytes = std::int64_t(1) << 30;
    std::int64_t maxEntriesPerLoad = 1'000'000;
};
// A dump read up to a budget: which one, and one line saying what was kept.
struct FlightRecorderCut {
    LoadLimit limit = LoadLimit::None;
    QString reason;
};

class FlightRecorderReader {
public:
    using Budget = FlightRecorderBudget;
    using Cut = FlightRecorderCut;
    // Decodes `bytes` (pickle when it starts with 0x80, else JSON). On failure returns nullopt
    // with a one-line `error`. Entries that lack required fields are skipped and counted in
    // `skipped` (when given). Decoding stops at the budget (a JSON dump is not parsed past its
    // entry budget, a pickle not decoded past either budget): the entries before it are kept
    // and `cut` (when given) says so.
    static std::optional<FlightRecorderDump> read(const QByteArray& bytes, const QString& fileName,
                                                  QString* error, int* skipped = nullptr,
                                                  Cut* cut = nullptr, const Budget& budget = {});
    // Rank from a dump's file name: the trailing digits, as `([\w\-\_]*?)(\d+)$`.
    static std::optional<int> rankFromFileName(const QString& fileName);
    // The dump's collectives (not its point-to-point ops) in dump order: the entries of a group
    // that share a collective_seq_id form one unit.
    static std::vector<FlightRecorderUnit> collectiveUnits(const FlightRecorderDump& dump);
    // One CollectiveRecord per collective unit and per send/recv, for the cross-rank matching;
    // sourceIndex marks the dump. A unit's record sums its ops' elements.
    static void appendCollectives(const FlightRecorderDump& dump, EventStore& store);
    // A send, recv or a batch's end entry: paired by peer, not matched as a collective.
    static bool isPointToPoint(const FlightRecorderEntry& e);
    // The entry's op as the matcher names collectives ("_broadcast_oop" -> "broadcast").
    static std::string collectiveOf(const FlightRecorderEntry& e);
    // Elements of all tensors of an entry's input_sizes / output_sizes; -1 when not given.
    static std::int64_t numel(const std::vector<std::vector<std::int64_t>>& sizes);
};

} // namespace rankscope
