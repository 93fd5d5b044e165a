#include "model/trace/jsonscanner.h"
#include "model/trace/kinetocollectives.h"
#include "model/trace/kinetoreader.h"
#include "model/traceloader.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <cctype>
#include <fstream>
#include <malloc.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

using namespace rankscope;

namespace {

const QString kTraces = QStringLiteral(RANKSCOPE_TEST_DATA "/traces");
const QString kGpu = QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-gpu-samples");

std::string readAll(const QString& path)
{
    if (path.endsWith(QLatin1String(".gz"))) {
        gzFile f = gzopen(path.toStdString().c_str(), "rb");
        std::string out;
        char buf[1 << 16];
        for (int n; (n = gzread(f, buf, sizeof buf)) > 0;)
            out.append(buf, std::size_t(n));
        gzclose(f);
        return out;
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll().toStdString();
}

// The events the reader must store, counted independently: X, i/I and B (paired or not).
std::int64_t expectedEvents(const std::string& text)
{
    const auto doc = nlohmann::json::parse(text);
    const auto& events = doc.is_array() ? doc : doc.at("traceEvents");
    std::int64_t n = 0;
    for (const auto& e : events) {
        const std::string ph = e.value("ph", "");
        n += ph == "X" || ph == "i" || ph == "I" || ph == "B";
    }
    return n;
}

struct Read {
    EventStore store;
    KinetoReadResult result;
};

Read readPath(const QString& path, int rank = 0)
{
    Read r;
    KinetoReader::Options opt;
    opt.rank = rank;
    r.result = KinetoReader::readFile(path.toStdString(), r.store, opt);
    return r;
}

Read readText(const std::string& text)
{
    Read r;
    r.result = KinetoReader::readBytes(text, r.store, {});
    return r;
}

// An event as a test wrote it: its lane, its start and end in ns, its name and, where the test
// checks it, its category.
struct WrittenEvent {
    std::int64_t pid, tid, startNs, endNs;
    std::string name;
    std::optional<EventCategory> category;
};

// `r` read every event of `written` (in time order within each lane) and nothing else, into
// `lanes` lanes.
void compareLanes(const Read& r, const std::vector<WrittenEvent>& written, std::size_t lanes)
{
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QCOMPARE(r.result.events, std::int64_t(written.size()));
    QCOMPARE(r.store.lanes.size(), lanes);
    for (const Lane& lane : r.store.lanes) {
        std::size_t k = 0;
        for (const WrittenEvent& e : written) {
            if (e.pid != lane.pid || e.tid != lane.tid) continue;
            QVERIFY(k < lane.size());
            QCOMPARE(lane.startNs[k], e.startNs);
            QCOMPARE(lane.endNs[k], e.endNs);
            QVERIFY(r.store.strings.view(lane.nameId[k]) == e.name);
            if (e.category) QCOMPARE(lane.category[k], *e.category);
            ++k;
        }
        QCOMPARE(k, lane.size());
    }
}

std::vector<const CollectiveRecord*> ofOp(const EventStore& s, const char* op)
{
    std::vector<const CollectiveRecord*> out;
    for (const CollectiveRecord& c : s.collectives)
        if (s.strings.view(c.op) == op) out.push_back(&c);
    return out;
}

int stepCount(const EventStore& s)
{
    int n = 0;
    for (const Lane& lane : s.lanes)
        for (StringId id : lane.nameId)
            n += s.strings.view(id).substr(0, 13) == "ProfilerStep#";
    return n;
}

void writeFile(const QString& path, const std::string& bytes)
{
    std::ofstream(path.toStdString(), std::ios::binary) << bytes;
}

void writeGz(const QString& path, const std::string& bytes)
{
    gzFile f = gzopen(path.toStdString().c_str(), "wb");
    gzwrite(f, bytes.data(), unsigned(bytes.size()));
    gzclose(f);
}

// A synthetic Kineto-shaped trace of `n` events with a distinctive layout per event.
std::string synthetic(std::int64_t n)
{
    std::string out = R"({"schemaVersion":1,"traceEvents":[)";
    for (std::int64_t i = 0; i < n; ++i) {
        if (i) out += ',';
        out += R"({"ph":"X","cat":"cpu_op","name":"aten::op)" + std::to_string(i % 50) +
               R"(","pid":1,"tid":)" + std::to_string(i % 4) + R"(,"ts":)" +
               std::to_string(i * 10) + R"(.5,"dur":4.25,"args":{"External id":)" +
               std::to_string(i) + "}}";
    }
    return out + "]}";
}

} // namespace

class TestKinetoReader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // First: its address-space cap must not be met by heap that earlier tests freed.
    void loaderOutOfMemoryCostsOneSource();
    void fixtureCounts_data();
    void fixtureCounts();
    void healthyCollectives();
    void hangTimeoutRank1HasNoCollectiveInLastStep();
    void unusedParametersHasOneAllReduce();
    void mismatchedLastStepIsIssuedOnly();
    void missingGlooSpanStaysIssued_data();
    void missingGlooSpanStaysIssued();
    void gpuSamples_data();
    void gpuSamples();
    void ncclCollectivesCarryArgs();
    void kinetoFeatures();
    void exactTimestamps_data();
    void exactTimestamps();
    void exactTimestampsThroughTheReader();
    void layoutsAndNumberFormsReadAlike();
    void memberOrdersReadAlike();
    void numberFormsEventByEvent();
    void namesAndCategoriesEventByEvent();
    void deviceCategoriesAreDeviceLanes();
    void mtiaTraceHasDeviceLanes();
    void budgetStopsTheSource_data();
    void budgetStopsTheSource();
    void badInput_data();
    void badInput();
    void truncatedKeepsCompleteEvents();
    void truncatedFixture();
    void hundredMegabyteLine();
    void gzipFiles();
    void eventDetails();
    void gzipDetailsResumeAtCheckpoint();
    void unevenLanesKeepEveryEvent();
    void duplicateFlowIdsPairByTheRule();
    void normaliseNames_data();
    void normaliseNames();
    void fuzzRegressions_data();
    void fuzzRegressions();
    void loaderReadsFolderAndIsolatesBadFiles();
    void loaderCancelsLargeLoad();
    void loaderBudgetTruncatesOneSource();
};

void TestKinetoReader::fixtureCounts_data()
{
    QTest::addColumn<QString>("path");
    const QDir root(kTraces);
    for (const QString& scenario : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        for (const QString& f :
             QDir(root.filePath(scenario)).entryList({QStringLiteral("*.pt.trace.json")}))
            QTest::newRow(qPrintable(scenario + QLatin1Char('/') + f))
                << root.filePath(scenario + QLatin1Char('/') + f);
}

void TestKinetoReader::fixtureCounts()
{
    QFETCH(QString, path);
    const Read r = readPath(path);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QVERIFY2(r.result.message.empty(), r.result.message.c_str());
    QCOMPARE(r.store.eventCount(), expectedEvents(readAll(path)));
    QCOMPARE(r.result.events, r.store.eventCount());
    for (const Lane& lane : r.store.lanes) {
        QCOMPARE(lane.kind, LaneKind::CpuThread);
        QCOMPARE(lane.endNs.size(), lane.size());
        QCOMPARE(lane.depth.size(), lane.size());
        QVERIFY(std::is_sorted(lane.startNs.begin(), lane.startNs.end()));
        for (std::size_t i = 0; i < lane.size(); ++i)
            QVERIFY(lane.endNs[i] >= lane.startNs[i]);
    }
    // The legacy file gives ts in whole µs: ns are multiples of 1000.
    QCOMPARE(r.store.lanes.front().startNs.front() % 1000, 0);
}

void TestKinetoReader::healthyCollectives()
{
    for (int rank : {0, 1}) {
        const Read r =
            readPath(kTraces + QStringLiteral("/healthy/rank%1.pt.trace.json").arg(rank), rank);
        QCOMPARE(ofOp(r.store, "all_reduce").size(), std::size_t(20));
        QCOMPARE(ofOp(r.store, "broadcast").size(), std::size_t(2));
        QCOMPARE(r.store.collectives.size(), std::size_t(22));
        std::int64_t seq = 0;
        for (const CollectiveRecord& c : r.store.collectives) {
            QCOMPARE(c.rank, rank);
            QCOMPARE(c.state, CollectiveRecord::State::Completed);
            QVERIFY(c.execStartNs >= c.issueStartNs);
            QVERIFY(c.execEndNs >= c.execStartNs);
            QCOMPARE(c.seq, ++seq);
            QVERIFY(!c.seqFromSource);
            QVERIFY(c.step >= 0);
        }
        // DDP's two bucket broadcasts happen in the second step span (step 1).
        for (const CollectiveRecord* b : ofOp(r.store, "broadcast"))
            QCOMPARE(b->step, 1);
        // Two all_reduce per training step 0..9.
        for (int step = 0; step < 10; ++step)
            QCOMPARE(std::count_if(r.store.collectives.begin(), r.store.collectives.end(),
                                   [&](const CollectiveRecord& c) {
                                       return c.step == step &&
                                              r.store.strings.view(c.op) == "all_reduce";
                                   }),
                     2);
        // Execution is on a gloo worker lane, the call on the main thread.
        const CollectiveRecord& c = r.store.collectives.front();
        QCOMPARE(
            r.store.strings
                .view(r.store.lanes[std::size_t(c.laneIndex)].nameId[std::size_t(c.eventIndex)])
                .substr(0, 5),
            std::string_view("gloo:"));
    }
}

void TestKinetoReader::hangTimeoutRank1HasNoCollectiveInLastStep()
{
    const Read r1 = readPath(kTraces + QStringLiteral("/hang_timeout/rank1.pt.trace.json"), 1);
    const int last = stepCount(r1.store) - 1;
    QVERIFY(last > 0);
    for (const CollectiveRecord& c : r1.store.collectives)
        QVERIFY(c.step < last);
    // The ranks that waited: their last all_reduce ran for about the 10 s timeout.
    for (int rank : {0, 2}) {
        const Read r = readPath(
            kTraces + QStringLiteral("/hang_timeout/rank%1.pt.trace.json").arg(rank), rank);
        const CollectiveRecord& c = r.store.collectives.back();
        QCOMPARE(r.store.strings.view(c.op), std::string_view("all_reduce"));
        QVERIFY(c.execEndNs - c.execStartNs > 9'000'000'000);
        QCOMPARE(c.step, stepCount(r.store) - 1);
    }
}

void TestKinetoReader::unusedParametersHasOneAllReduce()
{
    for (int rank : {0, 1}) {
        const Read r = readPath(
            kTraces + QStringLiteral("/unused_parameters/rank%1.pt.trace.json").arg(rank), rank);
        QCOMPARE(r.store.collectives.size(), std::size_t(1));
        QCOMPARE(ofOp(r.store, "all_reduce").size(), std::size_t(1));
        QCOMPARE(r.store.collectives.front().state, CollectiveRecord::State::Completed);
    }
}

void TestKinetoReader::mismatchedLastStepIsIssuedOnly()
{
    for (int rank : {0, 1}) {
        const Read r = readPath(
            kTraces + QStringLiteral("/mismatched_collective/rank%1.pt.trace.json").arg(rank),
            rank);
        // DETAIL mode: the wrapper's own gloo:send/recv/all_gather are not user collectives.
        QCOMPARE(ofOp(r.store, "all_gather").size(), std::size_t(0));
        QCOMPARE(ofOp(r.store, "send").size(), std::size_t(0));
        const CollectiveRecord& last = r.store.collectives.back();
        QCOMPARE(r.store.strings.view(last.op), std::string_view("all_reduce"));
        QCOMPARE(last.state, CollectiveRecord::State::Issued);
        QCOMPARE(last.execStartNs, std::int64_t(-1));
        QCOMPARE(last.step, stepCount(r.store) - 1);
        for (std::size_t i = 0; i + 1 < r.store.collectives.size(); ++i)
            QCOMPARE(r.store.collectives[i].state, CollectiveRecord::State::Completed);
    }
}

void TestKinetoReader::missingGlooSpanStaysIssued_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("rank");
    QTest::addColumn<QString>("op");
    QTest::addColumn<bool>("executed");
    QTest::newRow("rank_crash r0")
        << QStringLiteral("rank_crash/rank0") << 0 << QStringLiteral("all_reduce") << false;
    QTest::newRow("rank_crash r1")
        << QStringLiteral("rank_crash/rank1") << 1 << QStringLiteral("all_reduce") << true;
    QTest::newRow("uneven r0") << QStringLiteral("uneven_inputs/rank0") << 0
                               << QStringLiteral("all_reduce") << false;
    QTest::newRow("uneven r1") << QStringLiteral("uneven_inputs/rank1") << 1
                               << QStringLiteral("barrier") << true;
}

void TestKinetoReader::missingGlooSpanStaysIssued()
{
    QFETCH(QString, file);
    QFETCH(int, rank);
    QFETCH(QString, op);
    QFETCH(bool, executed);
    const Read r =
        readPath(kTraces + QLatin1Char('/') + file + QStringLiteral(".pt.trace.json"), rank);
    const CollectiveRecord& last = r.store.collectives.back();
    QCOMPARE(QString::fromStdString(std::string(r.store.strings.view(last.op))), op);
    QCOMPARE(last.state,
             executed ? CollectiveRecord::State::Completed : CollectiveRecord::State::Issued);
    QCOMPARE(last.step, stepCount(r.store) - 1);
}

void TestKinetoReader::gpuSamples_data()
{
    QTest::addColumn<QString>("file");
    for (const QString& f : QDir(kGpu).entryList({QStringLiteral("*.json.gz")}))
        QTest::newRow(qPrintable(f)) << f;
}

void TestKinetoReader::gpuSamples()
{
    QFETCH(QString, file);
    const QString path = kGpu + QLatin1Char('/') + file;
    const Read r = readPath(path);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QCOMPARE(r.store.eventCount(), expectedEvents(readAll(path)));
    // The samples are named by their job's size; distributedInfo.world_size says the same.
    const QString ranks = file.section(QLatin1Char('_'), 1, 1);
    QCOMPARE(r.result.worldSize, ranks.chopped(4).toInt());
    int gpuLanes = 0;
    for (const Lane& lane : r.store.lanes)
        gpuLanes += lane.kind == LaneKind::GpuStream;
    QVERIFY(gpuLanes > 0);
    QVERIFY(!r.store.collectives.empty());
    int completedCalls = 0;
    for (const CollectiveRecord& c : r.store.collectives) {
        QVERIFY(!r.store.strings.view(c.op).empty());
        if (c.issueStartNs < 0) {
            // A kernel whose launch lies before the trace window: only the GPU side is known.
            QCOMPARE(c.state, CollectiveRecord::State::Completed);
            QVERIFY(c.execStartNs >= 0);
            continue;
        }
        QVERIFY2(!r.store.strings.view(c.dtype).empty(), file.toUtf8().constData());
        QVERIFY(c.inNelems >= 0);
        if (c.state == CollectiveRecord::State::Completed) {
            QVERIFY(c.execStartNs >= c.issueStartNs);
            ++completedCalls;
        }
    }
    // The calls are tied to their kernels (by flow or correlation id), bar the ones whose
    // kernels ran after the profiler stopped.
    QVERIFY(completedCalls > 0);
}

void TestKinetoReader::ncclCollectivesCarryArgs()
{
    const Read r = readPath(kGpu + QStringLiteral("/nccl_2rank_rank0.json.gz"));
    const auto ar = ofOp(r.store, "all_reduce");
    const auto bc = ofOp(r.store, "broadcast");
    QCOMPARE(ar.size(), std::size_t(15));
    QCOMPARE(bc.size(), std::size_t(6));
    for (const CollectiveRecord* c : ar) {
        QCOMPARE(r.store.strings.view(c->processGroupName), std::string_view("0"));
        QCOMPARE(r.store.strings.view(c->processGroupDesc), std::string_view("default_pg"));
        QCOMPARE(c->groupSize, 2);
        QCOMPARE(r.store.rankLists.ranks(c->groupRanks), (std::vector<int>{0, 1}));
        QCOMPARE(r.store.strings.view(c->dtype), std::string_view("Float"));
        QVERIFY(c->inNelems > 0);
        QCOMPARE(c->state, CollectiveRecord::State::Completed);
        // CPU call and GPU kernel are tied together through the launch flow.
        QVERIFY(c->issueStartNs > 0 && c->execStartNs > c->issueStartNs);
        const Lane& lane = r.store.lanes[std::size_t(c->laneIndex)];
        QCOMPARE(lane.kind, LaneKind::GpuStream);
        QCOMPARE(lane.category[std::size_t(c->eventIndex)], EventCategory::CommKernel);
    }
    // baseTimeNanoseconds is applied: epoch ns in 2024.
    QVERIFY(r.store.timeRangeNs().first > 1'700'000'000'000'000'000);
    QVERIFY(r.result.flows > 0);

    const Read f = readPath(kGpu + QStringLiteral("/fsdp_16rank_rank0.json.gz"));
    for (const char* op : {"all_to_all", "all_reduce", "all_gather", "reduce_scatter"})
        QVERIFY2(!ofOp(f.store, op).empty(), op);
}

void TestKinetoReader::kinetoFeatures()
{
    const std::string text = R"J({"baseTimeNanoseconds": 1000000, "traceEvents": [
      {"ph":"M","name":"thread_name","pid":7,"tid":"stream 3","args":{"name":"stream 3 (comm)"}},
      {"ph":"M","name":"process_name","pid":"Spans","args":{"name":"spans"}},
      {"ph":"B","name":"outer","cat":"CPU_OP","pid":1,"tid":1,"ts":1.5},
      {"ph":"X","name":"inner","cat":"Cpu_Op","pid":1,"tid":1,"ts":2.0004,"dur":1.0006},
      {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":3.25,"dur":0.5},
      {"ph":"s","id":42,"cat":"ac2g","name":"ac2g","pid":1,"tid":1,"ts":3.25},
      {"ph":"X","name":"gemm","cat":"Kernel","pid":7,"tid":"stream 3","ts":5,"dur":2},
      {"ph":"f","id":42,"cat":"ac2g","name":"ac2g","pid":7,"tid":"stream 3","ts":5,"bp":"e"},
      {"ph":"i","name":"mark","s":"t","pid":1,"tid":1,"ts":4},
      {"ph":"C","name":"mem","pid":1,"ts":4,"args":{"bytes":10}},
      {"ph":"X","name":"late","pid":"Spans","tid":"Traces","ts":1e1,"dur":0},
      {"ph":"E","pid":9,"tid":9,"ts":3},
      {"ph":"B","name":"open","pid":1,"tid":2,"ts":6}
    ]})J";
    const Read r = readText(text);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QCOMPARE(r.store.eventCount(), std::int64_t(7));
    QCOMPARE(r.result.counters, std::int64_t(1));
    QCOMPARE(r.result.skipped, std::int64_t(1)); // the E without B
    const Lane* main = nullptr;
    const Lane* gpu = nullptr;
    const Lane* open = nullptr;
    for (const Lane& l : r.store.lanes) {
        if (l.kind == LaneKind::GpuStream) gpu = &l;
        if (l.pid == 1 && l.tid == 1) main = &l;
        if (l.pid == 1 && l.tid == 2) open = &l;
    }
    QVERIFY(main && gpu && open);
    QCOMPARE(gpu->pid, std::int64_t(7));
    QCOMPARE(gpu->tid, std::int64_t(3));
    QCOMPARE(gpu->name, std::string("stream 3 (comm)"));
    QCOMPARE(gpu->category[0], EventCategory::Kernel);
    QCOMPARE(main->size(), std::size_t(4));
    QCOMPARE(main->startNs[0], std::int64_t(1'000'000 + 1500));
    QCOMPARE(main->startNs[1], std::int64_t(1'000'000 + 2000)); // 2.0004 µs rounds to 2000 ns
    QCOMPARE(main->endNs[1], std::int64_t(1'000'000 + 3001));
    QCOMPARE(main->category[0], EventCategory::CpuOp);
    QCOMPARE(main->depth[0], std::uint8_t(0));
    QCOMPARE(main->depth[1], std::uint8_t(1));
    QCOMPARE(main->depth[2], std::uint8_t(1));
    QCOMPARE(main->depth[3], std::uint8_t(1)); // the instant at 4 µs, inside "outer"
    // B without E ("outer", "open"): closed at the trace end and marked unfinished.
    QVERIFY(main->isUnfinished(0));
    QVERIFY(!main->isUnfinished(1));
    QVERIFY(open->isUnfinished(0));
    QCOMPARE(open->endNs[0], r.store.timeRangeNs().second);
    QCOMPARE(main->endNs[0], r.store.timeRangeNs().second);
    // The flow ties the launch to the kernel.
    QCOMPARE(r.store.flows.size(), std::size_t(1));
    const int gpuIndex = int(gpu - r.store.lanes.data());
    const FlowLink* f = r.store.flowInto(gpuIndex, 0);
    QVERIFY(f);
    const Lane& from = r.store.lanes[std::size_t(f->fromLane)];
    QCOMPARE(r.store.strings.view(from.nameId[std::size_t(f->fromEvent)]),
             std::string_view("cudaLaunchKernel"));
    QCOMPARE(r.store.strings.view(f->category), std::string_view("ac2g"));
}

void TestKinetoReader::exactTimestamps_data()
{
    QTest::addColumn<QString>("us");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<qint64>("ns");
    // Epoch µs with ns fractions: 16 integer digits and 3 fractional ones (19 significant), more
    // than a double's 15-16, which rounds them to multiples of 256 ns.
    QTest::newRow("epoch-16+3") << QStringLiteral("1712195495519689.047") << true
                                << qint64(1712195495519689047);
    QTest::newRow("epoch-16") << QStringLiteral("1682725898236567") << true
                              << qint64(1682725898236567000);
    QTest::newRow("epoch-odd-ns") << QStringLiteral("1712195495519695.813") << true
                                  << qint64(1712195495519695813);
    QTest::newRow("19-digit") << QStringLiteral("9223372036854775.807") << true
                              << qint64(9223372036854775807);
    QTest::newRow("19-digit-overflow")
        << QStringLiteral("9223372036854775.808") << false << qint64(0);
    QTest::newRow("20-digit") << QStringLiteral("92233720368547758.07") << false << qint64(0);
    QTest::newRow("relative") << QStringLiteral("4203669604595.407") << true
                              << qint64(4203669604595407);
    // Below 1 ns: rounded to nearest, half away from zero, on any number of digits (up to 9
    // fractional digits and beyond).
    QTest::newRow("frac-9") << QStringLiteral("1712195495519689.047499999") << true
                            << qint64(1712195495519689047);
    QTest::newRow("frac-9-up") << QStringLiteral("1712195495519689.047500000") << true
                               << qint64(1712195495519689048);
    QTest::newRow("frac-4") << QStringLiteral("0.0005") << true << qint64(1);
    QTest::newRow("frac-4-down") << QStringLiteral("0.0004") << true << qint64(0);
    QTest::newRow("frac-carry") << QStringLiteral("1.9999") << true << qint64(2000);
    QTest::newRow("negative") << QStringLiteral("-2.5") << true << qint64(-2500);
    QTest::newRow("negative-round") << QStringLiteral("-0.0016") << true << qint64(-2);
    QTest::newRow("exponent") << QStringLiteral("1.712195495519689047e15") << true
                              << qint64(1712195495519689047);
    QTest::newRow("exponent-neg") << QStringLiteral("25e-3") << true << qint64(25);
    QTest::newRow("exponent-plus") << QStringLiteral("1E+3") << true << qint64(1000000);
    QTest::newRow("leading-zeros") << QStringLiteral("000012.000") << true << qint64(12000);
    QTest::newRow("zero") << QStringLiteral("0") << true << qint64(0);
    QTest::newRow("many-digits") << QStringLiteral(
                                        "1712195495519689.0470000000000000000000000000001")
                                 << true << qint64(1712195495519689047);
    QTest::newRow("no-digits") << QStringLiteral("-") << false << qint64(0);
    QTest::newRow("dot-only") << QStringLiteral("1.") << false << qint64(0);
    QTest::newRow("bad-exponent") << QStringLiteral("1e") << false << qint64(0);
    QTest::newRow("junk") << QStringLiteral("1.5x") << false << qint64(0);
}

void TestKinetoReader::exactTimestamps()
{
    QFETCH(QString, us);
    QFETCH(bool, ok);
    QFETCH(qint64, ns);
    std::int64_t out = 0;
    const std::string text = us.toStdString();
    QCOMPARE(json::microsToNanos(text, out), ok);
    if (ok) QCOMPARE(qint64(out), ns);
}

void TestKinetoReader::exactTimestampsThroughTheReader()
{
    // An epoch-µs trace and a relative one with baseTimeNanoseconds: both land on exact ns.
    const Read epoch = readText(R"({"traceEvents":[
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1712195495519689.047,"dur":63.813}]})");
    QCOMPARE(int(epoch.result.status), int(SourceStatus::Ok));
    QCOMPARE(epoch.store.lanes.at(0).startNs.at(0), std::int64_t(1712195495519689047));
    QCOMPARE(epoch.store.lanes.at(0).endNs.at(0), std::int64_t(1712195495519752860));
    const Read relative = readText(R"({"baseTimeNanoseconds": 1735632360000000000, "traceEvents":[
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":4203669604595.407,"dur":18.404}]})");
    QCOMPARE(relative.store.lanes.at(0).startNs.at(0),
             std::int64_t(1735632360000000000 + 4203669604595407));
    QCOMPARE(relative.store.lanes.at(0).endNs.at(0),
             std::int64_t(1735632360000000000 + 4203669604613811));
}

// The same events in the layouts writers use (Kineto's ", " and ": ", compact separators,
// whitespace and newlines around every token) and with their times in plain form, in exponent
// form and with half a nanosecond more: each event lands on the lane, times and name it
// was generated with.
void TestKinetoReader::layoutsAndNumberFormsReadAlike()
{
    struct Ev {
        std::int64_t ts, dur;
        int tid;
        std::string name;
    };
    std::mt19937_64 rng(11);
    std::vector<Ev> evs;
    std::int64_t t = 1712195495519689047; // ns
    for (int i = 0; i < 300; ++i) {
        t += 1000 + std::int64_t(rng() % 100000);
        evs.push_back({t, std::int64_t(rng() % 5000000), int(rng() % 3) + 1,
                       "op" + std::to_string(rng() % 7)});
    }
    const auto micros = [](std::int64_t ns, int form) {
        std::string out = std::to_string(ns / 1000);
        if (form != 1) out += '.';
        out += std::to_string(1000 + ns % 1000).substr(1);
        if (form == 1) out += "e-3";
        if (form == 2) out += '5'; // half a nanosecond: rounded away from zero
        return out;
    };
    const std::vector<std::pair<std::string, std::string>> layouts = {
        {", ", ": "}, {",", ":"}, {" ,\n\t", " :\r\n "}};
    for (const auto& [sep, colon] : layouts)
        for (int form = 0; form < 3; ++form) {
            std::string text = "{\"traceEvents\":[";
            for (std::size_t i = 0; i < evs.size(); ++i) {
                const Ev& e = evs[i];
                const auto member = [&](const char* key, const std::string& value, bool last) {
                    text += '"';
                    text += key;
                    text += '"';
                    text += colon;
                    text += value;
                    text += last ? std::string("}") : sep;
                };
                if (i) text += sep;
                text += '{';
                member("ph", "\"X\"", false);
                std::string quoted(1, '"');
                quoted += e.name;
                quoted += '"';
                member("name", quoted, false);
                member("pid", "1", false);
                member("tid", std::to_string(e.tid), false);
                member("ts", micros(e.ts, form), false);
                member("dur", micros(e.dur, form), true);
            }
            text += "]}";
            std::vector<WrittenEvent> written;
            const std::int64_t rounded = form == 2 ? 1 : 0;
            for (const Ev& e : evs)
                written.push_back({1, e.tid, e.ts + rounded, e.ts + rounded + e.dur + rounded,
                                   e.name, std::nullopt});
            compareLanes(readText(text), written, 3);
            if (QTest::currentTestFailed()) return;
        }
}

// Events in Kineto's own member order (which the reader reads member by member where it expects
// each key, in one compare when spaced as Kineto spaces them), in PyTorch's multi-line layout,
// with other spacing, with the members shuffled, with an unknown member or with a repeated one
// (the last wins) anywhere: each event's lane, start, end, name and category against the values
// it was written from.
void TestKinetoReader::memberOrdersReadAlike()
{
    struct Ev {
        int kind; // an index into `kinds`
        std::string name;
        int pid, tid;
        std::int64_t ts, dur; // ns
    };
    const std::vector<std::pair<std::string, EventCategory>> kinds = {
        {"cpu_op", EventCategory::CpuOp},
        {"cuda_runtime", EventCategory::Runtime},
        {"kernel", EventCategory::Kernel},
        {"user_annotation", EventCategory::UserAnnotation}};
    std::mt19937_64 rng(33);
    std::vector<Ev> evs;
    std::int64_t t = 1712195495519689047;
    for (int i = 0; i < 400; ++i) {
        t += 1000 + std::int64_t(rng() % 100000);
        const int kind = int(rng() % kinds.size());
        const bool gpu = kinds[std::size_t(kind)].second == EventCategory::Kernel;
        evs.push_back({kind, "op" + std::to_string(rng() % 9), gpu ? 0 : 11,
                       gpu ? 7 + int(rng() % 2) * 7 : 12, t, std::int64_t(rng() % 5000000)});
    }
    const auto micros = [](std::int64_t ns) {
        return std::to_string(ns / 1000) + '.' + std::to_string(1000 + ns % 1000).substr(1);
    };
    for (int layout = 0; layout < 6; ++layout) {
        std::string text = "{\"traceEvents\": [";
        for (std::size_t i = 0; i < evs.size(); ++i) {
            const Ev& e = evs[i];
            std::vector<std::pair<std::string, std::string>> members = {
                {"ph", "\"X\""},
                {"cat", '"' + kinds[std::size_t(e.kind)].first + '"'},
                {"name", '"' + e.name + '"'},
                {"pid", std::to_string(e.pid)},
                {"tid", std::to_string(e.tid)},
                {"ts", micros(e.ts)},
                {"dur", micros(e.dur)},
                {"args", "{\"correlation\": " + std::to_string(i) + ", \"x\": [\"}\"]}"}};
            if (layout == 3) std::shuffle(members.begin(), members.end(), rng);
            if (layout == 4)
                members.insert(members.begin() + std::ptrdiff_t(rng() % (members.size() + 1)),
                               {"ext", "[1, {\"cat\": \"kernel\"}]"});
            if (layout == 5) {
                // A decoy of one member, written before it.
                const std::size_t real = rng() % members.size();
                const std::string decoy = members[real].first == "ph"     ? "\"B\""
                                          : members[real].first == "cat"  ? "\"kernel\""
                                          : members[real].first == "name" ? "\"decoy\""
                                          : members[real].first == "args" ? "{}"
                                                                          : "99";
                members.insert(members.begin() + std::ptrdiff_t(rng() % (real + 1)),
                               {members[real].first, decoy});
            }
            text += i ? ",\n  {" : "\n  {";
            for (std::size_t m = 0; m < members.size(); ++m) {
                const std::string& key = members[m].first;
                if (layout == 1) // PyTorch's lines: ph..tid, ts and dur, args
                    text += m == 0 ? "\n    " : key == "ts" || key == "args" ? ",\n    " : ", ";
                else if (layout == 2)
                    text += m == 0 ? " " : " ,  ";
                else if (m > 0)
                    text += ", ";
                text += '"' + key + '"' + (layout == 2 ? " :  " : ": ") + members[m].second;
            }
            text += layout == 1 ? "\n  }" : "}";
        }
        text += "\n]}";
        std::vector<WrittenEvent> written;
        for (const Ev& e : evs)
            written.push_back(
                {e.pid, e.tid, e.ts, e.ts + e.dur, e.name, kinds[std::size_t(e.kind)].second});
        compareLanes(readText(text), written, 3);
        if (QTest::currentTestFailed()) return;
    }
}

// Numbers in every form the reader's eight-digits-at-a-time path takes (1-16 integer digits,
// 0-24 fractional ones, the 4th fractional digit rounding either way, leading zeros, every
// separator after them) and in the forms it hands to the general path (a sign, an exponent,
// 17-19 digits, a fraction in an id): each event's start, end, pid and tid against values
// computed here from the digit strings in integer arithmetic.
void TestKinetoReader::numberFormsEventByEvent()
{
    __extension__ typedef __int128 Wide; // every value and sum below, with room to spare
    std::mt19937_64 rng(22);
    const auto digits = [&rng](std::size_t n, bool leadingNonZero) {
        std::string s;
        for (std::size_t i = 0; i < n; ++i)
            s += char('0' + (leadingNonZero && i == 0 ? 1 + rng() % 9 : rng() % 10));
        return s;
    };
    // The value of decimal text (sign, digits, fraction, exponent) times 10^shift, truncated
    // toward zero or rounded half away from zero on the first digit below 1.
    const auto decimal = [](const std::string& s, int shift, bool round) {
        std::size_t i = 0;
        const bool neg = s[0] == '-';
        if (neg) ++i;
        std::string mantissa;
        int point = 0;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            mantissa += s[i++];
            ++point;
        }
        if (i < s.size() && s[i] == '.')
            for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));)
                mantissa += s[i++];
        if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) point += std::stoi(s.substr(i + 1));
        point += shift;
        Wide v = 0;
        for (int k = 0; k < point; ++k)
            v = v * 10 + (std::size_t(k) < mantissa.size() ? mantissa[std::size_t(k)] - '0' : 0);
        if (round && point >= 0 && std::size_t(point) < mantissa.size() &&
            mantissa[std::size_t(point)] >= '5')
            ++v;
        return neg ? -v : v;
    };
    std::vector<std::string> micros;
    for (std::size_t whole = 1; whole <= 16; ++whole)
        for (std::size_t frac : {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 24}) {
            // Up to 4.6e15 µs, so that a start plus a duration stays inside int64 ns.
            std::string w = digits(whole, whole > 1);
            if (whole == 16) w[0] = char('1' + rng() % 4);
            std::string f = digits(frac, false);
            if (frac >= 4) f[3] = char('4' + rng() % 2); // just below and at half a ns
            micros.push_back(frac ? w + '.' + f : w);
        }
    for (const char* handOff : {"0",
                                "0.0",
                                "0.0005",
                                "0.0004999",
                                "000123.4567",
                                "-12.5",
                                "-0.0005",
                                "-1234567.8915",
                                "-0",
                                "1.5e3",
                                "1.5E+3",
                                "25e-4",
                                "2.5e-3",
                                "123456789e-3",
                                "7E0",
                                "0.000001e9",
                                "00000000000000001234.5678",
                                "12345678901234567e-3",
                                "9223372036854775.807",
                                "9223372036854774.9994",
                                "1234567890123456.7895"})
        micros.push_back(handOff);
    std::vector<std::string> ids;
    for (std::size_t n = 1; n <= 19; ++n)
        ids.push_back(n == 19 ? "9" + digits(18, false).replace(0, 1, "0") : digits(n, n > 1));
    for (const char* handOff : {"-5", "-123456789012", "12.9", "7.0", "1e3", "25E2", "1.5e1",
                                "-7.5", "0012", "00000000000000000042"})
        ids.push_back(handOff);

    std::map<std::pair<std::int64_t, std::int64_t>,
             std::vector<std::pair<std::int64_t, std::int64_t>>>
        byLane;
    const std::vector<std::string> seps = {", ", ",", " ,\n", ",\t"};
    const std::vector<std::string> colons = {": ", ":", " : "};
    const std::vector<std::string> closers = {"}", " }", "\n}"};
    std::string text = "{\"traceEvents\": [";
    std::int64_t events = 0;
    for (std::size_t i = 0; i < micros.size() * 2; ++i) {
        const std::string& ts = micros[i % micros.size()];
        std::string dur = micros[(i * 7 + 3) % micros.size()];
        const std::string& pid = ids[i % ids.size()];
        const std::string& tid = ids[(i / ids.size() + i) % ids.size()];
        const Wide start = decimal(ts, 3, true);
        Wide durNs = decimal(dur, 3, true);
        if (start + std::max<Wide>(durNs, 0) > std::numeric_limits<std::int64_t>::max()) {
            dur = "0";
            durNs = 0;
        }
        const auto p = std::int64_t(decimal(pid, 0, false));
        const auto t = std::int64_t(decimal(tid, 0, false));
        byLane[{p, t}].push_back(
            {std::int64_t(start), std::int64_t(start + std::max<Wide>(durNs, 0))});
        std::vector<std::pair<std::string, std::string>> members = {
            {"ph", "\"X\""}, {"name", "\"n\""}, {"pid", pid},
            {"tid", tid},    {"ts", ts},        {"dur", dur}};
        std::shuffle(members.begin() + 2, members.end(), rng);
        text += events++ ? seps[i % seps.size()] : std::string();
        text += '{';
        for (std::size_t m = 0; m < members.size(); ++m) {
            text +=
                '"' + members[m].first + '"' + colons[(i + m) % colons.size()] + members[m].second;
            text +=
                m + 1 < members.size() ? seps[(i + m) % seps.size()] : closers[i % closers.size()];
        }
    }
    text += "]}";
    const Read r = readText(text);
    QVERIFY2(r.result.status == SourceStatus::Ok, r.result.message.c_str());
    QCOMPARE(r.result.events, events);
    QCOMPARE(r.store.lanes.size(), byLane.size());
    for (const Lane& lane : r.store.lanes) {
        const auto it = byLane.find({lane.pid, lane.tid});
        QVERIFY(it != byLane.end());
        std::vector<std::pair<std::int64_t, std::int64_t>> stored;
        for (std::size_t k = 0; k < lane.size(); ++k)
            stored.push_back({lane.startNs[k], lane.endNs[k]});
        std::vector<std::pair<std::int64_t, std::int64_t>> expected = it->second;
        std::sort(stored.begin(), stored.end());
        std::sort(expected.begin(), expected.end());
        QCOMPARE(stored, expected);
    }
}

// Names of every length up to 70 bytes, plain and with an escape at every position (the string
// scan reads 16 bytes at a time), names that share their length and first and last 8 bytes (the
// interning cache's tag), and more categories in turn than the reader remembers at once: each
// event's name as nlohmann_json decodes it, and its category by the cat rules of eventstore.h.
void TestKinetoReader::namesAndCategoriesEventByEvent()
{
    const std::vector<std::pair<std::string, EventCategory>> cats = {
        {"kernel", EventCategory::Kernel},
        {"cpu_op", EventCategory::CpuOp},
        {"KERNEL", EventCategory::Kernel},
        {"gpu_memcpy", EventCategory::Memcpy},
        {"cuda_runtime", EventCategory::Runtime},
        {"python_function", EventCategory::PythonFunction},
        {"user_annotation", EventCategory::UserAnnotation},
        {"gpu_user_annotation", EventCategory::UserAnnotation},
        {"Memset", EventCategory::Memset},
        {"something_else", EventCategory::Other},
        {"", EventCategory::Other}};
    std::vector<std::string> names; // as JSON string contents
    for (int len = 0; len <= 70; ++len) {
        std::string plain;
        for (int i = 0; i < len; ++i)
            plain += char('a' + (i * 7 + len) % 26);
        names.push_back(plain);
        for (int at = 0; at <= len; ++at)
            for (const char* esc : {"\\\"", "\\\\", "\\u00e9", "\\n"})
                names.push_back(plain.substr(0, std::size_t(at)) + esc +
                                plain.substr(std::size_t(at)));
    }
    for (char middle = 'A'; middle <= 'H'; ++middle)
        names.push_back("headhead" + std::string(20, middle) + "tailtail");
    std::string text = "{\"traceEvents\": [";
    for (std::size_t i = 0; i < names.size() * 2; ++i) {
        // Each name twice, the second time after the others, so both cache hits and misses run.
        const std::string& name = names[i % names.size()];
        const std::string& cat = cats[i % cats.size()].first;
        text += (i ? ",\n" : "") + std::string("{\"ph\": \"X\", \"cat\": \"") + cat +
                "\", \"name\": \"x" + name + "\", \"pid\": 1, \"tid\": " + std::to_string(i % 3) +
                ", \"ts\": " + std::to_string(1000 + i) + ", \"dur\": 0.5}";
    }
    text += "]}";
    const auto doc = nlohmann::json::parse(text);
    const Read r = readText(text);
    QCOMPARE(r.result.status, SourceStatus::Ok);
    QCOMPARE(r.result.events, std::int64_t(names.size() * 2));
    // Every event has its own start: find it by the start.
    std::map<std::int64_t, std::pair<std::string, EventCategory>> stored;
    for (const Lane& lane : r.store.lanes)
        for (std::size_t i = 0; i < lane.size(); ++i)
            stored[lane.startNs[i]] = {std::string(r.store.strings.view(lane.nameId[i])),
                                       lane.category[i]};
    const auto& events = doc.at("traceEvents");
    QCOMPARE(stored.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto it = stored.find(std::int64_t(1000 + i) * 1000);
        QVERIFY(it != stored.end());
        QCOMPARE(it->second.first, events[i].at("name").get<std::string>());
        QCOMPARE(it->second.second, cats[i % cats.size()].second);
    }
}

void TestKinetoReader::deviceCategoriesAreDeviceLanes()
{
    // Device work of other accelerators (MTIA's on-device events, a backend's own prefix) goes
    // on device lanes; host-side runtimes of every backend stay on the CPU thread.
    const Read r = readText(R"({"traceEvents":[
      {"ph":"X","cat":"mtia_ccp_events","name":"fc-dtype_Float","pid":9,"tid":801,"ts":10,"dur":5},
      {"ph":"X","cat":"mtia_ccp_events","name":"dma_request","pid":9,"tid":802,"ts":11,"dur":2},
      {"ph":"X","cat":"mtia_ccp_events","name":"hccl::all_reduce","pid":9,"tid":803,"ts":12,"dur":3},
      {"ph":"X","cat":"mlu_memcpy","name":"Memcpy HtoD","pid":10,"tid":1,"ts":1,"dur":1},
      {"ph":"X","cat":"xpu_user_annotation","name":"step","pid":11,"tid":1,"ts":1,"dur":1},
      {"ph":"X","cat":"mtia_runtime","name":"runFunction","pid":100,"tid":100,"ts":9,"dur":1},
      {"ph":"X","cat":"xpu_runtime","name":"zeCommandListAppendLaunchKernel","pid":100,"tid":100,"ts":11,"dur":1},
      {"ph":"X","cat":"privateuse1_driver","name":"launch","pid":100,"tid":100,"ts":13,"dur":1},
      {"ph":"X","cat":"hpu_op","name":"op","pid":100,"tid":100,"ts":15,"dur":1}]})");
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    std::map<std::pair<std::int64_t, std::int64_t>, const Lane*> lanes;
    for (const Lane& l : r.store.lanes)
        lanes[{l.pid, l.tid}] = &l;
    QCOMPARE(lanes.size(), std::size_t(6));
    for (const auto& [key, lane] : lanes)
        QCOMPARE(lane->kind, key.first == 100 ? LaneKind::CpuThread : LaneKind::GpuStream);
    QCOMPARE(lanes.at({9, 801})->category[0], EventCategory::Kernel);
    QCOMPARE(lanes.at({9, 802})->category[0], EventCategory::Memcpy);
    QCOMPARE(lanes.at({9, 803})->category[0], EventCategory::CommKernel);
    QCOMPARE(lanes.at({10, 1})->category[0], EventCategory::Memcpy);
    QCOMPARE(lanes.at({11, 1})->category[0], EventCategory::UserAnnotation);
    for (EventCategory c : lanes.at({100, 100})->category)
        QCOMPARE(c, EventCategory::Runtime);
}

void TestKinetoReader::mtiaTraceHasDeviceLanes()
{
    // A real MTIA trace: the threads of its mtia_ccp_events (found here in the raw JSON) are
    // device lanes holding exactly those events; the rest (host ops, mtia_runtime, also where it
    // shares the device's pid) are CPU threads.
    const QString path = QStringLiteral(
        RANKSCOPE_TEST_DATA "/kineto-real-hta/mtia_inference_trace/mtia_inference_rank_0.json.gz");
    const auto doc = nlohmann::json::parse(readAll(path));
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> deviceEventsOf;
    std::int64_t deviceEvents = 0;
    for (const auto& e : doc.at("traceEvents")) {
        if (e.value("ph", "") != "X" || e.value("cat", "") != "mtia_ccp_events") continue;
        ++deviceEventsOf[{e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()}];
        ++deviceEvents;
    }
    QVERIFY(deviceEvents > 0);
    const Read r = readPath(path);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    std::size_t deviceLanes = 0;
    for (const Lane& l : r.store.lanes) {
        const auto it = deviceEventsOf.find({l.pid, l.tid});
        QCOMPARE(l.kind, it != deviceEventsOf.end() ? LaneKind::GpuStream : LaneKind::CpuThread);
        if (it == deviceEventsOf.end()) continue;
        ++deviceLanes;
        QCOMPARE(std::int64_t(l.size()), it->second);
    }
    QCOMPARE(deviceLanes, deviceEventsOf.size());
}

void TestKinetoReader::budgetStopsTheSource_data()
{
    QTest::addColumn<qint64>("maxEvents");
    QTest::addColumn<qint64>("maxBytes");
    QTest::addColumn<QString>("reason");
    QTest::newRow("events") << qint64(300) << qint64(1'000'000'000) << QStringLiteral("300 events");
    QTest::newRow("bytes") << qint64(50'000'000) << qint64(20'000)
                           << QStringLiteral("20000 decompressed bytes");
}

void TestKinetoReader::budgetStopsTheSource()
{
    QFETCH(qint64, maxEvents);
    QFETCH(qint64, maxBytes);
    QFETCH(QString, reason);
    const std::string text = synthetic(1000);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("big.json.gz"));
    writeGz(path, text);
    EventStore store;
    KinetoReader::Options opt;
    opt.budget.maxEvents = maxEvents;
    opt.budget.maxInflatedBytes = maxBytes;
    const KinetoReadResult r = KinetoReader::readFile(path.toStdString(), store, opt);
    QCOMPARE(int(r.status), int(SourceStatus::Truncated));
    QVERIFY2(QString::fromStdString(r.message).contains(reason), r.message.c_str());
    QVERIFY(r.events > 0);
    QVERIFY(r.events <= maxEvents);
    QVERIFY(r.bytes <= maxBytes);
    QCOMPARE(store.eventCount(), r.events);
    // What was kept is the file's first events, whole: the event-budget case keeps exactly the
    // budget, the byte-budget case every event that ends before the budget's byte.
    if (maxEvents < 1000)
        QCOMPARE(r.events, std::int64_t(maxEvents));
    else
        QCOMPARE(r.events,
                 std::int64_t(std::count(text.begin(), text.begin() + maxBytes, '}') / 2));
}

void TestKinetoReader::badInput_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("messagePart");
    const int err = int(SourceStatus::Error);
    QTest::newRow("empty") << QByteArray() << err << QStringLiteral("empty");
    QTest::newRow("whitespace") << QByteArray("  \n\t ") << err << QStringLiteral("whitespace");
    QTest::newRow("garbage text") << QByteArray("hello, this is not json\n") << err
                                  << QStringLiteral("not JSON");
    QTest::newRow("binary") << QByteArray("\x00\x01\x02\xff\xfe", 5) << err
                            << QStringLiteral("0x00");
    QTest::newRow("json without traceEvents")
        << QByteArray(R"({"a": 1, "b": [1,2]})") << err << QStringLiteral("no traceEvents");
    QTest::newRow("traceEvents not array")
        << QByteArray(R"({"traceEvents": 5})") << err << QStringLiteral("not an array");
    QTest::newRow("ts is a string")
        << QByteArray(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":"abc","dur":1}])") << err
        << QStringLiteral("\"ts\" is not a number");
    QTest::newRow("ph is a number") << QByteArray(R"([{"ph":5,"name":"a","pid":1,"tid":1,"ts":1}])")
                                    << err << QStringLiteral("\"ph\" is not a string");
    QTest::newRow("pid is an object")
        << QByteArray(R"([{"ph":"X","name":"a","pid":{},"tid":1,"ts":1}])") << err
        << QStringLiteral("\"pid\" is not a number");
    QTest::newRow("name is a number")
        << QByteArray(R"([{"ph":"X","name":3,"pid":1,"tid":1,"ts":1}])") << err
        << QStringLiteral("\"name\" is not a string");
    QTest::newRow("event without ts") << QByteArray(R"([{"ph":"X","name":"a","pid":1,"tid":1}])")
                                      << err << QStringLiteral("without \"ts\"");
    QTest::newRow("event not an object")
        << QByteArray(R"([1,2,3])") << err << QStringLiteral("other than an event");
    QTest::newRow("invalid utf-8 in name")
        << QByteArray("[{\"ph\":\"X\",\"name\":\"a\xc3\x28\",\"pid\":1,\"tid\":1,\"ts\":1}]") << err
        << QStringLiteral("UTF-8");
    QTest::newRow("bad escape") << QByteArray(R"([{"ph":"X","name":"a\q","pid":1,"tid":1,"ts":1}])")
                                << err << QStringLiteral("escape");
    QTest::newRow("garbage after events")
        << QByteArray(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1} @@@])") << err
        << QStringLiteral("byte");
    QTest::newRow("args nested 1000 deep")
        << QByteArray(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"args":)") +
               QByteArray(1000, '[') + QByteArray(1000, ']') + QByteArray("}]")
        << err << QStringLiteral("nesting deeper than 512");
    QTest::newRow("truncated mid-event")
        << QByteArray(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1},{"ph":"X","na)")
        << int(SourceStatus::Truncated) << QStringLiteral("last complete event ends at byte 46");
    QTest::newRow("ok with trailing comma")
        << QByteArray(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1},])") << int(SourceStatus::Ok)
        << QString();
}

void TestKinetoReader::badInput()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, status);
    QFETCH(QString, messagePart);
    const Read r = readText(bytes.toStdString());
    QCOMPARE(int(r.result.status), status);
    const QString message = QString::fromStdString(r.result.message);
    QVERIFY2(message.contains(messagePart), qPrintable(message));
    QVERIFY(!message.contains(QLatin1Char('\n')));
}

void TestKinetoReader::truncatedKeepsCompleteEvents()
{
    const std::string full = synthetic(1000);
    // Cut inside event 700 (0-based): events 0..699 are complete.
    const std::size_t cut = full.find("\"External id\":700}") + 5;
    const Read r = readText(full.substr(0, cut));
    QCOMPARE(int(r.result.status), int(SourceStatus::Truncated));
    QCOMPARE(r.store.eventCount(), std::int64_t(700));
    QVERIFY(QString::fromStdString(r.result.message).contains(QString::number(cut)));
}

void TestKinetoReader::truncatedFixture()
{
    const std::string full = readAll(kTraces + QStringLiteral("/healthy/rank0.pt.trace.json"));
    const Read whole = readText(full);
    const Read r = readText(full.substr(0, full.size() / 2));
    QCOMPARE(int(r.result.status), int(SourceStatus::Truncated));
    QVERIFY(r.store.eventCount() > 0 && r.store.eventCount() < whole.store.eventCount());
}

void TestKinetoReader::hundredMegabyteLine()
{
    // A valid trace on one 100 MB line (the legacy writer puts everything on one line).
    const std::int64_t n = 1'000'000;
    const std::string big = synthetic(n);
    QVERIFY(big.size() > 100'000'000);
    QVERIFY(big.find('\n') == std::string::npos);
    const Read ok = readText(big);
    QCOMPARE(int(ok.result.status), int(SourceStatus::Ok));
    QCOMPARE(ok.store.eventCount(), n);
    // And 100 MB of one line of garbage: rejected at once, with a one-line message.
    const std::string junk(100'000'000, 'x');
    QElapsedTimer t;
    t.start();
    const Read bad = readText(junk);
    QCOMPARE(int(bad.result.status), int(SourceStatus::Error));
    QVERIFY(t.elapsed() < 5000);
    // A single 100 MB string inside an event is read (the window grows) and kept.
    std::string longName =
        R"([{"ph":"X","pid":1,"tid":1,"ts":1,"name":")" + std::string(100'000'000, 'n') + "\"}]";
    const Read wide = readText(longName);
    QCOMPARE(int(wide.result.status), int(SourceStatus::Ok));
    QCOMPARE(wide.store.eventCount(), std::int64_t(1));
}

void TestKinetoReader::gzipFiles()
{
    QTemporaryDir dir;
    const std::string text = synthetic(5000);
    const QString gz = dir.filePath(QStringLiteral("a.json.gz"));
    writeGz(gz, text);
    const Read r = readPath(gz);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QCOMPARE(r.store.eventCount(), std::int64_t(5000));
    // A .gz that is not gzip (garbage): Error that says so.
    const QString fake = dir.filePath(QStringLiteral("fake.json.gz"));
    writeFile(fake, "this is not gzip at all");
    const Read f = readPath(fake);
    QCOMPARE(int(f.result.status), int(SourceStatus::Error));
    QVERIFY(QString::fromStdString(f.result.message).contains(QLatin1String("not gzip")));
    // A gzip cut short: the complete events before the cut are kept.
    QFile g(gz);
    QVERIFY(g.open(QIODevice::ReadOnly));
    const QByteArray compressed = g.readAll();
    const QString cut = dir.filePath(QStringLiteral("cut.json.gz"));
    writeFile(cut, compressed.left(compressed.size() / 2).toStdString());
    const Read c = readPath(cut);
    QVERIFY(c.result.status != SourceStatus::Ok);
    QVERIFY(c.store.eventCount() > 0 && c.store.eventCount() < 5000);
    // A missing file.
    const Read m = readPath(dir.filePath(QStringLiteral("missing.json")));
    QCOMPARE(int(m.result.status), int(SourceStatus::Error));
}

void TestKinetoReader::eventDetails()
{
    QTemporaryDir dir;
    const std::string text = synthetic(3000);
    for (const QString& name : {QStringLiteral("p.json"), QStringLiteral("p.json.gz")}) {
        const QString path = dir.filePath(name);
        if (name.endsWith(QLatin1String(".gz")))
            writeGz(path, text);
        else
            writeFile(path, text);
        const Read r = readPath(path);
        const Lane& lane = r.store.lanes[1];
        const auto details = readEventDetails(path.toStdString(), lane.sourceOffset[10]);
        QVERIFY(details.is_object());
        QCOMPARE(details.value("name", std::string()),
                 std::string(r.store.strings.view(lane.nameId[10])));
        QVERIFY(details.at("args").contains("External id"));
        QCOMPARE(details.at("tid").get<std::int64_t>(), lane.tid);
    }
}

// The reader sizes a lane's columns from the input read so far and grows them by half when that
// estimate falls short: a lane that only starts late in the file (its first estimates far too
// small), plain, from memory and gzip, keeps every event with its exact times and name.
void TestKinetoReader::unevenLanesKeepEveryEvent()
{
    struct Event {
        int tid;
        std::int64_t startNs, endNs;
        std::string name;
    };
    std::vector<Event> truth;
    std::string text = R"({"traceEvents":[)";
    const auto add = [&](int tid, std::int64_t i) {
        const std::int64_t tsNs = 1000 * i + 7, durNs = 250 + i % 3;
        truth.push_back({tid, tsNs, tsNs + durNs, "op" + std::to_string(i % 37)});
        if (truth.size() > 1) text += ',';
        text += R"({"ph":"X","cat":"cpu_op","name":")" + truth.back().name + R"(","pid":1,"tid":)" +
                std::to_string(tid) + R"(,"ts":)" + std::to_string(tsNs / 1000) + "." +
                std::to_string(1000 + tsNs % 1000).substr(1) + R"(,"dur":0.)" +
                std::to_string(durNs) + "}";
    };
    for (std::int64_t i = 0; i < 20'000; ++i)
        add(1, i);
    for (std::int64_t i = 20'000; i < 300'000; ++i)
        add(2, i);
    text += "]}";
    QTemporaryDir dir;
    const QString plain = dir.filePath(QStringLiteral("uneven.json"));
    const QString gz = dir.filePath(QStringLiteral("uneven.json.gz"));
    writeFile(plain, text);
    writeGz(gz, text);
    for (const Read& r : {readPath(plain), readText(text), readPath(gz)}) {
        QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
        QCOMPARE(r.store.lanes.size(), std::size_t(2));
        std::size_t k = 0;
        for (const Lane& lane : r.store.lanes) {
            for (std::size_t i = 0; i < lane.size(); ++i, ++k) {
                QVERIFY(k < truth.size());
                QCOMPARE(lane.tid, std::int64_t(truth[k].tid));
                QCOMPARE(lane.startNs[i], truth[k].startNs);
                QCOMPARE(lane.endNs[i], truth[k].endNs);
                QCOMPARE(std::string(r.store.strings.view(lane.nameId[i])), truth[k].name);
            }
        }
        QCOMPARE(k, truth.size());
    }
}

// Flow points with repeated ids, bound and unbound, against a reference computed here from what
// was written: of a key's starts the flow takes the first in (unbound before bound, then
// timestamp or event index) order, of its ends the last; a key with no start or no end, or whose
// chosen point lies on no event, makes no flow.
void TestKinetoReader::duplicateFlowIdsPairByTheRule()
{
    struct Point {
        bool bound;
        std::int64_t at;    // event index when bound, else the timestamp in ns
        std::int64_t event; // the event it lands on, -1 for none
    };
    std::mt19937 rng(22);
    const int n = 3000, ids = 1000;
    std::map<int, std::vector<Point>> starts, ends;
    std::string text = R"({"traceEvents":[)";
    bool first = true;
    const auto add = [&](const std::string& object) {
        text += (first ? "" : ",") + object;
        first = false;
    };
    // Event i of each lane runs [10 i, 10 i + 5] µs; points land inside the lane's last event
    // (bound), inside an earlier one or in a gap (unbound).
    const auto point = [&](char ph, int tid, int i, std::map<int, std::vector<Point>>& into) {
        const int id = int(rng() % ids);
        const int kind = int(rng() % 10);
        std::int64_t us = 10 * std::int64_t(i) + 1;
        Point p{true, i, i};
        if (kind == 0 && i > 0) {
            const int j = int(rng() % unsigned(i));
            us = 10 * std::int64_t(j) + 2;
            p = {false, us * 1000, j};
        } else if (kind == 1) {
            us = 10 * std::int64_t(i) + 7;
            p = {false, us * 1000, -1};
        }
        into[id].push_back(p);
        add(std::string(R"({"ph":")") + ph + R"(","id":)" + std::to_string(id) +
            R"(,"cat":"ac2g","name":"ac2g","pid":)" + (tid == 1 ? "1" : "0") + R"(,"tid":)" +
            std::to_string(tid) + R"(,"ts":)" + std::to_string(us) + "}");
    };
    for (int i = 0; i < n; ++i) {
        const std::string at = R"(,"ts":)" + std::to_string(10 * i) + R"(,"dur":5})";
        add(R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1)" + at);
        if (rng() % 4 != 0) point('s', 1, i, starts);
        add(R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7)" + at);
        if (rng() % 4 != 0) point('f', 7, i, ends);
    }
    text += "]}";

    const auto order = [](const Point& a, const Point& b) {
        return std::pair{a.bound, a.at} < std::pair{b.bound, b.at};
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> expected; // (to event, from event)
    int duplicates = 0;
    for (const auto& [id, s] : starts) {
        const auto e = ends.find(id);
        if (e == ends.end()) continue;
        duplicates += s.size() > 1 || e->second.size() > 1;
        const Point& from = *std::min_element(s.begin(), s.end(), order);
        const Point& to = *std::max_element(e->second.begin(), e->second.end(), order);
        if (from.event >= 0 && to.event >= 0) expected.push_back({to.event, from.event});
    }
    std::sort(expected.begin(), expected.end());
    QVERIFY(duplicates > 100);

    const Read r = readText(text);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QCOMPARE(r.store.lanes.size(), std::size_t(2));
    QCOMPARE(r.store.lanes[0].kind, LaneKind::CpuThread);
    QCOMPARE(r.store.lanes[1].kind, LaneKind::GpuStream);
    QCOMPARE(r.result.flows, std::int64_t(expected.size()));
    QCOMPARE(r.store.flows.size(), expected.size());
    for (std::size_t k = 0; k < expected.size(); ++k) {
        const FlowLink& f = r.store.flows[k];
        QCOMPARE(f.fromLane, 0);
        QCOMPARE(f.toLane, 1);
        QCOMPARE(std::pair(std::int64_t(f.toEvent), std::int64_t(f.fromEvent)), expected[k]);
    }
}

// A multi-MB .gz: reading records checkpoints, and an event near the end is read back from the
// nearest one: the same object as the plain file holds at that offset (the raw JSON), for a
// bounded number of inflated bytes instead of everything before it.
void TestKinetoReader::gzipDetailsResumeAtCheckpoint()
{
    QTemporaryDir dir;
    const std::string text = synthetic(260'000); // ~34 MB
    const QString gz = dir.filePath(QStringLiteral("big.json.gz"));
    writeGz(gz, text);
    const Read r = readPath(gz);
    QCOMPARE(int(r.result.status), int(SourceStatus::Ok));
    QVERIFY(r.result.gzipIndex);
    const GzipIndex& index = *r.result.gzipIndex;
    QCOMPARE(index.spacing, GzipInput::checkpointSpacing(QFileInfo(gz).size()));
    QVERIFY2(std::int64_t(index.points.size()) >= std::int64_t(text.size()) / index.spacing - 1,
             qPrintable(QString::number(index.points.size())));
    const std::int64_t bound = index.spacing + GzipInput::kCheckpointCall + (1 << 16);
    for (const Lane& lane : r.store.lanes) {
        const std::size_t i = lane.size() - 3;
        const std::int64_t offset = lane.sourceOffset[i];
        QVERIFY(offset > std::int64_t(text.size()) * 9 / 10);
        std::int64_t produced = -1;
        const auto fromGz = readEventDetails(gz.toStdString(), offset, &index, &produced);
        // The raw JSON's object at that offset, parsed here.
        const std::size_t end = text.find("}}", std::size_t(offset)) + 2;
        const auto raw = nlohmann::json::parse(text.substr(std::size_t(offset), end - offset));
        QVERIFY2(fromGz == raw, fromGz.dump().c_str());
        QCOMPARE(fromGz.value("name", std::string()),
                 std::string(r.store.strings.view(lane.nameId[i])));
        QVERIFY2(produced > 0 && produced <= bound,
                 qPrintable(QStringLiteral("%1 of %2").arg(produced).arg(offset)));
        // Without the index the same read inflates everything before the event.
        std::int64_t fromStart = -1;
        QVERIFY(readEventDetails(gz.toStdString(), offset, nullptr, &fromStart) == raw);
        QVERIFY(fromStart >= offset);
    }
    // A plain file keeps no checkpoints.
    const QString plain = dir.filePath(QStringLiteral("small.json"));
    writeFile(plain, synthetic(10));
    QVERIFY(!readPath(plain).result.gzipIndex);
}

void TestKinetoReader::normaliseNames_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("op");
    const QList<QPair<const char*, const char*>> rows = {
        {"allreduce", "all_reduce"},
        {"c10d::allreduce_", "all_reduce"},
        {"AllReduce", "all_reduce"},
        {"nccl:all_reduce", "all_reduce"},
        {"gloo:all_reduce", "all_reduce"},
        {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
         "all_reduce"},
        {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "all_gather"},
        {"c10d::_allgather_base_", "all_gather"},
        {"allgather_into_tensor_coalesced", "all_gather"},
        {"c10d::_reduce_scatter_base_", "reduce_scatter"},
        {"c10d::alltoall_base_", "all_to_all"},
        {"nccl:all_to_all", "all_to_all"},
        {"c10d::broadcast_", "broadcast"},
        {"c10d::barrier", "barrier"},
        {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", "send_recv"},
        {"gloo:recvAnySource", "recv"},
        {"wait", ""},
        {"ncclDevKernel_Generic", ""},
        {"aten::add", ""},
    };
    for (const auto& [n, o] : rows)
        QTest::newRow(n) << QString::fromLatin1(n) << QString::fromLatin1(o);
}

void TestKinetoReader::normaliseNames()
{
    QFETCH(QString, name);
    QFETCH(QString, op);
    QCOMPARE(QString::fromStdString(normaliseCollectiveName(name.toStdString())), op);
}

void TestKinetoReader::fuzzRegressions_data()
{
    // Inputs fuzz/run found (crash-*, timeout-*, leak-*) are kept here and replayed.
    QTest::addColumn<QString>("path");
    const QDir dir(QStringLiteral(RANKSCOPE_TEST_DATA "/fuzz/kineto"));
    for (const QString& f : dir.entryList(QDir::Files))
        QTest::newRow(qPrintable(f)) << dir.filePath(f);
}

void TestKinetoReader::fuzzRegressions()
{
    QFETCH(QString, path);
    const Read r = readText(readAll(path));
    QCOMPARE(r.result.status == SourceStatus::Ok, r.result.message.empty());
    for (const Lane& lane : r.store.lanes)
        QVERIFY(std::is_sorted(lane.startNs.begin(), lane.startNs.end()));
}

void TestKinetoReader::loaderReadsFolderAndIsolatesBadFiles()
{
    QTemporaryDir dir;
    QFile::copy(kTraces + QStringLiteral("/healthy/rank0.pt.trace.json"),
                dir.filePath(QStringLiteral("rank0.pt.trace.json")));
    QFile::copy(kTraces + QStringLiteral("/healthy/rank1.pt.trace.json"),
                dir.filePath(QStringLiteral("rank1.pt.trace.json")));
    const std::string r1 = readAll(kTraces + QStringLiteral("/healthy/rank1.pt.trace.json"));
    writeFile(dir.filePath(QStringLiteral("rank2.pt.trace.json")), r1.substr(0, r1.size() / 3));
    writeFile(dir.filePath(QStringLiteral("rank3.pt.trace.json")),
              "[{\"ph\":\"X\",\"name\":\"a\xff\",\"pid\":1,\"tid\":1,\"ts\":1}]");
    const SessionPtr s = loadSession(dir.path());
    QVERIFY(s->folder.isValid());
    QCOMPARE(s->events.eventCountOfRank(0),
             expectedEvents(readAll(dir.filePath(QStringLiteral("rank0.pt.trace.json")))));
    QCOMPARE(s->events.collectiveCountOfRank(0), std::int64_t(22));
    QCOMPARE(s->events.collectiveCountOfRank(1), std::int64_t(22));
    QVERIFY(s->events.eventCountOfRank(2) > 0);
    for (qsizetype i = 0; i < s->folder.sources().size(); ++i) {
        const SourceFile& src = s->folder.sources()[i];
        if (src.kind != SourceKind::Kineto) continue;
        const SourceFile& shown = src;
        if (src.relativePath.startsWith(QLatin1String("rank2")))
            QCOMPARE(shown.status, SourceStatus::Truncated);
        else if (src.relativePath.startsWith(QLatin1String("rank3")))
            QCOMPARE(shown.status, SourceStatus::Error);
        else
            QCOMPARE(shown.status, SourceStatus::Ok);
    }
    // Lanes know their source.
    for (const Lane& lane : s->events.lanes)
        QCOMPARE(s->folder.sources()[lane.sourceIndex].rank.value_or(-1), lane.rank);
}

void TestKinetoReader::loaderBudgetTruncatesOneSource()
{
    QTemporaryDir dir;
    QFile::copy(kTraces + QStringLiteral("/healthy/rank0.pt.trace.json"),
                dir.filePath(QStringLiteral("rank0.pt.trace.json")));
    writeGz(dir.filePath(QStringLiteral("rank1.pt.trace.json.gz")), synthetic(5000));
    const std::int64_t small =
        expectedEvents(readAll(dir.filePath(QStringLiteral("rank0.pt.trace.json"))));
    LoadOptions options;
    options.buildLaneLods = false;
    options.traceBudget.maxEvents = small; // rank 0 fits exactly, rank 1's 5000 do not
    const SessionPtr s = loadSession(dir.path(), {}, {}, options);
    QCOMPARE(s->events.eventCountOfRank(0), small);
    QCOMPARE(s->events.eventCountOfRank(1), small);
    for (const SourceFile& src : s->folder.sources()) {
        if (src.kind != SourceKind::Kineto) continue;
        const bool big = src.relativePath.startsWith(QLatin1String("rank1"));
        QCOMPARE(src.status, big ? SourceStatus::Truncated : SourceStatus::Ok);
        if (big) QVERIFY2(src.message.contains(QStringLiteral("budget")), qPrintable(src.message));
    }
}

void TestKinetoReader::loaderOutOfMemoryCostsOneSource()
{
    // A source whose single 200 MB value cannot be held: in a child process whose address space
    // is capped 150 MB above what it uses, growing the read window throws std::bad_alloc. That
    // source is an error and the good rank still loads.
    QTemporaryDir dir;
    QFile::copy(kTraces + QStringLiteral("/healthy/rank0.pt.trace.json"),
                dir.filePath(QStringLiteral("rank0.pt.trace.json")));
    const std::string head =
        R"({"traceEvents":[{"ph":"X","name":"x","pid":1,"tid":1,"ts":1,"dur":1,"args":{"s":")";
    {
        gzFile f = gzopen(
            dir.filePath(QStringLiteral("rank1.pt.trace.json.gz")).toStdString().c_str(), "wb1");
        gzwrite(f, head.data(), unsigned(head.size()));
        const std::string block(1 << 20, 'a');
        for (int i = 0; i < 200; ++i)
            gzwrite(f, block.data(), unsigned(block.size()));
        const std::string tail = "\"}}]}";
        gzwrite(f, tail.data(), unsigned(tail.size()));
        gzclose(f);
    }
    const std::int64_t expected =
        expectedEvents(readAll(dir.filePath(QStringLiteral("rank0.pt.trace.json"))));
    const pid_t child = fork();
    QVERIFY(child >= 0);
    if (child == 0) {
        malloc_trim(0);
        long pages = 0;
        std::ifstream("/proc/self/statm") >> pages;
        const rlim_t cap = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(150) << 20);
        const rlimit limit{cap, cap};
        setrlimit(RLIMIT_AS, &limit);
        LoadOptions options;
        options.buildLaneLods = false;
        const SessionPtr s = loadSession(dir.path(), {}, {}, options);
        int code = s->events.eventCountOfRank(0) == expected ? 0 : 10;
        for (const SourceFile& src : s->folder.sources()) {
            if (src.relativePath.startsWith(QLatin1String("rank1")) &&
                (src.status != SourceStatus::Error ||
                 !src.message.startsWith(QStringLiteral("out of memory while reading rank1"))))
                code += 20;
            if (src.relativePath.startsWith(QLatin1String("rank0")) &&
                src.status != SourceStatus::Ok)
                code += 40;
        }
        _exit(code);
    }
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
}

void TestKinetoReader::loaderCancelsLargeLoad()
{
    QTemporaryDir dir;
    const std::string big = synthetic(1'000'000); // ~115 MB
    writeFile(dir.filePath(QStringLiteral("rank0.pt.trace.json")), big);
    qint64 doneAtCancel = -1, total = 0;
    QElapsedTimer sinceCancel;
    const SessionPtr s = loadSession(
        dir.path(),
        [&](qint64 done, qint64 all) {
            if (done > 0 && doneAtCancel < 0) {
                doneAtCancel = done;
                total = all;
                sinceCancel.start();
            }
        },
        [&] { return doneAtCancel >= 0; });
    QVERIFY(sinceCancel.isValid());
    QVERIFY(doneAtCancel < total);
    QVERIFY2(sinceCancel.elapsed() < 2000, qPrintable(QString::number(sinceCancel.elapsed())));
    QCOMPARE(s->events.eventCount(), std::int64_t(0));
}

QTEST_GUILESS_MAIN(TestKinetoReader)
#include "tst_kinetoreader.moc"
