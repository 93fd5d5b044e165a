#pragma once

#include "model/store/eventstore.h"
#include "model/trace/sourcefile.h"

#include <QFile>
#include <QString>
#include <atomic>
#include <string>
#include <string_view>

namespace rankscope {

struct HorovodReadResult {
    SourceStatus status = SourceStatus::Ok;
    std::string message;          // one line
    std::int64_t events = 0;      // spans and rank-readiness ticks stored
    std::int64_t collectives = 0; // records built, all ranks
    int tensors = 0;              // "processes" of the timeline
    int worldSize = 0;            // highest rank that ever reported ready + 1
};

// Reads a HOROVOD_TIMELINE file: a Chrome-trace-like JSON array in which every tensor is a
// process (pid = tensor index, process_name = tensor name) with B/E spans NEGOTIATE_<OP>, then
// <OP> with nested activities (QUEUE, MEMCPY_IN_FUSION_BUFFER, NCCL_ALLREDUCE, ...), and an
// X event of zero duration named by a rank number when that rank reported the tensor ready.
//
// What the file encodes, and so how it is attributed: only the coordinator (rank 0) writes it.
// The spans are the coordinator's own negotiation and execution, so they go on lanes of
// `coordinatorRank`; the readiness ticks are the only thing it knows about the other ranks:
// "rank r submitted tensor T for the k-th time at t" on the coordinator's clock. Each tick
// becomes a CollectiveRecord of rank r (group = tensor name, seq = k, issue time = the tick),
// completed when the coordinator's operation finished (it starts only once every rank is
// ready); only the coordinator's record carries an execution interval. A rank that never
// ticked gets no record for that negotiation, which is how the matcher sees who stalled.
class HorovodTimelineReader {
public:
    struct Options {
        int coordinatorRank = 0;
        int sourceIndex = -1;
        const std::atomic<bool>* cancel = nullptr;          // polled every few MB
        std::atomic<std::int64_t>* progressBytes = nullptr; // bytes consumed are added here
    };
    static HorovodReadResult readFile(const QString& path, EventStore& out, const Options& options);
    // Reads through the descriptor discovery opened (SourceFile::openForReading).
    static HorovodReadResult readSource(const SourceFile& source, EventStore& out,
                                        const Options& options);
    static HorovodReadResult readBytes(std::string_view data, EventStore& out,
                                       const Options& options);
    // NEGOTIATE_ALLREDUCE / ALLREDUCE -> all_reduce, ALLGATHER -> all_gather, ...
    static std::string normalizeOp(std::string_view horovodOp);

private:
    static HorovodReadResult readOpened(QFile& file, EventStore& out, const Options& options);
};

} // namespace rankscope
