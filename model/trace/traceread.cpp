#include "model/trace/traceread.h"

#include "model/store/parallelfor.h"
#include "model/trace/diagnosticsloader.h"
#include "model/trace/horovodtimelinereader.h"
#include "model/trace/kinetoreader.h"
#include "model/trace/loadshare.h"
#include "model/trace/ncclcollectives.h"
#include "model/trace/ncclgroupmapper.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <tuple>

namespace rankscope {

namespace {

// The clock range of one source's events (StatedJob::firstNs/lastNs), unset when it has none.
StatedJob statedClock(const EventStore& store)
{
    StatedJob stated;
    if (store.eventCount() > 0) std::tie(stated.firstNs, stated.lastNs) = store.timeRangeNs();
    return stated;
}

// One trace source as readFolder's workers read it; `cancel` and `progressBytes` may be null.
TraceSourceRead readTrace(const SourceFile& s, int sourceIndex, const KinetoReader::Budget& budget,
                          std::atomic<bool>* cancel, std::atomic<std::int64_t>* progressBytes)
{
    TraceSourceRead out;
    if (s.kind == SourceKind::Kineto) {
        KinetoReader::Options opt;
        opt.budget = budget;
        opt.rank = s.rank.value_or(-1);
        opt.sourceIndex = sourceIndex;
        opt.cancel = cancel;
        opt.progressBytes = progressBytes;
        KinetoReadResult r = KinetoReader::readSource(s, out.events, opt);
        out.status = r.status;
        out.message = std::move(r.message);
        out.limit = r.limit;
        out.worldSize = r.worldSize;
        out.ncclVersion = std::move(r.ncclVersion);
        out.statedRank = r.statedRank;
        out.backend = std::move(r.backend);
        out.processGroupSizes = std::move(r.processGroupSizes);
        out.gzipIndex = std::move(r.gzipIndex);
        out.eventsRead = r.events;
        out.bytesRead = r.bytes;
    } else {
        HorovodTimelineReader::Options opt;
        opt.coordinatorRank = s.rank.value_or(0);
        opt.sourceIndex = sourceIndex;
        opt.cancel = cancel;
        opt.progressBytes = progressBytes;
        HorovodReadResult r = HorovodTimelineReader::readSource(s, out.events, opt);
        out.status = r.status;
        out.message = std::move(r.message);
        out.worldSize = r.worldSize;
    }
    return out;
}

// Reads every Kineto source, Horovod timeline and log, a worker per core taking the next file
// (largest first, so one big file does not start last); each trace goes into a store of its own (so
// memory is the events plus one read window per worker), and everything is merged in folder order
// once all files are read. Progress and cancellation stay on the calling thread, which polls the
// workers' per-file counters (parallelFor's poll). Returns false when cancelled; the read is then
// left untouched.
bool readSources(TraceRead& read, const ProgressFn& progress, const CancelFn& cancelled,
                 const ReadOptions& options)
{
    const FileProgressFn& fileProgress = options.fileProgress;
    const QList<SourceFile>& sources = read.folder.sources();
    std::vector<int> todo;
    for (int i = 0; i < int(sources.size()); ++i) {
        const SourceFile& s = sources[i];
        if (isTraceSource(s.kind) || (isLogSource(s.kind) && s.status != SourceStatus::Error))
            todo.push_back(i);
    }
    std::vector<std::size_t> order(todo.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return sources[todo[a]].sizeBytes > sources[todo[b]].sizeBytes;
    });
    const qint64 total = read.folder.totalBytes();
    qint64 otherBytes = total;
    for (const int i : todo)
        otherBytes -= sources[i].sizeBytes;

    std::vector<EventStore> stores(todo.size());
    std::vector<TraceSourceRead> traces(todo.size());
    std::vector<LogReader::Result> logs(todo.size());
    const auto done = std::make_unique<std::atomic<std::int64_t>[]>(todo.size());
    std::atomic<bool> cancel{false};
    LoadShare logShare = LogReader::loadShare(options.logBudget);
    // The Kineto sources read here share the load's trace budgets (events, decompressed bytes).
    const KinetoReader::Budget& traceBudget = options.traceBudget;
    const auto shared = [&](std::size_t k) {
        return sources[todo[k]].kind == SourceKind::Kineto && !options.givenTrace;
    };
    LoadShare share =
        LoadShare::even({traceBudget.maxEventsPerLoad, traceBudget.maxInflatedBytesPerLoad},
                        {traceBudget.maxEvents, traceBudget.maxInflatedBytes},
                        std::size_t(std::count_if(order.begin(), order.end(), shared)));
    const auto readOne = [&](std::size_t k) {
        const SourceFile& s = sources[todo[k]];
        if (isTraceSource(s.kind)) {
            KinetoReader::Budget budget = traceBudget;
            budget.maxEvents = share.caps()[0];
            // Not 0: a source that may read no byte would read as empty.
            budget.maxInflatedBytes = std::max<std::int64_t>(share.caps()[1], 1);
            TraceSourceRead r = options.givenTrace
                                    ? options.givenTrace(todo[k])
                                    : readTrace(s, todo[k], budget, &cancel, &done[k]);
            stores[k] = std::move(r.events);
            traces[k] = std::move(r);
        } else {
            LogReader::Control control;
            control.cancel = &cancel;
            control.progressBytes = &done[k];
            control.budget = options.logBudget;
            control.load = &logShare;
            logs[k] = LogReader::readSource(s, todo[k], s.kind == SourceKind::LauncherLog, control);
        }
    };
    std::vector<std::size_t> round = order; // the items of todo read in this round
    const auto readItem = [&](std::size_t n, std::size_t) {
        const std::size_t k = round[n];
        try {
            readOne(k);
        } catch (const std::bad_alloc&) {
            // Out of memory in one source costs that source only: what it read is dropped
            // and the other sources still load.
            stores[k] = EventStore();
            const std::string message = "out of memory while reading " +
                                        sources[todo[k]].relativePath.toStdString() +
                                        "; nothing of it is kept";
            traces[k] = {};
            traces[k].status = SourceStatus::Error;
            traces[k].message = message;
            logs[k] = {};
            logs[k].ok = false;
            logs[k].message = QString::fromStdString(message);
        }
    };
    std::vector<qint64> reported(todo.size(), 0);
    const auto report = [&] {
        qint64 sum = otherBytes;
        for (std::size_t k = 0; k < todo.size(); ++k) {
            const SourceFile& s = sources[todo[k]];
            const qint64 d = std::min<qint64>(done[k].load(), s.sizeBytes);
            sum += d;
            if (fileProgress && d != reported[k])
                fileProgress(todo[k], s.relativePath, d, s.sizeBytes);
            reported[k] = d;
        }
        if (progress) progress(sum, total);
    };
    ParallelControl control;
    control.stop = &cancel;
    // Progress first, then the cancel: a cancel decided while progress is reported (as a
    // progress callback may) reaches the workers in this poll, not one poll (20 ms) later, when
    // two fast workers would have read tens of MB more.
    control.poll = [&] {
        report();
        if (cancelled && cancelled()) cancel = true;
    };
    // The load limit (if any) that stopped trace source k at its share.
    const auto loadLimit = [&](std::size_t k) {
        const LoadLimit limit = traces[k].limit;
        return limit == LoadLimit::TraceEvents && share.isLoadLimit(0)
                   ? LoadLimit::TraceEventsPerLoad
               : limit == LoadLimit::DecompressedBytes && share.isLoadLimit(1)
                   ? LoadLimit::DecompressedBytesPerLoad
                   : LoadLimit::None;
    };
    parallelFor(round.size(), readItem, control);
    // The sources stopped at their share are read again while the others leave them more.
    for (;;) {
        if (cancel.load() || (cancelled && cancelled())) return false;
        std::vector<std::size_t> stopped;
        for (const std::size_t k : round) {
            if (!shared(k)) continue;
            if (loadLimit(k) != LoadLimit::None)
                stopped.push_back(k);
            else
                share.ended({traces[k].eventsRead, traces[k].bytesRead});
        }
        round = std::move(stopped);
        if (!share.grow()) break;
        for (const std::size_t k : round) {
            stores[k] = EventStore(); // before the read again, so both are never held
            traces[k] = {};
            done[k] = 0;
        }
        parallelFor(round.size(), readItem, control);
    }
    for (const std::size_t k : round) {
        TraceSourceRead& r = traces[k];
        r.limit = loadLimit(k);
        const bool events = r.limit == LoadLimit::TraceEventsPerLoad;
        r.message = "stopped at its share of the load's budget of " +
                    std::to_string(share.perLoad(events ? 0 : 1)) +
                    (events ? " trace events: " : " decompressed trace bytes: ") +
                    std::to_string(share.caps()[events ? 0 : 1]) + " for each of the " +
                    std::to_string(share.stopped()) +
                    " trace files that need more than the others left (byte " +
                    std::to_string(r.bytesRead) + "); the " + std::to_string(r.eventsRead) +
                    " events before it are kept";
    }
    report();
    for (std::size_t k = 0; k < todo.size(); ++k) {
        const int index = todo[k];
        const SourceKind kind = sources[index].kind;
        if (isTraceSource(kind)) {
            read.folder.setSourceStatus(index, traces[k].status,
                                        QString::fromStdString(traces[k].message), traces[k].limit);
            read.folder.noteWorldSize(traces[k].worldSize);
            if (kind == SourceKind::Kineto)
                read.folder.setSourceNcclVersion(index,
                                                 QString::fromStdString(traces[k].ncclVersion));
            StatedJob stated = statedClock(stores[k]);
            stated.worldSize = traces[k].worldSize;
            stated.backend = QString::fromStdString(traces[k].backend);
            for (const auto& [name, size] : traces[k].processGroupSizes)
                stated.processGroupSizes[QString::fromStdString(name)] = size;
            read.folder.setSourceStatedJob(index, stated);
            read.folder.setSourceGzipIndex(index, std::move(traces[k].gzipIndex));
            // The rank the trace states where discovery did not see it (deep in a .gz): the
            // events were read under the old rank, which only labels them, and move over.
            if (traces[k].statedRank &&
                read.folder.attributeStatedRank(index, *traces[k].statedRank)) {
                const int rank = read.folder.sources()[index].rank.value_or(-1);
                for (Lane& lane : stores[k].lanes)
                    lane.rank = rank;
                for (CollectiveRecord& c : stores[k].collectives)
                    c.rank = rank;
            } else if (kind == SourceKind::Kineto && !traces[k].statedRank &&
                       traces[k].status == SourceStatus::Ok) {
                read.folder.noteNoStatedRank(index, traces[k].worldSize > 0 ||
                                                        !traces[k].backend.empty() ||
                                                        !traces[k].processGroupSizes.empty() ||
                                                        !traces[k].ncclVersion.empty());
            }
            read.events.merge(std::move(stores[k]));
        } else {
            read.folder.setSourceStatus(index,
                                        !logs[k].ok         ? SourceStatus::Error
                                        : logs[k].truncated ? SourceStatus::Truncated
                                                            : SourceStatus::Ok,
                                        logs[k].message, logs[k].limit);
            addLogStreams(read, std::move(logs[k]), kind);
        }
    }
    return true;
}

} // namespace

bool isTraceSource(SourceKind kind)
{
    return kind == SourceKind::Kineto || kind == SourceKind::HorovodTimeline;
}

TraceSourceRead readTraceSource(const SourceFile& source, int sourceIndex,
                                const KinetoReader::Budget& budget)
{
    return readTrace(source, sourceIndex, budget, nullptr, nullptr);
}

TraceRead readFolder(const QString& dir, const ProgressFn& progress, const CancelFn& cancelled,
                     const ReadOptions& options)
{
    return readFolder(TraceFolder::discover(dir, cancelled), progress, cancelled, options);
}

TraceRead readFolder(TraceFolder folder, const ProgressFn& progress, const CancelFn& cancelled,
                     const ReadOptions& options)
{
    const auto isCancelled = [&] { return cancelled && cancelled(); };
    TraceRead read;
    read.folder = std::move(folder);
    readDiagnosticSources(read, cancelled, options.dumpBudget);
    const bool complete = !isCancelled() && (!read.folder.isValid() ||
                                             readSources(read, progress, cancelled, options));
    if (!complete) {
        // Nothing half-way: what was read before the cancel goes with the partial read.
        TraceRead empty;
        empty.folder = std::move(read.folder);
        empty.cancelled = true;
        return empty;
    }
    if (progress) progress(read.folder.totalBytes(), read.folder.totalBytes());
    // The folder's own problems (rank claims, as they stand after reading) come first.
    read.warnings = read.folder.warnings() + read.warnings;
    const std::size_t firstNcclRecord = read.events.collectives.size();
    const NcclCollectives::Result nccl = NcclCollectives::append(read.logs, read.events);
    // Traces and dumps are in the store by now: NCCL's records of a communicator they also
    // describe join their group instead of making a second one.
    const NcclGroupMapper::Result mapped = NcclGroupMapper::map(read.events, firstNcclRecord);
    for (const NcclGroupMapper::Separate& s : mapped.separate)
        read.warnings.append(
            QStringLiteral("NCCL communicator %1 could be a c10d process group of the traces or "
                           "dumps, but is kept as a group of its own (its findings may repeat "
                           "that group's): %2")
                .arg(QString::fromStdString(s.communicator), QString::fromStdString(s.reason)));
    if (nccl.withoutCommId > 0)
        read.warnings.append(
            (nccl.withoutCommId == 1
                 ? QStringLiteral("%1 NCCL collective line names a communicator whose init line "
                                  "has no commId (or is missing): it cannot be matched across "
                                  "ranks")
                 : QStringLiteral("%1 NCCL collective lines name a communicator whose init line "
                                  "has no commId (or is missing): they cannot be matched across "
                                  "ranks"))
                .arg(nccl.withoutCommId));
    return read;
}

} // namespace rankscope
