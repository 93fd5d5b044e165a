// Real Kineto traces from other projects' test data (HTA's, MIT): what the reader stores and the
// GPU time breakdown, checked against truth this test computes from the raw JSON itself.
#include "model/analysis/timebreakdown.h"
#include "model/analysisreport.h"
#include "model/trace/kinetoreader.h"
#include "tests/support/gzip.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

using namespace rankscope;

namespace {

const QString kData = QStringLiteral(RANKSCOPE_TEST_DATA);

// nlohmann keeps numbers as doubles, which cannot hold epoch-µs timestamps to the ns: quote the
// numbers of every "ts" and "dur" member first, so they reach the test as their text.
std::string quoteTimes(const std::string& text)
{
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    std::size_t i = 0;
    while (i < text.size()) {
        const bool ts = text.compare(i, 5, "\"ts\":") == 0;
        const bool dur = text.compare(i, 6, "\"dur\":") == 0;
        if (!ts && !dur) {
            out += text[i++];
            continue;
        }
        const std::size_t key = ts ? 5 : 6;
        out.append(text, i, key);
        i += key;
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n'))
            out += text[i++];
        const std::size_t begin = i;
        while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                                   text[i] == '.' || text[i] == '-'))
            ++i;
        out += '"';
        out.append(text, begin, i - begin);
        out += '"';
    }
    return out;
}

// "1712195495519689.047" µs to ns: the integer part times 1000 plus three fractional digits,
// rounded on the fourth.
std::int64_t nanos(const std::string& us)
{
    const bool neg = !us.empty() && us[0] == '-';
    const std::string body = neg ? us.substr(1) : us;
    const std::size_t dot = body.find('.');
    const std::string whole = body.substr(0, dot);
    std::string frac = dot == std::string::npos ? std::string() : body.substr(dot + 1);
    const bool roundUp = frac.size() > 3 && frac[3] >= '5';
    frac.resize(3, '0');
    const std::int64_t v = std::stoll(whole) * 1000 + std::stoll(frac) + (roundUp ? 1 : 0);
    return neg ? -v : v;
}

bool startsNoCase(const std::string& s, const char* p)
{
    const std::size_t n = std::strlen(p);
    if (s.size() < n) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != p[i]) return false;
    return true;
}

bool endsWith(const std::string& s, const char* p)
{
    const std::size_t n = std::strlen(p);
    return s.size() >= n && s.compare(s.size() - n, n, p) == 0;
}

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

Intervals unionOf(Intervals v)
{
    std::sort(v.begin(), v.end());
    Intervals out;
    for (const auto& iv : v) {
        if (!out.empty() && iv.first <= out.back().second)
            out.back().second = std::max(out.back().second, iv.second);
        else
            out.push_back(iv);
    }
    return out;
}

std::int64_t total(const Intervals& v)
{
    std::int64_t n = 0;
    for (const auto& [a, b] : v)
        n += b - a;
    return n;
}

// Both unions sorted and disjoint: each pair of intervals that meet adds its common part.
std::int64_t overlap(const Intervals& x, const Intervals& y)
{
    std::int64_t n = 0;
    for (const auto& a : x) {
        auto it = std::lower_bound(y.begin(), y.end(), a.first,
                                   [](const auto& b, std::int64_t t) { return b.second <= t; });
        for (; it != y.end() && it->first < a.second; ++it)
            n += std::min(a.second, it->second) - std::max(a.first, it->first);
    }
    return n;
}

// What the raw file says, by README's definitions.
struct Truth {
    std::int64_t events = 0;       // X, i/I and B
    std::int64_t deviceEvents = 0; // X on the accelerator: kernels, copies, sets, DMA
    std::int64_t commKernels = 0;  // NCCL / RCCL / HCCL
    std::int64_t firstNs = INT64_MAX;
    std::int64_t lastNs = INT64_MIN;
    int worldSize = 0;
    bool gpu = false;
    std::int64_t windowNs = 0, computeNs = 0, commNs = 0, memNs = 0, idleNs = 0, overlapNs = 0;
    // Every event as written: (start, name) of X, i/I and B; (start, end, name) of X.
    std::vector<std::pair<std::int64_t, std::string>> starts;
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> spans;
};

Truth truthOf(const QString& path)
{
    const auto doc = nlohmann::json::parse(quoteTimes(inflate(path)));
    const auto& events = doc.is_array() ? doc : doc.at("traceEvents");
    Truth t;
    std::int64_t base = 0;
    if (doc.is_object()) {
        if (doc.contains("baseTimeNanoseconds"))
            base = doc["baseTimeNanoseconds"].get<std::int64_t>();
        if (doc.contains("distributedInfo") && doc["distributedInfo"].contains("world_size"))
            t.worldSize = doc["distributedInfo"]["world_size"].get<int>();
    }
    Intervals compute, comm, mem;
    for (const auto& e : events) {
        const std::string ph = e.value("ph", "");
        if (ph != "X" && ph != "i" && ph != "I" && ph != "B") continue;
        ++t.events;
        const std::int64_t start = base + nanos(e.at("ts").get<std::string>());
        const std::int64_t dur = ph == "X" && e.contains("dur")
                                     ? std::max<std::int64_t>(0, nanos(e["dur"].get<std::string>()))
                                     : 0;
        t.firstNs = std::min(t.firstNs, start);
        t.lastNs = std::max(t.lastNs, start + dur);
        const std::string name = e.value("name", "");
        t.starts.emplace_back(start, name);
        if (ph != "X") continue;
        t.spans.emplace_back(start, start + dur, name);
        std::string cat = e.value("cat", "");
        std::transform(cat.begin(), cat.end(), cat.begin(), ::tolower);
        const bool kernel = cat == "kernel" || cat == "mtia_ccp_events" || endsWith(cat, "_kernel");
        const bool copy = cat == "memcpy" || cat == "memset" || endsWith(cat, "_memcpy") ||
                          endsWith(cat, "_memset");
        if (!kernel && !copy) continue;
        ++t.deviceEvents;
        const bool isComm = kernel && (startsNoCase(name, "nccl") || startsNoCase(name, "rccl") ||
                                       startsNoCase(name, "hccl"));
        const bool isMem =
            copy || (kernel && (startsNoCase(name, "memcpy") || startsNoCase(name, "memset") ||
                                startsNoCase(name, "dma")));
        t.commKernels += isComm;
        if (dur == 0) continue;
        (isComm ? comm : isMem ? mem : compute).emplace_back(start, start + dur);
    }
    Intervals all = compute;
    all.insert(all.end(), comm.begin(), comm.end());
    all.insert(all.end(), mem.begin(), mem.end());
    t.gpu = t.deviceEvents > 0;
    if (all.empty()) return t;
    all = unionOf(all);
    compute = unionOf(compute);
    comm = unionOf(comm);
    t.windowNs = all.back().second - all.front().first;
    t.computeNs = total(compute);
    t.commNs = total(comm);
    t.memNs = total(unionOf(mem));
    t.idleNs = t.windowNs - total(all);
    t.overlapNs = overlap(compute, comm);
    return t;
}

struct Stored {
    std::int64_t deviceEvents = 0, commKernels = 0;
    std::int64_t firstNs = INT64_MAX, lastNs = INT64_MIN;
    std::vector<std::pair<std::int64_t, std::string>> starts;
    std::vector<std::tuple<std::int64_t, std::int64_t, std::string>> spans;
};

Stored storedOf(const EventStore& store)
{
    Stored s;
    for (const Lane& lane : store.lanes) {
        for (std::size_t i = 0; i < lane.size(); ++i) {
            const std::string name(store.strings.view(lane.nameId[i]));
            s.starts.emplace_back(lane.startNs[i], name);
            s.spans.emplace_back(lane.startNs[i], lane.endNs[i], name);
            s.firstNs = std::min(s.firstNs, lane.startNs[i]);
            s.lastNs = std::max(s.lastNs, lane.endNs[i]);
            if (lane.kind != LaneKind::GpuStream) continue;
            const EventCategory c = lane.category[i];
            s.deviceEvents += c == EventCategory::Kernel || c == EventCategory::CommKernel ||
                              c == EventCategory::Memcpy || c == EventCategory::Memset;
            s.commKernels += c == EventCategory::CommKernel;
        }
    }
    return s;
}

// Public traces from other projects, one a folder under kineto-wild/ (see its LICENSE file):
// "folder/file.json".
QStringList wildTraces()
{
    QStringList out;
    const QDir root(kData + QStringLiteral("/kineto-wild"));
    for (const QString& sub : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        for (const QString& f : QDir(root.filePath(sub)).entryList({QStringLiteral("*.json")}))
            out << sub + QLatin1Char('/') + f;
    return out;
}

// What a healthy job may be told about itself: facts of the folder and the GPU's idle time,
// never a fault.
bool healthyKind(const std::string& kind)
{
    return kind == "missing_ranks" || kind == "mixed_jobs" || kind == "unpaired_collectives" ||
           kind == "idle_gpu";
}

// Every timeline among the real files: a JSON object with traceEvents. The Chakra execution
// trace beside one of them is no timeline (tst_tracefolder checks that it is skipped as such).
QStringList traceFiles()
{
    const auto isTimeline = [](const QString& path) {
        const auto doc = nlohmann::json::parse(inflate(path), nullptr, false);
        return doc.is_object() && doc.contains("traceEvents");
    };
    QStringList out;
    for (const QString& dir :
         {QStringLiteral("kineto-real-hta"), QStringLiteral("kineto-gpu-samples")}) {
        QDir root(kData + QLatin1Char('/') + dir);
        for (const QString& sub : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
            for (const QString& f : QDir(root.filePath(sub)).entryList({QStringLiteral("*.gz")}))
                if (isTimeline(root.filePath(sub + QLatin1Char('/') + f)))
                    out << dir + QLatin1Char('/') + sub + QLatin1Char('/') + f;
        for (const QString& f : root.entryList({QStringLiteral("*.gz")}))
            out << dir + QLatin1Char('/') + f;
    }
    for (const QString& f : wildTraces())
        out << QStringLiteral("kineto-wild/") + f;
    return out;
}

} // namespace

class TestRealTraces : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFile_data();
    void everyFile();
    void analyzeJsonCarriesTheGpuBreakdown_data();
    void analyzeJsonCarriesTheGpuBreakdown();
    void publicTracesAnalyzeAsHealthy_data();
    void publicTracesAnalyzeAsHealthy();
};

void TestRealTraces::everyFile_data()
{
    QTest::addColumn<QString>("path");
    const QStringList files = traceFiles();
    QVERIFY(files.size() >= 15);
    for (const QString& f : files)
        QTest::newRow(qPrintable(f)) << kData + QLatin1Char('/') + f;
}

void TestRealTraces::everyFile()
{
    QFETCH(QString, path);
    const Truth truth = truthOf(path);
    EventStore store;
    KinetoReader::Options opt;
    opt.rank = 0;
    const KinetoReadResult r = KinetoReader::readFile(path.toStdString(), store, opt);
    QCOMPARE(r.status, SourceStatus::Ok);
    QCOMPARE(r.events, truth.events);
    QCOMPARE(r.worldSize, truth.worldSize);
    const Stored s = storedOf(store);
    QCOMPARE(s.deviceEvents, truth.deviceEvents);
    QCOMPARE(s.commKernels, truth.commKernels);
    QCOMPARE(s.firstNs, truth.firstNs);
    QCOMPARE(s.lastNs, truth.lastNs);
    // Event by event: every start and name as written (to the ns), and every X span whole.
    Truth sortedTruth = truth;
    Stored sortedStore = s;
    std::sort(sortedTruth.starts.begin(), sortedTruth.starts.end());
    std::sort(sortedStore.starts.begin(), sortedStore.starts.end());
    QVERIFY(sortedStore.starts == sortedTruth.starts);
    std::sort(sortedTruth.spans.begin(), sortedTruth.spans.end());
    std::sort(sortedStore.spans.begin(), sortedStore.spans.end());
    QVERIFY(std::includes(sortedStore.spans.begin(), sortedStore.spans.end(),
                          sortedTruth.spans.begin(), sortedTruth.spans.end()));

    const std::vector<RankTimeBreakdown> bd = TimeBreakdown::compute(store);
    QCOMPARE(int(bd.size()), 1);
    const RankTimeBreakdown& b = bd[0];
    QCOMPARE(b.gpu, truth.gpu);
    if (truth.gpu) {
        QCOMPARE(b.windowNs(), truth.windowNs);
        QCOMPARE(b.computeNs, truth.computeNs);
        QCOMPARE(b.commNs, truth.commNs);
        QCOMPARE(b.memNs, truth.memNs);
        QCOMPARE(b.idleNs, truth.idleNs);
        QCOMPARE(b.overlapNs, truth.overlapNs);
    }

    // The same bytes uncompressed, under another name, read the same.
    QTemporaryDir dir;
    const QString plain = dir.filePath(QStringLiteral("renamed.json"));
    {
        const std::string text = inflate(path);
        QFile f(plain);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QCOMPARE(f.write(text.data(), qint64(text.size())), qint64(text.size()));
    }
    EventStore again;
    const KinetoReadResult r2 = KinetoReader::readFile(plain.toStdString(), again, opt);
    QCOMPARE(r2.status, SourceStatus::Ok);
    QCOMPARE(r2.events, r.events);
    const Stored s2 = storedOf(again);
    QCOMPARE(s2.deviceEvents, s.deviceEvents);
    QCOMPARE(s2.firstNs, s.firstNs);
    QCOMPARE(s2.lastNs, s.lastNs);
    const std::vector<RankTimeBreakdown> bd2 = TimeBreakdown::compute(again);
    QCOMPARE(bd2.at(0).idleNs, b.idleNs);
    QCOMPARE(bd2.at(0).computeNs, b.computeNs);
}

void TestRealTraces::analyzeJsonCarriesTheGpuBreakdown_data()
{
    QTest::addColumn<QStringList>("files"); // under kineto-real-hta/
    const auto folder = [](const QString& dir) {
        QStringList out;
        for (const QString& f : QDir(kData + QStringLiteral("/kineto-real-hta/") + dir)
                                    .entryList({QStringLiteral("*.gz")}))
            out << dir + QLatin1Char('/') + f;
        return out;
    };
    // Folders whose files state their rank in distributedInfo, which the JSON's ranks follow.
    QTest::newRow("ns_resolution") << folder(QStringLiteral("ns_resolution_trace"));
    QTest::newRow("trace_filter") << folder(QStringLiteral("trace_filter"));
    QTest::newRow("cpu_only") << folder(QStringLiteral("cpu_only"));
    // A GPU trace that states no rank next to one that does: measured as its own entry.
    QTest::newRow("rank next to no rank")
        << QStringList{QStringLiteral("trace_filter/sampled_rank-0.json.gz"),
                       QStringLiteral("amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")};
}

void TestRealTraces::analyzeJsonCarriesTheGpuBreakdown()
{
    QFETCH(QStringList, files);
    QTemporaryDir dir;
    std::map<int, Truth> truthOfRank;
    std::map<std::string, Truth> truthOfUnranked; // by file name
    for (const QString& f : files) {
        const QString path = kData + QStringLiteral("/kineto-real-hta/") + f;
        const QString name = f.section(QLatin1Char('/'), -1);
        QVERIFY(QFile::copy(path, dir.filePath(name)));
        const auto doc = nlohmann::json::parse(inflate(path));
        if (doc.contains("distributedInfo") && doc["distributedInfo"].contains("rank"))
            truthOfRank[doc["distributedInfo"]["rank"].get<int>()] = truthOf(path);
        else
            truthOfUnranked[name.toStdString()] = truthOf(path);
    }
    QVERIFY(!truthOfRank.empty());

    LoadOptions options;
    options.buildLaneLods = false;
    const SessionPtr session = loadSession(dir.path(), {}, {}, options);
    const auto doc = AnalysisReport::toJson(*session, session->analysis);
    const auto checkGpuTime = [](const nlohmann::ordered_json& entry, const Truth& truth) {
        QCOMPARE(entry.contains("gpu_time"), truth.gpu);
        if (!truth.gpu) return;
        const auto& g = entry["gpu_time"];
        const auto us = [](std::int64_t ns) { return double(ns) / 1000.0; };
        QCOMPARE(g.at("window_us").get<double>(), us(truth.windowNs));
        QCOMPARE(g.at("compute_us").get<double>(), us(truth.computeNs));
        QCOMPARE(g.at("communication_us").get<double>(), us(truth.commNs));
        QCOMPARE(g.at("memory_us").get<double>(), us(truth.memNs));
        QCOMPARE(g.at("idle_us").get<double>(), us(truth.idleNs));
        QCOMPARE(g.at("comm_compute_overlap_us").get<double>(), us(truth.overlapNs));
    };
    // Whatever is left without a rank says why.
    for (const auto& source : doc.at("unattributed_sources"))
        QVERIFY2(!source.value("rank_evidence", std::string()).empty(),
                 source.at("path").get<std::string>().c_str());
    std::size_t seen = 0;
    for (const auto& rank : doc.at("ranks")) {
        const auto it = truthOfRank.find(rank.at("rank").get<int>());
        if (it == truthOfRank.end()) continue;
        ++seen;
        checkGpuTime(rank, it->second);
        if (QTest::currentTestFailed()) return;
    }
    QCOMPARE(seen, truthOfRank.size());
    seen = 0;
    for (const auto& source : doc.at("unattributed_sources")) {
        const auto it = truthOfUnranked.find(source.at("path").get<std::string>());
        if (it == truthOfUnranked.end()) continue;
        ++seen;
        checkGpuTime(source, it->second);
        if (QTest::currentTestFailed()) return;
    }
    QCOMPARE(seen, truthOfUnranked.size());
}

void TestRealTraces::publicTracesAnalyzeAsHealthy_data()
{
    QTest::addColumn<QString>("file"); // under kineto-wild/
    const QStringList files = wildTraces();
    QVERIFY(files.size() >= 2);
    for (const QString& f : files)
        QTest::newRow(qPrintable(f)) << f;
}

// Each public trace alone in its folder, as `rankscope analyze --json` reports it: the one process
// of a run that states no rank is an assumed rank 0 that says so, its source was read whole, the
// GPU breakdown is the raw file's, and a healthy run gets no fault.
void TestRealTraces::publicTracesAnalyzeAsHealthy()
{
    QFETCH(QString, file);
    const QString path = kData + QStringLiteral("/kineto-wild/") + file;
    const Truth truth = truthOf(path);
    QVERIFY(truth.gpu);
    LoadOptions options;
    options.buildLaneLods = false;
    const SessionPtr session = loadSession(QFileInfo(path).path(), {}, {}, options);
    const auto doc = AnalysisReport::toJson(*session, session->analysis);
    QCOMPARE(doc.at("ranks").size(), std::size_t(1));
    const auto& rank = doc.at("ranks").at(0);
    QCOMPARE(rank.at("rank").get<int>(), 0);
    QCOMPARE(rank.at("events").get<std::int64_t>(), truth.events);
    QCOMPARE(rank.at("sources").size(), std::size_t(1));
    const auto& source = rank.at("sources").at(0);
    QCOMPARE(source.at("kind").get<std::string>(), std::string("kineto"));
    QCOMPARE(source.at("status").get<std::string>(), std::string("ok"));
    QVERIFY(source.at("rank_evidence").get<std::string>().starts_with("assumed rank 0"));
    QVERIFY(doc.at("unattributed_sources").empty());
    // Within 1 % of the raw events (to the ns, in fact: both are sums of integer ns).
    const auto& g = rank.at("gpu_time");
    const auto near = [](double got, std::int64_t ns) {
        const double want = double(ns) / 1000.0;
        return std::abs(got - want) <= 0.01 * std::abs(want) + 1e-9;
    };
    QVERIFY(near(g.at("window_us").get<double>(), truth.windowNs));
    QVERIFY(near(g.at("compute_us").get<double>(), truth.computeNs));
    QVERIFY(near(g.at("communication_us").get<double>(), truth.commNs));
    QVERIFY(near(g.at("memory_us").get<double>(), truth.memNs));
    QVERIFY(near(g.at("idle_us").get<double>(), truth.idleNs));
    QVERIFY(near(g.at("comm_compute_overlap_us").get<double>(), truth.overlapNs));
    for (const auto& f : doc.at("findings")) {
        const std::string what =
            f.at("kind").get<std::string>() + ": " + f.at("summary").get<std::string>();
        QVERIFY2(healthyKind(f.at("kind").get<std::string>()), what.c_str());
        QVERIFY2(f.at("severity").get<std::string>() != "error", what.c_str());
    }
}

QTEST_GUILESS_MAIN(TestRealTraces)
#include "tst_realtraces.moc"
