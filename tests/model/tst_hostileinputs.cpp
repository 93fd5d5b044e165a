// Hostile and foreign inputs through the reading path: a gzip bomb stopped by its inflation
// ratio, a log behind binary junk, Flight Recorder dumps (JSON and pickle) over their budgets, and
// a public Kineto trace this project did not write. Each truth is computed here from the bytes
// written (or, for the public trace, stated with how it was computed from the raw JSON).
#include "model/trace/flightrecorderreader.h"
#include "model/trace/picklereader.h"
#include "model/trace/traceread.h"
#include "tests/support/gzip.h"
#include "tests/support/picklewriter.h"
#include "tests/support/testfiles.h"

#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <map>
#include <vector>

using namespace rankscope;

namespace {

const SourceFile* sourceNamed(const TraceRead& read, const QString& name)
{
    for (const SourceFile& s : read.folder.sources())
        if (s.relativePath == name) return &s;
    return nullptr;
}

// A Kineto trace of `events` X events on one thread, no whitespace after its closing brace.
QByteArray kinetoTrace(int events)
{
    QByteArray json = R"({"traceEvents":[)";
    for (int i = 0; i < events; ++i)
        json += (i ? "," : "") +
                QByteArray(R"({"ph":"X","name":"aten::mm","pid":1,"tid":1,"ts":)") +
                QByteArray::number(10 * i) + R"(,"dur":5})";
    return json + "]}";
}

// A JSON Flight Recorder dump of `entries` all_reduce entries of a two-rank group.
QByteArray flightRecorderJson(int entries)
{
    QByteArray json = R"({"version": "2.5", "pg_config": {"0": {"name": "0", "desc": "default_pg",)"
                      R"( "ranks": "[0, 1]"}}, "entries": [)";
    for (int i = 1; i <= entries; ++i)
        json += QByteArray(i > 1 ? "," : "") + R"({"record_id": )" + QByteArray::number(i) +
                R"(, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": )" +
                QByteArray::number(i) +
                R"(, "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",)"
                R"( "time_created_ns": 1, "input_sizes": [[4]], "input_dtypes": ["Float"],)"
                R"( "output_sizes": [[4]], "output_dtypes": ["Float"], "state": "completed",)"
                R"( "retired": true, "timeout_ms": 600000, "is_p2p": false})";
    return json + "]}";
}

// The largest share L of a load budget such that every source taking min(its need, L) stays
// within the budget: by its definition, counting up.
std::int64_t fairShare(const std::vector<std::int64_t>& needs, std::int64_t budget)
{
    const auto total = [&](std::int64_t level) {
        std::int64_t sum = 0;
        for (const std::int64_t n : needs)
            sum += std::min(n, level);
        return sum;
    };
    std::int64_t level = 0;
    while (total(level + 1) <= budget && level < *std::max_element(needs.begin(), needs.end()))
        ++level;
    return level;
}

} // namespace

class TestHostileInputs : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gzipBombStopsAtItsInflationRatio();
    void logBehindBinaryJunkIsRead();
    void flightRecorderDumpStopsAtItsEntryBudget();
    void largePickleDumpStopsWhileDecoding_data();
    void largePickleDumpStopsWhileDecoding();
    void publicKinetoTraceOfNoRank();
    void loadBudgetsAreSharedOut();
};

// 200,000 identical tiny events inflate several hundred times; with the ratio checked past the
// first MiB the read stops there, truncated by the inflation-ratio limit, and without a ratio
// limit every event is read.
void TestHostileInputs::gzipBombStopsAtItsInflationRatio()
{
    constexpr int kEvents = 200'000;
    const QByteArray event = R"({"ph":"X","name":"a","ts":1,"dur":1,"pid":0,"tid":0})";
    QByteArray json = "{\"traceEvents\":[";
    for (int i = 0; i < kEvents; ++i)
        json += (i ? "," : "") + event;
    json += "]}";
    const QByteArray gz = gzip(json);
    QVERIFY(!gz.isEmpty());
    QVERIFY2(json.size() / gz.size() > 100, "the bomb must inflate more than 100 times");
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank0.pt.trace.json.gz")), gz);

    ReadOptions options;
    options.traceBudget.inflationRatioFloor = 1 << 20;
    const TraceRead bomb = readFolder(dir.path(), {}, {}, options);
    const SourceFile* s = sourceNamed(bomb, QStringLiteral("rank0.pt.trace.json.gz"));
    QVERIFY(s);
    QCOMPARE(s->status, SourceStatus::Truncated);
    QCOMPARE(s->limit, LoadLimit::InflationRatio);
    QVERIFY2(s->message.contains(QLatin1String("inflation ratio of 100")), qPrintable(s->message));
    QVERIFY(bomb.events.eventCount() > 0);
    // Stopped past the first MiB, long before the end: about 1 MiB of events.
    QVERIFY(bomb.events.eventCount() < kEvents / 2);

    options.traceBudget.maxInflationRatio = 0;
    const TraceRead whole = readFolder(dir.path(), {}, {}, options);
    s = sourceNamed(whole, QStringLiteral("rank0.pt.trace.json.gz"));
    QVERIFY(s);
    QCOMPARE(s->status, SourceStatus::Ok);
    QCOMPARE(s->limit, LoadLimit::None);
    QCOMPARE(whole.events.eventCount(), std::int64_t(kEvents));
}

// rank1.log starts with 4 KiB of random bytes (control bytes among them), then 52 lines: it is
// a log, read with its junk skipped, and its NCCL line reaches the rank's stream.
void TestHostileInputs::logBehindBinaryJunkIsRead()
{
    QByteArray junk(4096, Qt::Uninitialized);
    QRandomGenerator random(7);
    for (char& c : junk)
        c = char(random.bounded(256));
    QByteArray lines;
    for (int i = 0; i < 50; ++i)
        lines += "INFO rank 1 step " + QByteArray::number(i) + " loss 2.3\n";
    const QByteArray nccl = "host1:1:1 [1] NCCL WARN NET/IB : Got completion with error 12\n";
    lines += nccl + "RuntimeError: NCCL error: unhandled system error\n";
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank1.log")), junk + "\n" + lines);

    const TraceRead read = readFolder(dir.path());
    const SourceFile* s = sourceNamed(read, QStringLiteral("rank1.log"));
    QVERIFY(s);
    QCOMPARE(s->kind, SourceKind::Log);
    QCOMPARE(s->status, SourceStatus::Ok);
    QVERIFY2(s->message.contains(QLatin1String("binary bytes skipped")), qPrintable(s->message));
    bool found = false;
    for (const RankLog& log : read.logs)
        for (int i = 0; log.rank == std::optional<int>(1) && i < log.lineCount(); ++i)
            found = found || log.lineText(i) == QString::fromUtf8(nccl.chopped(1));
    QVERIFY(found);
    // A file of junk and nothing else stays refused.
    QTemporaryDir junkOnly;
    writeFile(junkOnly.filePath(QStringLiteral("rank1.log")), junk);
    const TraceRead refused = readFolder(junkOnly.path());
    s = sourceNamed(refused, QStringLiteral("rank1.log"));
    QVERIFY(s);
    QCOMPARE(s->status, SourceStatus::Error);
}

// A JSON dump of 50 entries read with a budget of 10 keeps the first 10, in order, and says the
// rest was not read; a budget above the count keeps all 50.
void TestHostileInputs::flightRecorderDumpStopsAtItsEntryBudget()
{
    constexpr int kEntries = 50;
    QByteArray json = R"({"version": "2.5", "pg_config": {"0": {"name": "0", "desc": "default_pg",)"
                      R"( "ranks": "[0, 1]"}}, "entries": [)";
    for (int i = 1; i <= kEntries; ++i)
        json += QByteArray(i > 1 ? "," : "") + R"({"record_id": )" + QByteArray::number(i) +
                R"(, "pg_id": 0, "process_group": ["0", "default_pg"], "collective_seq_id": )" +
                QByteArray::number(i) +
                R"(, "p2p_seq_id": 0, "op_id": 1, "profiling_name": "nccl:all_reduce",)"
                R"( "time_created_ns": 1, "input_sizes": [[4]], "input_dtypes": ["Float"],)"
                R"( "output_sizes": [[4]], "output_dtypes": ["Float"], "state": "completed",)"
                R"( "retired": true, "timeout_ms": 600000, "is_p2p": false})";
    json += "]}";
    QString error;
    int skipped = 0;
    FlightRecorderReader::Cut stop;
    const auto cut = FlightRecorderReader::read(json, QStringLiteral("nccl_trace_rank_1"), &error,
                                                &skipped, &stop, {10, 1 << 30});
    QVERIFY2(cut, qPrintable(error));
    QCOMPARE(cut->entries.size(), std::size_t(10));
    QCOMPARE(cut->entries.front().recordId, std::int64_t(1));
    QCOMPARE(cut->entries.back().recordId, std::int64_t(10));
    QCOMPARE(cut->version, std::string("2.5"));
    QCOMPARE(stop.limit, LoadLimit::DumpEntries);
    QVERIFY2(stop.reason.contains(QLatin1String("budget of 10 entries")), qPrintable(stop.reason));
    for (const std::int64_t budget : {std::int64_t(kEntries), std::int64_t(1000)}) {
        const auto whole = FlightRecorderReader::read(json, QStringLiteral("nccl_trace_rank_1"),
                                                      &error, &skipped, &stop, {budget, 1 << 30});
        QVERIFY2(whole, qPrintable(error));
        QCOMPARE(whole->entries.size(), std::size_t(kEntries));
        QCOMPARE(stop.limit, LoadLimit::None);
    }
}

void TestHostileInputs::largePickleDumpStopsWhileDecoding_data()
{
    QTest::addColumn<int>("batch");
    QTest::newRow("python pickler, batches of 1000") << 1000;
    QTest::newRow("torch c++ pickler, one batch") << 0;
}

// A pickled dump of 100,500 entries, written here (about 8 MB): with the default budget the first
// 100,000 are kept and the rest is never decoded; with a byte budget decoding stops at it and the
// entries kept are whole and in order. The decoder's own count of decoded bytes shows the budget
// applies while decoding: cut at 1,000 entries it decodes under 1/50 of the whole.
void TestHostileInputs::largePickleDumpStopsWhileDecoding()
{
    QFETCH(int, batch);
    constexpr int kEntries = 100'500;
    const QByteArray pickle = test::flightRecorderPickle(kEntries, batch);
    const QString name = QStringLiteral("nccl_trace_rank_1");
    QString error;
    int skipped = 0;
    FlightRecorderReader::Cut cut;
    const auto dump = FlightRecorderReader::read(pickle, name, &error, &skipped, &cut);
    QVERIFY2(dump, qPrintable(error));
    QCOMPARE(dump->entries.size(), std::size_t(100'000));
    QCOMPARE(skipped, 0);
    for (std::size_t i = 0; i < dump->entries.size(); ++i)
        QCOMPARE(dump->entries[i].recordId, std::int64_t(i + 1));
    QCOMPARE(dump->version, std::string("2.5"));
    QCOMPARE(dump->groupRanks("0"), (std::vector<int>{0, 1}));
    QCOMPARE(cut.limit, LoadLimit::DumpEntries);
    QVERIFY2(cut.reason.contains(QLatin1String("budget of 100000 entries")),
             qPrintable(cut.reason));

    constexpr std::int64_t kBytes = 4 << 20;
    const auto small = FlightRecorderReader::read(
        pickle, name, &error, &skipped, &cut, {FlightRecorderReader::Budget().maxEntries, kBytes});
    QVERIFY2(small, qPrintable(error));
    QCOMPARE(cut.limit, LoadLimit::DumpBytes);
    QVERIFY(!small->entries.empty());
    QVERIFY(small->entries.size() < std::size_t(kEntries));
    QCOMPARE(skipped, 0);
    for (std::size_t i = 0; i < small->entries.size(); ++i) {
        const FlightRecorderEntry& e = small->entries[i];
        QCOMPARE(e.recordId, std::int64_t(i + 1));
        QCOMPARE(e.collectiveSeqId, std::int64_t(i + 1));
        QCOMPARE(e.state, FlightRecorderEntry::State::Completed);
        QVERIFY(e.retired);
        QCOMPARE(e.frames.size(), std::size_t(1));
        QCOMPARE(e.frames.front().line, int((i + 1) % 1000));
    }
    QVERIFY2(cut.reason.contains(QStringLiteral("after %1 entries").arg(small->entries.size())),
             qPrintable(cut.reason));

    PickleReader::Outcome whole, atBudget;
    QVERIFY(PickleReader::decode(pickle, &error, PickleReader::Limits{}, &whole));
    QCOMPARE(whole.stop, PickleReader::Stop::None);
    QCOMPARE(whole.entries, std::int64_t(kEntries));
    PickleReader::Limits limits;
    limits.maxEntries = 1000;
    QVERIFY(PickleReader::decode(pickle, &error, limits, &atBudget));
    QCOMPARE(atBudget.stop, PickleReader::Stop::Entries);
    QCOMPARE(atBudget.entries, std::int64_t(1000));
    QVERIFY2(atBudget.bytes * 50 < whole.bytes,
             qPrintable(QStringLiteral("%1 of %2").arg(atBudget.bytes).arg(whole.bytes)));
    limits = {};
    limits.maxBytes = kBytes;
    QVERIFY(PickleReader::decode(pickle, &error, limits, &atBudget));
    QCOMPARE(atBudget.stop, PickleReader::Stop::Bytes);
    QVERIFY2(atBudget.bytes <= kBytes + 1024, qPrintable(QString::number(atBudget.bytes)));

    // Through a load: the dump is truncated and says why, the good rank beside it loads.
    QTemporaryDir dir;
    writeFile(dir.filePath(name), pickle);
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 3\n");
    const TraceRead read = readFolder(dir.path());
    const SourceFile* s = sourceNamed(read, name);
    QVERIFY(s);
    QCOMPARE(s->kind, SourceKind::FlightRecorder);
    QCOMPARE(s->status, SourceStatus::Truncated);
    QCOMPARE(s->limit, LoadLimit::DumpEntries);
    QVERIFY2(s->message.startsWith(QLatin1String("100000 entries")), qPrintable(s->message));
    QCOMPARE(read.dumps.size(), std::size_t(1));
    QCOMPARE(read.dumps.front().entries.size(), std::size_t(100'000));
    QCOMPARE(sourceNamed(read, QStringLiteral("rank0.log"))->status, SourceStatus::Ok);
}

// docs/traces/after_fix_trace.json of pytorch/kineto (BSD-3-Clause; see its LICENSE file):
// libkineto's own output from a CUPTI test on an 8 x H100 host, with no distributedInfo and no
// rank in its name. Counted with Python's json module from the raw file: 60 "M", 9 "X"
// (4 cpu_op, 1 cuda_runtime, 1 kernel, 2 cuda_sync, 1 "Trace" span), 2 "i", 1 "s", 3 "f"; the one
// kernel on pid 0 / tid 1 has "dur": 0.020 (20 ns). `rankscope analyze --json` on it gave
// gpu_time window 0.02 us, compute 0.02 us, idle 0, the union of the kernel intervals by hand.
void TestHostileInputs::publicKinetoTraceOfNoRank()
{
    const TraceRead read = readFolder(QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-public"));
    const SourceFile* s = sourceNamed(read, QStringLiteral("kineto_after_fix_trace.json"));
    QVERIFY(s);
    QCOMPARE(s->kind, SourceKind::Kineto);
    QCOMPARE(s->status, SourceStatus::Ok);
    // The only trace of the folder, with no rank anywhere: an assumed rank 0 that says so.
    QCOMPARE(s->rank, std::optional<int>(0));
    QVERIFY2(s->rankEvidence.startsWith(QLatin1String("assumed")), qPrintable(s->rankEvidence));
    QCOMPARE(read.events.eventCount(), std::int64_t(9 + 2)); // the X and i events
    const auto gpu = std::count_if(read.events.lanes.begin(), read.events.lanes.end(),
                                   [](const Lane& l) { return l.kind == LaneKind::GpuStream; });
    QCOMPARE(gpu, 1);
    // pid 0 / tid 1 holds the kernel (ts ...202.785) and the two cuda_sync events after it
    // (.855, .875): the lane's first event is the kernel, 20 ns long, and the syncs start 70 and
    // 90 ns after it.
    for (const Lane& l : read.events.lanes)
        if (l.kind == LaneKind::GpuStream) {
            QCOMPARE(l.size(), std::size_t(3));
            QCOMPARE(l.endNs[0] - l.startNs[0], std::int64_t(20));
            QCOMPARE(l.startNs[1] - l.startNs[0], std::int64_t(70));
            QCOMPARE(l.startNs[2] - l.startNs[0], std::int64_t(90));
        }
    QVERIFY(read.warnings.isEmpty());
}

// A folder of four traces (one gzip), three Flight Recorder dumps and a log whose sums exceed
// small per-load budgets while every file fits its per-file budget. Each budget is shared out by
// its definition (fairShare, computed here from the counts written): the sources that need less
// than the share load whole, the others are truncated at the share by the load limit, whatever
// order the workers read them in, and the totals stay within the budgets. Raised, all load whole.
void TestHostileInputs::loadBudgetsAreSharedOut()
{
    QTemporaryDir dir;
    const std::map<int, int> traceEvents = {{0, 100}, {1, 40}, {2, 70}, {3, 10}};
    std::map<int, QByteArray> traces;
    for (const auto& [rank, events] : traceEvents) {
        traces[rank] = kinetoTrace(events);
        const QString name = QStringLiteral("rank%1.pt.trace.json").arg(rank);
        if (rank == 2)
            writeFile(dir.filePath(name + QStringLiteral(".gz")), gzip(traces[rank]));
        else
            writeFile(dir.filePath(name), traces[rank]);
    }
    const std::map<int, int> dumpEntries = {{0, 50}, {1, 20}, {2, 5}};
    for (const auto& [rank, entries] : dumpEntries)
        writeFile(dir.filePath(QStringLiteral("nccl_trace_rank_%1.json").arg(rank)),
                  flightRecorderJson(entries));
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 3\n");
    const auto traceName = [](int rank) {
        return QString::fromLatin1(rank == 2 ? "rank%1.pt.trace.json.gz" : "rank%1.pt.trace.json")
            .arg(rank);
    };
    const auto dumpName = [](int rank) {
        return QStringLiteral("nccl_trace_rank_%1.json").arg(rank);
    };
    const auto entriesOf = [](const TraceRead& read, int rank) {
        for (const FlightRecorderDump& d : read.dumps)
            if (d.rank == std::optional<int>(rank)) return std::int64_t(d.entries.size());
        return std::int64_t(-1);
    };

    // A file that needs no more than its share is read whole; one that needs more keeps exactly
    // its share and says which budget and flag cut it.
    const auto checkShare = [](const SourceFile* s, std::int64_t kept, int need, std::int64_t share,
                               LoadLimit limit, const QString& flag, QLatin1String message) {
        QVERIFY(s);
        if (need <= share) {
            QCOMPARE(s->status, SourceStatus::Ok);
            QCOMPARE(s->limit, LoadLimit::None);
            QCOMPARE(kept, std::int64_t(need));
            return;
        }
        QCOMPARE(s->status, SourceStatus::Truncated);
        QCOMPARE(s->limit, limit);
        QCOMPARE(loadLimitFlag(s->limit), flag);
        QVERIFY2(s->message.contains(message), qPrintable(s->message));
        QCOMPARE(kept, share);
    };

    // Events: 150 for the load. Dumps: 45 entries for the load.
    ReadOptions options;
    options.traceBudget.maxEventsPerLoad = 150;
    options.dumpBudget.maxEntriesPerLoad = 45;
    const std::int64_t eventShare = fairShare({100, 40, 70, 10}, 150);
    const std::int64_t entryShare = fairShare({50, 20, 5}, 45);
    QCOMPARE(eventShare, std::int64_t(50)); // 10 + 40 + 50 + 50
    QCOMPARE(entryShare, std::int64_t(20)); // 5 + 20 + 20
    // The same outcome on every read, however the two workers interleave.
    for (int attempt = 0; attempt < 5; ++attempt) {
        const TraceRead read = readFolder(dir.path(), {}, {}, options);
        std::int64_t events = 0;
        for (const auto& [rank, need] : traceEvents) {
            const std::int64_t kept = read.events.eventCountOfRank(rank);
            events += kept;
            checkShare(sourceNamed(read, traceName(rank)), kept, need, eventShare,
                       LoadLimit::TraceEventsPerLoad, QStringLiteral("--max-trace-events"),
                       QLatin1String("its share of the load's budget of 150 trace events: 50 for "
                                     "each of the 2 trace files"));
            if (QTest::currentTestFailed()) return;
        }
        QVERIFY(events <= 150);
        std::int64_t entries = 0;
        for (const auto& [rank, need] : dumpEntries) {
            const std::int64_t kept = entriesOf(read, rank);
            entries += kept;
            checkShare(sourceNamed(read, dumpName(rank)), kept, need, entryShare,
                       LoadLimit::DumpEntriesPerLoad, QStringLiteral("--max-dump-entries"),
                       QLatin1String("its share of the load's budget of 45 Flight Recorder "
                                     "entries: 20 for each of the 1 dumps"));
            if (QTest::currentTestFailed()) return;
        }
        QVERIFY(entries <= 45);
        QCOMPARE(sourceNamed(read, QStringLiteral("rank0.log"))->status, SourceStatus::Ok);
    }

    // Decompressed bytes: the traces' JSON sizes (the gzip one inflated) share the load's bytes.
    std::vector<std::int64_t> sizes;
    std::int64_t totalBytes = 0;
    for (const auto& [rank, json] : traces) {
        sizes.push_back(json.size());
        totalBytes += json.size();
    }
    ReadOptions bytesOptions;
    bytesOptions.traceBudget.maxInflatedBytesPerLoad = totalBytes * 2 / 3;
    const std::int64_t byteShare = fairShare(sizes, totalBytes * 2 / 3);
    const TraceRead bytesRead = readFolder(dir.path(), {}, {}, bytesOptions);
    int truncated = 0;
    for (const auto& [rank, json] : traces) {
        const SourceFile* s = sourceNamed(bytesRead, traceName(rank));
        QVERIFY(s);
        const std::int64_t kept = bytesRead.events.eventCountOfRank(rank);
        if (json.size() <= byteShare) {
            QCOMPARE(s->status, SourceStatus::Ok);
            QCOMPARE(kept, std::int64_t(traceEvents.at(rank)));
            continue;
        }
        ++truncated;
        QCOMPARE(s->status, SourceStatus::Truncated);
        QCOMPARE(s->limit, LoadLimit::DecompressedBytesPerLoad);
        QCOMPARE(loadLimitFlag(s->limit), QStringLiteral("--max-decompressed"));
        QVERIFY2(s->message.contains(
                     QStringLiteral("decompressed trace bytes: %1 for each").arg(byteShare)),
                 qPrintable(s->message));
        // The events that end within the share, and no more.
        const qsizetype end = json.lastIndexOf('}', qsizetype(byteShare) - 1);
        QCOMPARE(kept, std::int64_t(json.left(end + 1).count("\"ph\"")));
    }
    QCOMPARE(truncated, 2); // rank0 and rank2, the two largest

    // Raised (as --max-trace-events, --max-decompressed and --max-dump-entries raise both a
    // file's and the load's budget), every source loads whole.
    ReadOptions raised;
    raised.traceBudget.maxEvents = raised.traceBudget.maxEventsPerLoad = 220;
    raised.dumpBudget.maxEntries = raised.dumpBudget.maxEntriesPerLoad = 75;
    raised.traceBudget.maxInflatedBytes = raised.traceBudget.maxInflatedBytesPerLoad = totalBytes;
    const TraceRead whole = readFolder(dir.path(), {}, {}, raised);
    for (const auto& [rank, events] : traceEvents) {
        QCOMPARE(sourceNamed(whole, traceName(rank))->status, SourceStatus::Ok);
        QCOMPARE(whole.events.eventCountOfRank(rank), std::int64_t(events));
    }
    for (const auto& [rank, entries] : dumpEntries) {
        QCOMPARE(sourceNamed(whole, dumpName(rank))->status, SourceStatus::Ok);
        QCOMPARE(entriesOf(whole, rank), std::int64_t(entries));
    }
}

QTEST_MAIN(TestHostileInputs)
#include "tst_hostileinputs.moc"
