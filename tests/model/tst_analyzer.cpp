#include "model/analysis/analyzer.h"
#include "model/analysis/jobsplit.h"
#include "model/analysis/logtriage.h"
#include "model/analysis/symptomids.h"
#include "model/analysisreport.h"
#include "model/kb/taxonomy.h"
#include "tests/support/findings.h"
#include "tests/support/syntheticjob.h"
#include "tests/support/testfiles.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <atomic>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <zlib.h>

using namespace rankscope;
using namespace rankscope::test;

// Scenarios shaped like tests/data/traces (CPU/gloo traces: no groups, no sizes; the collective
// the others wait in is closed by the error) with the log lines the classifier would hand over.
namespace {

const char* kIterationFailure = "data-and-model-preparation/iteration-failure";

// The N of a raw Kineto trace's ProfilerStep#N spans in time order, outermost only (a copy nested
// in the previous span is the same step); `spans`, when given, receives their (ts, ts + dur) in µs.
std::vector<int>
stepLabelsInTimeOrder(const QByteArray& trace,
                      std::vector<std::pair<std::int64_t, std::int64_t>>* spans = nullptr)
{
    const QJsonDocument doc = QJsonDocument::fromJson(trace);
    const QJsonArray events =
        doc.isArray() ? doc.array() : doc.object()[QLatin1String("traceEvents")].toArray();
    std::vector<std::tuple<std::int64_t, std::int64_t, int>> steps;
    static const QRegularExpression label(QStringLiteral("^ProfilerStep#(\\d+)$"));
    for (const QJsonValue& v : events) {
        const QJsonObject e = v.toObject();
        const QRegularExpressionMatch m = label.match(e[QLatin1String("name")].toString());
        if (!m.hasMatch() || e[QLatin1String("ph")].toString() != QLatin1String("X")) continue;
        const auto ts = std::int64_t(e[QLatin1String("ts")].toDouble());
        steps.emplace_back(ts, ts + std::int64_t(e[QLatin1String("dur")].toDouble()),
                           m.captured(1).toInt());
    }
    std::sort(steps.begin(), steps.end());
    std::vector<int> labels;
    std::int64_t lastEnd = -1;
    for (const auto& [start, end, n] : steps) {
        if (!labels.empty() && end <= lastEnd) continue;
        labels.push_back(n);
        lastEnd = end;
        if (spans) spans->emplace_back(start, end);
    }
    return labels;
}

Evidence line(int rank, int no, const char* text, const char* symptom, std::int64_t tNs,
              bool fatal = false, bool cascade = false)
{
    Evidence e;
    e.rank = rank;
    e.path = "rank" + std::to_string(rank) + ".log";
    e.line = no;
    e.text = text;
    e.symptom = symptom;
    e.timeNs = tNs;
    e.fatal = fatal;
    e.cascade = cascade;
    return e;
}

struct Scenario {
    SyntheticJob job;
    std::vector<Evidence> logs;
    explicit Scenario(int world) : job(world, false)
    {
        job.hangState = CollectiveRecord::State::Completed;
    }
};

void steps(SyntheticJob& job, int n, std::mt19937& rng, int slowRank = -1)
{
    std::uniform_int_distribution<std::int64_t> compute(1'000'000, 12'000'000);
    for (int s = 0; s < n; ++s) {
        std::vector<std::int64_t> c(static_cast<std::size_t>(job.worldSize()));
        for (int r = 0; r < job.worldSize(); ++r)
            c[std::size_t(r)] = compute(rng) + (r == slowRank ? 250'000'000 : 0);
        job.step(c, {"all_reduce", "all_reduce"});
    }
}

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kWall = 1'764'682'000 * kS; // log timestamps are wall-clock

Scenario build(const QString& name)
{
    std::mt19937 rng(11);
    if (name == QLatin1String("healthy")) {
        Scenario s(2);
        steps(s.job, 10, rng);
        return s;
    }
    if (name == QLatin1String("straggler")) {
        Scenario s(3);
        steps(s.job, 10, rng, 1);
        return s;
    }
    if (name == QLatin1String("hang_timeout") || name == QLatin1String("hang_timeout_logs_only")) {
        Scenario s(3);
        if (name == QLatin1String("hang_timeout")) {
            steps(s.job, 3, rng);
            s.job.step(uniform(3, 2'000'000), {"all_reduce"}, 200'000, {1}, 10 * kS);
        }
        const char* timeout = "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
                              "waiting 10000ms for recv operation to complete";
        s.logs.push_back(line(0, 40, timeout, symptoms::kHang, kWall + 10 * kS, true));
        s.logs.push_back(line(2, 41, timeout, symptoms::kHang, kWall + 10 * kS + 3'000'000, true));
        s.logs.push_back(line(1, 30, "received signal 15 (SIGTERM), shutting down", symptoms::kHang,
                              kWall + 14 * kS, false, true));
        return s;
    }
    if (name == QLatin1String("rank_crash") ||
        name == QLatin1String("rank_crash_peer_stamped_first")) {
        Scenario s(3);
        steps(s.job, 5, rng);
        s.job.step(uniform(3, 2'000'000), {"all_reduce"}, 200'000, {2}, 120'000'000);
        // Traceback lines carry the stamp of the last stamped line before them: a peer's error
        // can look earlier than the crash it follows from.
        const std::int64_t crashNs =
            kWall + 5 * kS +
            (name == QLatin1String("rank_crash_peer_stamped_first") ? 600'000'000 : 0);
        s.logs.push_back(
            line(2, 52, "IndexError: index 163 is out of bounds for dimension 0 with size 160",
                 kIterationFailure, crashNs, true));
        const char* closed = "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed "
                             "by peer [127.0.0.1]:12345";
        s.logs.push_back(
            line(0, 48, closed, symptoms::kCommunicationError, kWall + 5 * kS + 100'000'000, true));
        s.logs.push_back(
            line(1, 47, closed, symptoms::kCommunicationError, kWall + 5 * kS + 110'000'000, true));
        return s;
    }
    if (name == QLatin1String("uneven_inputs")) {
        Scenario s(2);
        steps(s.job, 6, rng);
        const std::int64_t t = s.job.nowNs();
        s.job.event(0, true, t, t + 10 * kS, "ProfilerStep#6", EventCategory::UserAnnotation);
        s.job.collective(0, "all_reduce", t + 3'000'000, -1, -1, CollectiveRecord::State::Issued,
                         6);
        s.job.event(1, true, t, t + 10 * kS, "ProfilerStep#6", EventCategory::UserAnnotation);
        s.job.collective(1, "barrier", t + 200'000, t + 250'000, t + 10 * kS,
                         CollectiveRecord::State::Completed, 6);
        const char* timeout = "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
                              "waiting 10000ms for recv operation to complete";
        s.logs.push_back(line(0, 60, timeout, symptoms::kHang, kWall + 10 * kS, true));
        s.logs.push_back(line(1, 58, timeout, symptoms::kHang, kWall + 10 * kS, true));
        return s;
    }
    if (name == QLatin1String("mismatched_collective")) {
        Scenario s(2);
        steps(s.job, 4, rng);
        const std::int64_t t = s.job.nowNs();
        for (int r = 0; r < 2; ++r)
            s.job.collective(r, "all_reduce", t + 1'000'000, -1, -1,
                             CollectiveRecord::State::Issued, 4);
        s.logs.push_back(
            line(0, 70,
                 "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
                 "collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[1]), but Rank 1 "
                 "is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[2])",
                 symptoms::kTensorMismatch, kWall + 2 * kS, true));
        s.logs.push_back(
            line(1, 71,
                 "RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running "
                 "collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[2]), but Rank 0 "
                 "is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[1])",
                 symptoms::kTensorMismatch, kWall + 2 * kS + 2'000'000, true));
        return s;
    }
    if (name == QLatin1String("mismatched_collective_4_ranks")) {
        Scenario s(4);
        steps(s.job, 4, rng);
        const std::int64_t t = s.job.nowNs();
        for (int r = 0; r < 4; ++r)
            s.job.collective(r, "all_reduce", t + 1'000'000, -1, -1,
                             CollectiveRecord::State::Issued, 4);
        const auto fp = [](int r) {
            return "CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[" +
                   std::string(r == 2 ? "2" : "1") + "])";
        };
        // Each rank names itself and one peer, as TORCH_DISTRIBUTED_DEBUG=DETAIL does.
        for (int r = 0; r < 4; ++r) {
            const int peer = (r + 1) % 4;
            const std::string text =
                "RuntimeError: Detected mismatch between collectives on ranks. Rank " +
                std::to_string(r) + " is running collective: " + fp(r) + ", but Rank " +
                std::to_string(peer) + " is running collective: " + fp(peer) + ".";
            s.logs.push_back(line(r, 70, text.c_str(), symptoms::kTensorMismatch,
                                  kWall + 2 * kS + r * 1'000'000, true));
        }
        return s;
    }
    if (name == QLatin1String("setup_failure")) {
        Scenario s(2); // no trace at all
        s.logs.push_back(line(1, 12,
                              "TimeoutError: The client socket has timed out after 10s while "
                              "trying to connect to (127.0.0.1, 29581).",
                              symptoms::kSetupHang, kWall + 9 * kS, true));
        s.logs.push_back(line(0, 15, "received signal 15 (SIGTERM), shutting down", symptoms::kHang,
                              kWall + 9 * kS + 400'000'000, false, true));
        s.logs.push_back(line(0, 22, "RuntimeError: Socket Timeout", symptoms::kSetupHang,
                              kWall + 9 * kS + 500'000'000, true));
        return s;
    }
    if (name == QLatin1String("unused_parameters")) {
        Scenario s(2);
        s.job.step(uniform(2, 3'000'000), {"all_reduce"});
        const char* msg = "RuntimeError: Expected to have finished reduction in the prior "
                          "iteration before starting a new one.";
        // DDP's reducer, not a transport, refused the step: the study's catch-all crash leaf.
        const char* leaf = "training-and-evaluation/program-failure/others";
        s.logs.push_back(line(0, 33, msg, leaf, kWall + kS, true));
        s.logs.push_back(line(1, 33, msg, leaf, kWall + kS + 4'000'000, true));
        return s;
    }
    qFatal("unknown scenario");
}

AnalysisResult run(Scenario& s)
{
    s.job.finish();
    std::vector<int> ranks(static_cast<std::size_t>(s.job.worldSize()));
    std::iota(ranks.begin(), ranks.end(), 0);
    return Analyzer::run(s.job.store, s.job.sourcePaths(), ranks, s.logs);
}

// A gzipped file of the test data, inflated here with zlib.
std::string readGzipText(const QString& path)
{
    gzFile f = gzopen(path.toLocal8Bit().constData(), "rb");
    if (!f) return {};
    std::string text;
    char buf[1 << 16];
    int n = 0;
    while ((n = gzread(f, buf, sizeof buf)) > 0)
        text.append(buf, std::size_t(n));
    gzclose(f);
    return text;
}

// A gzipped trace of the test data, parsed here with zlib and nlohmann_json: the truth the
// analysis is checked against.
nlohmann::json readGzipJson(const QString& path)
{
    return nlohmann::json::parse(readGzipText(path), nullptr, false);
}

// Copies `files` (relative to the test data) into `dir` and loads that folder.
SessionPtr loadCopies(const QTemporaryDir& dir, const QStringList& files)
{
    for (const QString& f : files)
        if (!QFile::copy(QStringLiteral(RANKSCOPE_TEST_DATA "/") + f,
                         dir.filePath(QFileInfo(f).fileName())))
            return nullptr;
    return loadSession(dir.path());
}

bool isFault(const Finding& f)
{
    return f.kind == FindingKind::Hang || f.kind == FindingKind::Desync ||
           f.kind == FindingKind::CollectiveMismatch || f.kind == FindingKind::Straggler;
}

// A job whose traces name no group and no sequence number: every rank issues an all_reduce and
// a broadcast per step; in the last step, ranks `absent` never arrive and the others wait.
// (A record dropped from a run of identical ops would look like a rank that stopped early: the
// order of ops is what shows a gap.)
SyntheticJob unnumberedJob(int world, int stepCount, const std::vector<int>& absent = {})
{
    SyntheticJob job(world, false);
    for (int s = 0; s < stepCount; ++s)
        job.step(std::vector<std::int64_t>(std::size_t(world), 3'000'000),
                 {"all_reduce", "broadcast"}, 200'000,
                 s + 1 == stepCount ? absent : std::vector<int>{});
    job.finish();
    return job;
}

void eraseRecords(EventStore& store, const std::function<bool(const CollectiveRecord&)>& drop)
{
    store.collectives.erase(
        std::remove_if(store.collectives.begin(), store.collectives.end(), drop),
        store.collectives.end());
}

// One point-to-point or collective call as a rank's profiler records it: a record_param_comms
// with the profiler's args (the peer of a send / recv as "Dst Rank" / "Src Rank"), in the default
// group, no Seq.
struct CommCall {
    const char* op; // "send", "recv", "allreduce"
    int peer = -1;
    std::int64_t nelems = 16;
    const char* dtype = "Float";
};

// A rank's Kineto trace: one ProfilerStep per entry of `steps`, holding its calls in order.
QByteArray commTrace(int rank, int world, const std::vector<std::vector<CommCall>>& steps)
{
    nlohmann::json events = nlohmann::json::array();
    std::string members = "[";
    for (int r = 0; r < world; ++r)
        members += (r ? ", " : "") + std::to_string(r);
    members += "]";
    std::int64_t t = 1000;
    for (std::size_t s = 0; s < steps.size(); ++s) {
        const std::int64_t stepStart = t;
        for (const CommCall& c : steps[s]) {
            t += 100;
            nlohmann::json args = {{"Collective name", c.op},    {"In msg nelems", c.nelems},
                                   {"Out msg nelems", c.nelems}, {"dtype", c.dtype},
                                   {"Process Group Name", "0"},  {"Process Group Ranks", members},
                                   {"Group size", world}};
            if (std::string_view(c.op) == "send") args["Dst Rank"] = c.peer;
            if (std::string_view(c.op) == "recv") args["Src Rank"] = c.peer;
            events.push_back({{"ph", "X"},
                              {"cat", "cpu_op"},
                              {"name", "record_param_comms"},
                              {"pid", 1},
                              {"tid", 1},
                              {"ts", t},
                              {"dur", 20},
                              {"args", args}});
        }
        t += 100;
        events.push_back({{"ph", "X"},
                          {"cat", "user_annotation"},
                          {"name", "ProfilerStep#" + std::to_string(s)},
                          {"pid", 1},
                          {"tid", 1},
                          {"ts", stepStart},
                          {"dur", t - stepStart}});
        t += 10;
    }
    const nlohmann::json doc = {
        {"distributedInfo", {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}}},
        {"traceEvents", events}};
    return QByteArray::fromStdString(doc.dump());
}

} // namespace

class TestAnalyzer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void emittedIdsAreInTheTaxonomy();
    void scenario_data();
    void scenario();
    void findingsJsonSchema();
    void kindAndSeverityNames();
    void diagnoseIsAFunctionOfTheRead();
    void diagnoseStopsInsideTheLogScan();
    void markdownReport();
    void absentRankIsNoCulprit();
    void rankNumberIsNoWorldSize();
    void sampledTracesAreNotPairedByOrder();
    void pairingByOrder_data();
    void pairingByOrder();
    void countsFromFilesAreBounded_data();
    void countsFromFilesAreBounded();
    void traceNcclVersionsAreCompared_data();
    void traceNcclVersionsAreCompared();
    void pointToPointFromTraces_data();
    void pointToPointFromTraces();
    void mixedJobsAreNotCompared_data();
    void mixedJobsAreNotCompared();
    void mixedJobsWorldSizeIsTheAnalysedJobs();
    void jobSplitRules_data();
    void jobSplitRules();
    void jobsInSubfolders_data();
    void jobsInSubfolders();
    void oldRunsInSubfoldersAreNotCompared();
    void runsSideBySideAreToldApartByTheirLaunch_data();
    void runsSideBySideAreToldApartByTheirLaunch();
    void oneRealRunIsOneJob();
    void ranksFailingOneWayAreQuotedInTheirOwnWords();
    void aRankSetAsideIsNotSaidToHaveLeftNothing();
    void stragglerStepsAreTheTracesOwnLabels_data();
    void stragglerStepsAreTheTracesOwnLabels();
    void repeatedStepLabelsSayWhichSpan();
    void runsWithoutLaunchLinesAreToldApartByTheirStarts_data();
    void runsWithoutLaunchLinesAreToldApartByTheirStarts();
    void realRunsWithoutLaunchLinesStayOneJob();
    void noCulpritWithoutItsEvidence_data();
    void noCulpritWithoutItsEvidence();
    void missingRanksAreOneDecision_data();
    void missingRanksAreOneDecision();
    void witnessIsTheSignaturesNotItsId();
    void everyRankWaitingToReceiveIsNoLinkFailure_data();
    void everyRankWaitingToReceiveIsNoLinkFailure();
    void cutTraceIsNoCulprit_data();
    void cutTraceIsNoCulprit();
    void cutGpuTraceLosesCompletionsNotARank();
    void emptyFileOfARankIsNamedNotAcquitted();
    void ranksDownWithAKilledRanksNodeAreNotBlamed();
    void hangWithARankThatLeftNothing();
    void logsNameTheRankThatLeftNoTrace();
    void logTimeoutTheTracesDoNotShow();
    void everySignatureOfTheRootLineChoosesTheFix();
    void firstCollectiveTimeoutsAreARankNotDonePreparing_data();
    void firstCollectiveTimeoutsAreARankNotDonePreparing();
    void witnessedMismatchExplainsTheStuckCollective();
};

void TestAnalyzer::emittedIdsAreInTheTaxonomy()
{
    const Taxonomy& t = Taxonomy::instance();
    QVERIFY(t.leaves().size() > 30);
    for (const char* id : {symptoms::kHang, symptoms::kLowEfficiency, symptoms::kTensorMismatch,
                           symptoms::kCommunicationError, symptoms::kSetupFailure,
                           symptoms::kSetupHang, symptoms::kPreparationHang, kIterationFailure})
        QVERIFY2(t.isLeafId(QString::fromUtf8(id)), id);
    QVERIFY(!t.node(QString::fromUtf8(symptoms::kSetupFailure))->fixPatterns.empty());
}

void TestAnalyzer::scenario_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<std::optional<FindingKind>>("kind"); // of the first finding; none: no error
    QTest::addColumn<std::vector<int>>("ranks");
    QTest::addColumn<int>("step"); // -1: not checked
    QTest::newRow("healthy") << "healthy" << std::optional<FindingKind>() << std::vector<int>{}
                             << -1;
    QTest::newRow("straggler") << "straggler" << std::optional(FindingKind::Straggler)
                               << std::vector<int>{1} << 0;
    QTest::newRow("hang_timeout") << "hang_timeout" << std::optional(FindingKind::Hang)
                                  << std::vector<int>{1} << 3;
    QTest::newRow("hang_timeout, logs only")
        << "hang_timeout_logs_only" << std::optional(FindingKind::Hang) << std::vector<int>{1}
        << -1;
    QTest::newRow("rank_crash") << "rank_crash" << std::optional(FindingKind::Crash)
                                << std::vector<int>{2} << -1;
    QTest::newRow("rank_crash, a peer's error stamped first")
        << "rank_crash_peer_stamped_first" << std::optional(FindingKind::Crash)
        << std::vector<int>{2} << -1;
    QTest::newRow("mismatched_collective, 4 ranks, one odd shape")
        << "mismatched_collective_4_ranks" << std::optional(FindingKind::CollectiveMismatch)
        << std::vector<int>{2} << -1;
    QTest::newRow("uneven_inputs")
        << "uneven_inputs" << std::optional(FindingKind::Desync) << std::vector<int>{1} << 6;
    QTest::newRow("mismatched_collective")
        << "mismatched_collective" << std::optional(FindingKind::CollectiveMismatch)
        << std::vector<int>{0, 1} << -1;
    QTest::newRow("setup_failure")
        << "setup_failure" << std::optional(FindingKind::SetupFailure) << std::vector<int>{1} << -1;
    QTest::newRow("unused_parameters")
        << "unused_parameters" << std::optional(FindingKind::Crash) << std::vector<int>{0, 1} << -1;
}

void TestAnalyzer::scenario()
{
    QFETCH(QString, name);
    QFETCH(std::optional<FindingKind>, kind);
    QFETCH(std::vector<int>, ranks);
    QFETCH(int, step);
    Scenario s = build(name);
    const AnalysisResult res = run(s);
    {
        // Kept for people reviewing what the report says about each scenario.
        QFile md(QStringLiteral(RANKSCOPE_TEST_OUTPUT "/analysis_%1.md").arg(name));
        if (md.open(QIODevice::WriteOnly))
            md.write(AnalysisReport::toMarkdown(TraceSession{}, res).toUtf8());
    }
    const Taxonomy& taxonomy = Taxonomy::instance();
    for (const Finding& f : res.findings) {
        QVERIFY2(taxonomy.isLeafId(QString::fromStdString(f.symptom)), f.symptom.c_str());
        QVERIFY2(!f.evidence.empty(), f.summary.c_str());
        QVERIFY(!f.fixPatterns.empty());
        for (const std::string& p : f.fixPatterns)
            QVERIFY2(taxonomy.fixPattern(QString::fromStdString(p)), p.c_str());
        for (const Evidence& e : f.evidence)
            QVERIFY(!e.path.empty() && (e.line >= 0 || e.timeNs >= 0));
    }
    if (!kind) {
        for (const Finding& f : res.findings)
            QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        return;
    }
    QVERIFY(!res.findings.empty());
    const Finding& top = res.findings.front();
    QVERIFY2(top.kind == *kind, (findingKindName(top.kind) + ": " + top.summary).c_str());
    QCOMPARE(top.ranks, ranks);
    if (step >= 0) QCOMPARE(top.step, step);
    QCOMPARE(top.id, std::string("F1"));
    // No other error finding may blame a rank that only waited or followed.
    for (const Finding& f : res.findings)
        if (f.severity == Severity::Error)
            for (int r : f.ranks)
                QVERIFY2(std::find(ranks.begin(), ranks.end(), r) != ranks.end() || f.ranks.empty(),
                         f.summary.c_str());
    QVERIFY(!res.symptoms.empty());
    QCOMPARE(res.symptoms.front().symptom, top.symptom);
    for (std::size_t i = 1; i < res.symptoms.size(); ++i)
        QVERIFY(res.symptoms[i - 1].score >= res.symptoms[i].score);
}

void TestAnalyzer::findingsJsonSchema()
{
    Scenario s = build(QStringLiteral("hang_timeout"));
    const AnalysisResult res = run(s);
    const auto j = AnalysisReport::findingsJson(res);
    QVERIFY(j.is_array() && !j.empty());
    for (const char* key : {"id", "kind", "symptom", "severity", "ranks", "process_group", "seq",
                            "step", "time_range_us", "summary", "evidence", "fix_patterns"})
        QVERIFY2(j[0].contains(key), key);
    QVERIFY(j[0]["ranks"] == nlohmann::ordered_json::array({1}));
    QVERIFY(j[0]["time_range_us"].is_array());
    QVERIFY(j[0]["evidence"][0].contains("path"));
    const auto sym = AnalysisReport::symptomsJson(res);
    QCOMPARE(sym[0]["symptom"].get<std::string>(), std::string(symptoms::kHang));
    QVERIFY(!sym[0]["findings"].empty());
}

// Each kind and severity has a name of its own that reads back as it (what the JSON report and
// taxonomy/fix_rules.json spell), and no other text reads as one.
void TestAnalyzer::kindAndSeverityNames()
{
    std::set<std::string> names;
    for (int k = 0; k <= int(FindingKind::LogSymptom); ++k) {
        const auto kind = FindingKind(k);
        const std::string name = findingKindName(kind);
        QVERIFY(!name.empty() && names.insert(name).second);
        QCOMPARE(findingKindFromName(name), std::optional(kind));
    }
    names.clear();
    for (int k = 0; k <= int(Severity::Info); ++k) {
        const auto severity = Severity(k);
        const std::string name = severityName(severity);
        QVERIFY(!name.empty() && names.insert(name).second);
        QCOMPARE(severityFromName(name), std::optional(severity));
    }
    QVERIFY(!findingKindFromName("Hang"));
    QVERIFY(!findingKindFromName(""));
    QVERIFY(!severityFromName("fatal"));
}

namespace {

// What a read holds, in enough detail that a diagnosis that changed it would show.
std::string readFingerprint(const TraceRead& read)
{
    std::string out;
    for (const SourceFile& s : read.folder.sources())
        out += s.relativePath.toStdString() + ' ' + std::to_string(int(s.status)) + ' ' +
               std::to_string(s.rank.value_or(-1)) + '\n';
    for (const Lane& l : read.events.lanes) {
        out += std::to_string(l.rank) + ' ' + l.name + ' ' + std::to_string(l.startNs.size());
        for (std::size_t i = 0; i < l.startNs.size(); ++i)
            out += ' ' + std::to_string(l.startNs[i]) + '-' + std::to_string(l.endNs[i]);
        out += '\n';
    }
    for (const CollectiveRecord& c : read.events.collectives)
        out += std::to_string(c.rank) + ' ' + std::to_string(c.seq) + ' ' +
               std::to_string(c.issueStartNs) + ' ' + std::string(read.events.strings.view(c.op)) +
               '\n';
    for (const RankLog& log : read.logs)
        out += log.sourcePath.toStdString() + ' ' + std::to_string(log.lineCount()) + '\n';
    out += std::to_string(read.dumps.size()) + ' ' + std::to_string(read.errors.size()) + ' ' +
           read.warnings.join(QLatin1Char('|')).toStdString();
    return out;
}

// A diagnosis as the reports and the checklist show it.
std::string diagnosisText(const Diagnosis& d)
{
    std::string out = AnalysisReport::findingsJson(d.analysis).dump() +
                      AnalysisReport::symptomsJson(d.analysis).dump() +
                      std::to_string(d.analysis.logLineCount);
    for (const AutoCheckResult& r : d.autoChecks)
        out += '\n' + r.checkId.toStdString() + ' ' +
               autoCheckOutcomeLabel(r.outcome).toStdString() + ' ' +
               r.evidenceText().toStdString();
    return out;
}

} // namespace

// diagnose() depends on the read alone: twice on one read it concludes the same, the same as
// the loaded session holds, and the read is as it was before.
void TestAnalyzer::diagnoseIsAFunctionOfTheRead()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout");
    const TraceRead read = readFolder(dir);
    QVERIFY(!read.events.lanes.empty() && !read.events.collectives.empty() && !read.logs.empty());
    const std::string before = readFingerprint(read);
    const Diagnosis first = diagnose(read);
    const Diagnosis second = diagnose(read);
    QCOMPARE(readFingerprint(read), before);
    QVERIFY(!first.analysis.findings.empty() && !first.autoChecks.empty());
    QCOMPARE(diagnosisText(second), diagnosisText(first));
    const SessionPtr session = loadSession(dir);
    QCOMPARE(readFingerprint(*session), before);
    QCOMPARE(diagnosisText(*session), diagnosisText(first));
    // The report is built from the read and its analysis as from the loaded session.
    QCOMPARE(AnalysisReport::toJson(read, first.analysis).dump(),
             AnalysisReport::toJson(*session, session->analysis).dump());
}

// A log of several poll chunks: the signature hits are those of one scan of the whole log (the
// first 64 per rule, across chunk boundaries), and a stop set while the first chunks are scanned
// ends diagnose() there, with nothing concluded.
void TestAnalyzer::diagnoseStopsInsideTheLogScan()
{
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("rank0.log")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    const int lines = 4 * AutoCheckEvaluator::kLinesPerPoll;
    std::vector<int> oomLines; // 1-based
    for (int i = 1; i <= lines; ++i) {
        if (i % 1000 == 0) {
            f.write("node1:3:3 [0] enqueue.cc:197 NCCL WARN Cuda failure 'out of memory'\n");
            oomLines.push_back(i);
        } else {
            f.write("[rank0] INFO train: step " + QByteArray::number(i) + " loss 1.0\n");
        }
    }
    f.close();
    const TraceRead read = readFolder(dir.path());
    QCOMPARE(read.logs.size(), std::size_t(1));
    QCOMPARE(read.logs.front().lineCount(), lines);

    std::vector<int> cited;
    for (const Evidence& e : classifyLogs(read))
        if (e.signature == "nccl.cuda-oom") cited.push_back(e.line);
    QCOMPARE(cited, std::vector<int>(oomLines.begin(), oomLines.begin() + 64));

    std::atomic<bool> stop{false};
    int polls = 0;
    ParallelControl control;
    control.stop = &stop;
    control.poll = [&] {
        if (++polls == 2) stop = true;
    };
    const Diagnosis stopped = diagnose(read, control);
    QVERIFY(stopped.interrupted);
    // The second chunk's poll, then diagnose()'s own look at the flag: no other chunk ran.
    QCOMPARE(polls, 3);
    QVERIFY(stopped.analysis.findings.empty() && stopped.autoChecks.empty());
    int wholePolls = 0;
    control.stop = nullptr;
    control.poll = [&] { ++wholePolls; };
    const Diagnosis whole = diagnose(read, control);
    QVERIFY(!whole.interrupted);
    QVERIFY(wholePolls >= 4 + 4); // each chunk of the scan, and of the port check
    QCOMPARE(whole.analysis.logLineCount, std::size_t(lines));
}

void TestAnalyzer::markdownReport()
{
    Scenario s = build(QStringLiteral("rank_crash"));
    const AnalysisResult res = run(s);
    TraceSession session;
    const QString md = AnalysisReport::toMarkdown(session, res);
    QVERIFY(md.contains(QStringLiteral("### F1 · error · crash · rank 2")));
    QVERIFY(md.contains(QStringLiteral("IndexError: index 163")));
    QVERIFY(md.contains(QStringLiteral("| `rank2.log` | line 52 |")));
    QVERIFY(md.contains(QStringLiteral("## Clocks")));
}

// Rank 0 of a healthy 2-rank NCCL job, alone in its folder: rank 1 left nothing, which is a fact
// to state, not a hang to blame on it.
void TestAnalyzer::absentRankIsNoCulprit()
{
    const QString file = QStringLiteral("kineto-gpu-samples/nccl_2rank_rank0.json.gz");
    const nlohmann::json raw = readGzipJson(QStringLiteral(RANKSCOPE_TEST_DATA "/") + file);
    const int rank = raw["distributedInfo"]["rank"].get<int>();
    const int world = raw["distributedInfo"]["world_size"].get<int>();
    QVERIFY(world > 1);
    QTemporaryDir dir;
    const SessionPtr session = loadCopies(dir, {file});
    QVERIFY(session);
    QVERIFY(session->events.collectives.size() > 0);
    int warnings = 0;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        QVERIFY2(f.ranks.empty() || f.ranks == std::vector<int>{rank}, f.summary.c_str());
        if (f.kind != FindingKind::MissingRanks) continue;
        ++warnings;
        QCOMPARE(f.severity, Severity::Warning);
        for (int r = 0; r < world; ++r)
            if (r != rank && world - 1 <= 8)
                QVERIFY2(f.summary.find(std::to_string(r)) != std::string::npos, f.summary.c_str());
    }
    QCOMPARE(warnings, 1);
    for (const CollectiveGroup& g : session->analysis.groups)
        QCOMPARE(g.members, std::vector<int>{rank});
}

// A trace whose rank comes from its file name alone (HTA's large_integer_trace, rank-70) states no
// world size: rank 70 says the job had more than 70 ranks, not that ranks 0-69 left no file.
void TestAnalyzer::rankNumberIsNoWorldSize()
{
    const QString file = QStringLiteral(
        "kineto-real-hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz");
    const nlohmann::json raw = readGzipJson(QStringLiteral(RANKSCOPE_TEST_DATA "/") + file);
    QVERIFY(!raw.contains("distributedInfo"));
    QTemporaryDir dir;
    const SessionPtr session = loadCopies(dir, {file});
    QVERIFY(session);
    QCOMPARE(session->folder.ranks(), QList<int>{70});
    QCOMPARE(session->folder.statedWorldSize(), 0);
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        QVERIFY2(f.kind != FindingKind::MissingRanks, f.summary.c_str());
    }
    for (const AutoCheckResult& c : session->autoChecks)
        QVERIFY2(c.summary.indexOf(QStringLiteral("ranks 0")) < 0, qPrintable(c.summary));
}

// Ranks 0 and 1 of a healthy 128-rank job, their events sampled (HTA's trace_filter test data):
// no Seq, and collectives missing from each rank's trace, so pairing by order is unsound.
void TestAnalyzer::sampledTracesAreNotPairedByOrder()
{
    const QStringList files = {
        QStringLiteral("kineto-real-hta/trace_filter/sampled_rank-0.json.gz"),
        QStringLiteral("kineto-real-hta/trace_filter/sampled_rank-1.json.gz")};
    // What the raw files say: one job, two of its ranks, no sequence numbers on any event.
    std::vector<int> ranks;
    int world = 0;
    for (const QString& f : files) {
        const nlohmann::json raw = readGzipJson(QStringLiteral(RANKSCOPE_TEST_DATA "/") + f);
        ranks.push_back(raw["distributedInfo"]["rank"].get<int>());
        world = raw["distributedInfo"]["world_size"].get<int>();
        for (const auto& e : raw["traceEvents"])
            QVERIFY(!e.contains("args") || !e["args"].contains("Seq"));
    }
    QCOMPARE(ranks, (std::vector<int>{0, 1}));
    QTemporaryDir dir;
    const SessionPtr session = loadCopies(dir, files);
    QVERIFY(session);
    QVERIFY(session->events.collectives.size() > 0);
    const AnalysisResult& res = session->analysis;
    bool unpaired = false, missing = false;
    for (const Finding& f : res.findings) {
        QVERIFY2(!isFault(f), f.summary.c_str());
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        unpaired = unpaired || f.kind == FindingKind::UnpairedCollectives;
        if (f.kind == FindingKind::MissingRanks) {
            missing = true;
            QVERIFY2(f.summary.find("ranks 2–" + std::to_string(world - 1)) != std::string::npos,
                     f.summary.c_str());
        }
    }
    QVERIFY(unpaired);
    QVERIFY(missing);
    // No clock offset rests on guessed pairs.
    QVERIFY(!res.clock.offsetNs.count(1) || !res.clock.offsetNs.at(1) ||
            *res.clock.offsetNs.at(1) == 0);
    for (const CollectiveGroup& g : res.groups)
        QVERIFY(g.collectives.empty() || g.unpairedReason.empty());
}

// Traces without sequence numbers are paired by each rank's order only when that is sound: the
// ranks hold the same run of collectives (a real mismatch in it is still found), not a run with
// a record missing or a profiling window that starts a step later.
void TestAnalyzer::pairingByOrder_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<FindingKind>("kind"); // the error finding expected, or the info finding
    QTest::addColumn<std::vector<int>>("ranks");
    QTest::newRow("complete, sizes differ at one collective")
        << "size" << FindingKind::CollectiveMismatch << std::vector<int>{1};
    QTest::newRow("complete, a group named but not numbered, sizes differ")
        << "named size" << FindingKind::CollectiveMismatch << std::vector<int>{1};
    QTest::newRow("complete, rank 2 stops early")
        << "stop" << FindingKind::Hang << std::vector<int>{2};
    QTest::newRow("a record dropped from rank 1's trace")
        << "drop" << FindingKind::UnpairedCollectives << std::vector<int>{};
    QTest::newRow("rank 1's window starts a step later")
        << "window" << FindingKind::UnpairedCollectives << std::vector<int>{};
    QTest::newRow("sizes differ at many collectives")
        << "noise" << FindingKind::UnpairedCollectives << std::vector<int>{};
}

void TestAnalyzer::pairingByOrder()
{
    QFETCH(QString, change);
    QFETCH(FindingKind, kind);
    QFETCH(std::vector<int>, ranks);
    constexpr int kWorld = 4;
    SyntheticJob job = unnumberedJob(
        kWorld, 6, change == QLatin1String("stop") ? std::vector<int>{2} : std::vector<int>{});
    auto& recs = job.store.collectives;
    // The k-th record of `rank` in issue order (the job stores them rank by rank).
    const auto nth = [&recs](int rank, int k) -> CollectiveRecord& {
        int seen = 0;
        for (CollectiveRecord& c : recs)
            if (c.rank == rank && seen++ == k) return c;
        qFatal("no such record");
    };
    if (change == QLatin1String("size") || change == QLatin1String("named size")) {
        nth(1, 5).inNelems = nth(1, 5).outNelems = 512;
        if (change == QLatin1String("named size")) {
            // As the Kineto extractor leaves them: a group name, the per-group ordinal as seq.
            std::map<int, std::int64_t> ordinal;
            const StringId group = job.store.strings.intern("0");
            for (CollectiveRecord& c : recs) {
                c.processGroupName = group;
                c.seq = ++ordinal[c.rank];
            }
        }
    } else if (change == QLatin1String("drop")) {
        const std::int64_t t = nth(1, 4).issueStartNs;
        eraseRecords(job.store,
                     [t](const CollectiveRecord& c) { return c.rank == 1 && c.issueStartNs == t; });
    } else if (change == QLatin1String("window")) {
        eraseRecords(job.store,
                     [](const CollectiveRecord& c) { return c.rank == 1 && c.step == 0; });
        eraseRecords(job.store,
                     [](const CollectiveRecord& c) { return c.rank != 1 && c.step == 5; });
    } else if (change == QLatin1String("noise")) {
        for (int k : {1, 4, 7})
            nth(3, k).inNelems = nth(3, k).outNelems = 100 + k;
    }
    std::vector<int> world(kWorld);
    std::iota(world.begin(), world.end(), 0);
    const AnalysisResult res = Analyzer::run(job.store, job.sourcePaths(), world, {});
    const auto found = std::find_if(res.findings.begin(), res.findings.end(),
                                    [&](const Finding& f) { return f.kind == kind; });
    QVERIFY2(found != res.findings.end(), findingKindName(kind).c_str());
    QCOMPARE(found->ranks, ranks);
    if (kind == FindingKind::UnpairedCollectives) {
        for (const Finding& f : res.findings)
            QVERIFY2(!isFault(f), f.summary.c_str());
        for (const auto& [rank, offset] : res.clock.offsetNs)
            QVERIFY(!offset || *offset == 0);
    } else {
        QCOMPARE(res.findings.front().kind, kind);
    }
}

// A world size of two billion in one log line: the ranks it implies are described as ranges,
// never listed or allocated one by one, and the load returns.
void TestAnalyzer::countsFromFilesAreBounded_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("absent"); // how the absent ranks read
    QTest::newRow("WORLD_SIZE") << "rank0.log" << QByteArray("WORLD_SIZE=2000000000\n")
                                << QStringLiteral("ranks 1–1999999999");
    QTest::newRow("NCCL nranks") << "rank5.log"
                                 << QByteArray("node1:4242:4242 [5] NCCL INFO comm 0x55d0c0 rank 5 "
                                               "nranks 2000000000 cudaDev 5 busId 1000 - Init "
                                               "COMPLETE\n")
                                 << QStringLiteral("ranks 0–4, 6–1999999999");
}

void TestAnalyzer::countsFromFilesAreBounded()
{
    QFETCH(QString, file);
    QFETCH(QByteArray, line);
    QFETCH(QString, absent);
    QTemporaryDir dir;
    QFile f(dir.filePath(file));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(line);
    f.close();
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    const auto check = std::find_if(
        session->autoChecks.begin(), session->autoChecks.end(),
        [](const AutoCheckResult& r) { return r.checkId == QLatin1String("all_ranks_present"); });
    QVERIFY(check != session->autoChecks.end());
    QVERIFY2(check->summary.contains(absent), qPrintable(check->summary));
    for (const Finding& f : session->analysis.findings)
        QVERIFY2(f.summary.size() < 2000, f.summary.c_str());
}

void TestAnalyzer::traceNcclVersionsAreCompared_data()
{
    QTest::addColumn<QString>("suffix"); // appended to the real version for rank 1
    QTest::addColumn<bool>("bumpMinor"); // rank 1 states another release
    QTest::newRow("same version") << QString() << false;
    QTest::newRow("same release, another CUDA build") << QStringLiteral("+cuda12.1") << false;
    QTest::newRow("another release") << QString() << true;
}

// A real NCCL trace states its NCCL version (distributedInfo.nccl_version) and no log is there
// to print one: rank 1's copy of it states the same or another version. The version ConfigCheck
// and the auto-check compare is the release, not the CUDA build after '+'.
void TestAnalyzer::traceNcclVersionsAreCompared()
{
    QFETCH(QString, suffix);
    QFETCH(bool, bumpMinor);
    nlohmann::json raw = readGzipJson(
        QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-gpu-samples/nccl_2rank_rank0.json.gz"));
    const std::string stated = raw.at("distributedInfo").at("nccl_version").get<std::string>();
    QCOMPARE(raw["distributedInfo"]["rank"].get<int>(), 0);
    std::string other = stated + suffix.toStdString();
    if (bumpMinor) {
        const std::size_t dot = other.find('.');
        QVERIFY(dot != std::string::npos);
        const std::size_t end = other.find_first_not_of("0123456789", dot + 1);
        const int minor = std::stoi(other.substr(dot + 1, end - dot - 1));
        other = other.substr(0, dot + 1) + std::to_string(minor + 1) +
                (end == std::string::npos ? std::string() : other.substr(end));
    }
    const auto release = [](const std::string& v) { return v.substr(0, v.find('+')); };
    const bool differ = release(stated) != release(other);

    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank0.pt.trace.json")),
              QByteArray::fromStdString(raw.dump()));
    raw["distributedInfo"]["rank"] = 1;
    raw["distributedInfo"]["nccl_version"] = other;
    writeFile(dir.filePath(QStringLiteral("rank1.pt.trace.json")),
              QByteArray::fromStdString(raw.dump()));
    LoadOptions options;
    options.buildLaneLods = false;
    const SessionPtr session = loadSession(dir.path(), {}, {}, options);
    QCOMPARE(session->folder.ranks(), (QList<int>{0, 1}));

    const Finding* mismatch = nullptr;
    for (const Finding& f : session->analysis.findings)
        if (f.kind == FindingKind::ConfigMismatch && f.summary.find("NCCL") != std::string::npos)
            mismatch = &f;
    QCOMPARE(mismatch != nullptr, differ);
    if (mismatch) {
        QCOMPARE(mismatch->ranks, (std::vector<int>{0, 1})); // one each: no majority
        QVERIFY2(mismatch->summary.find(release(other)) != std::string::npos,
                 mismatch->summary.c_str());
    }
    const auto check = std::find_if(session->autoChecks.begin(), session->autoChecks.end(),
                                    [](const AutoCheckResult& c) {
                                        return c.checkId == QLatin1String("same_framework_version");
                                    });
    QVERIFY(check != session->autoChecks.end());
    const QString text = check->evidenceText();
    QCOMPARE(check->outcome == AutoCheckOutcome::Failed, differ);
    QVERIFY2(!text.contains(QStringLiteral("rank.nccl_version absent")), qPrintable(text));
    QVERIFY2(text.contains(QString::fromStdString(release(stated))), qPrintable(text));
}

void TestAnalyzer::pointToPointFromTraces_data()
{
    using Steps = std::vector<std::vector<CommCall>>;
    QTest::addColumn<std::vector<Steps>>("ranks");
    // A pipeline: 0 sends to 1, 1 to 2, then every rank all_reduces. Ranks post different
    // numbers of point-to-point ops before the collective they share.
    const auto pipeline = [](std::int64_t recvOn1, bool recvOn2InLastStep) {
        std::vector<Steps> ranks(3);
        for (int s = 0; s < 2; ++s) {
            ranks[0].push_back({{"send", 1}, {"allreduce"}});
            ranks[1].push_back({{"recv", 0, recvOn1}, {"send", 2}, {"allreduce"}});
            if (recvOn2InLastStep || s == 0)
                ranks[2].push_back({{"recv", 1}, {"allreduce"}});
            else
                ranks[2].push_back({{"allreduce"}});
        }
        return ranks;
    };
    QTest::newRow("matched") << pipeline(16, true);
    QTest::newRow("recv missing on rank 2") << pipeline(16, false);
    QTest::newRow("recv of another size on rank 1") << pipeline(8, true);
}

// Kineto traces that record send and recv with their peer: paired by peer and order like the
// Flight Recorder's. What the test expects is computed from the traces it wrote.
void TestAnalyzer::pointToPointFromTraces()
{
    using Steps = std::vector<std::vector<CommCall>>;
    QFETCH(std::vector<Steps>, ranks);
    const int world = int(ranks.size());
    QTemporaryDir dir;
    // (src, dst) -> the sizes rank src sent to dst, and those dst received from src, in order.
    std::map<std::pair<int, int>, std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>>
        links;
    for (int r = 0; r < world; ++r) {
        const QByteArray text = commTrace(r, world, ranks[std::size_t(r)]);
        writeFile(dir.filePath(QStringLiteral("rank%1.pt.trace.json").arg(r)), text);
        const nlohmann::json doc = nlohmann::json::parse(text.toStdString());
        for (const auto& e : doc["traceEvents"]) {
            if (!e.contains("args")) continue;
            const auto& a = e["args"];
            if (a.contains("Dst Rank"))
                links[{r, a["Dst Rank"].get<int>()}].first.push_back(a["In msg nelems"]);
            if (a.contains("Src Rank"))
                links[{a["Src Rank"].get<int>(), r}].second.push_back(a["Out msg nelems"]);
        }
    }
    std::set<std::vector<int>> unpaired, differing; // blamed ranks
    for (const auto& [link, sizes] : links) {
        const auto& [sent, received] = sizes;
        for (std::size_t k = 0; k < std::min(sent.size(), received.size()); ++k)
            if (sent[k] != received[k]) {
                differing.insert(
                    {std::min(link.first, link.second), std::max(link.first, link.second)});
                break;
            }
        if (sent.size() != received.size())
            unpaired.insert({sent.size() > received.size() ? link.second : link.first});
    }

    LoadOptions options;
    options.buildLaneLods = false;
    const SessionPtr session = loadSession(dir.path(), {}, {}, options);
    std::set<std::vector<int>> desyncs, mismatches;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.kind != FindingKind::Hang && f.kind != FindingKind::UnpairedCollectives,
                 f.summary.c_str());
        if (f.kind == FindingKind::Desync) desyncs.insert(f.ranks);
        if (f.kind == FindingKind::CollectiveMismatch) {
            // The all_reduce every rank issued is never one: point-to-point ops do not shift it.
            QVERIFY2(f.summary.find("send ") != std::string::npos, f.summary.c_str());
            mismatches.insert(f.ranks);
        }
    }
    QCOMPARE(desyncs, unpaired);
    QCOMPARE(mismatches, differing);
}

namespace {

// What a raw trace states of its job, read here from the JSON itself.
struct RawTrace {
    QString name;
    int rank = -1;
    int world = 0;
    std::int64_t firstNs = 0, lastNs = 0; // events on the wall clock (ts in µs + base)
};

RawTrace rawTrace(const QString& file)
{
    const nlohmann::json raw = readGzipJson(QStringLiteral(RANKSCOPE_TEST_DATA "/") + file);
    RawTrace t;
    t.name = QFileInfo(file).fileName();
    const nlohmann::json& info = raw["distributedInfo"];
    t.rank = info["rank"].get<int>();
    t.world = info["world_size"].get<int>();
    const std::int64_t base = raw.value("baseTimeNanoseconds", std::int64_t(0));
    double lo = 1e300, hi = -1e300;
    for (const auto& e : raw["traceEvents"]) {
        if (!e.contains("ts") || e.value("ph", "") == "M") continue;
        const double ts =
            e["ts"].is_string() ? std::stod(e["ts"].get<std::string>()) : e["ts"].get<double>();
        lo = std::min(lo, ts);
        hi = std::max(hi, ts + e.value("dur", 0.0));
    }
    t.firstNs = base + std::int64_t(lo * 1000.0);
    t.lastNs = base + std::int64_t(hi * 1000.0);
    return t;
}

QString utcSecond(std::int64_t ns)
{
    return QDateTime::fromMSecsSinceEpoch(ns / 1'000'000, QTimeZone::utc())
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

} // namespace

// Traces of different jobs in one folder (HTA's samples of a 16-, a 2- and a 128-rank job, three
// of them rank 0; or copies of two real jobs' files) are never compared: one finding names the
// jobs as their files state them, the job with the most ranks is analysed alone, and no rank is
// blamed for what another job did. A folder of one job gets no such finding.
void TestAnalyzer::mixedJobsAreNotCompared_data()
{
    QTest::addColumn<QStringList>("files");
    const auto hta = [](const char* file) -> QString {
        return QStringLiteral("kineto-real-hta/") + QLatin1String(file);
    };
    const auto samples = [](const char* file) -> QString {
        return QStringLiteral("kineto-gpu-samples/") + QLatin1String(file);
    };
    QTest::addRow("kineto-gpu-samples") << QStringList{
        samples("fsdp_16rank_rank0.json.gz"), samples("nccl_2rank_rank0.json.gz"),
        samples("sampled_128rank_rank0.json.gz"), samples("sampled_128rank_rank1.json.gz")};
    QTest::addRow("two real jobs") << QStringList{
        hta("trace_filter/sampled_rank-0.json.gz"), hta("trace_filter/sampled_rank-1.json.gz"),
        hta("ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")};
    QTest::addRow("one job") << QStringList{hta("trace_filter/sampled_rank-0.json.gz"),
                                            hta("trace_filter/sampled_rank-1.json.gz")};
}

void TestAnalyzer::mixedJobsAreNotCompared()
{
    QFETCH(QStringList, files);
    // The jobs as the raw files state them: these samples' jobs differ in world size, the files
    // of one job overlap in time, and different jobs' files do not.
    std::map<int, std::vector<RawTrace>> jobs; // world size -> its traces
    for (const QString& f : files) {
        const RawTrace t = rawTrace(f);
        QVERIFY2(t.world > 0 && t.lastNs > t.firstNs, qPrintable(f));
        jobs[t.world].push_back(t);
    }
    for (const auto& [world, a] : jobs)
        for (const auto& [other, b] : jobs)
            for (const RawTrace& x : a)
                for (const RawTrace& y : b) {
                    const bool overlap = x.firstNs <= y.lastNs && y.firstNs <= x.lastNs;
                    QCOMPARE(overlap, world == other);
                }
    const auto analysedJob = std::max_element(jobs.begin(), jobs.end(), [](auto& a, auto& b) {
        return a.second.size() < b.second.size();
    });

    QTemporaryDir dir;
    const SessionPtr session = loadCopies(dir, files);
    QVERIFY(session);
    const AnalysisResult& res = session->analysis;
    std::vector<const Finding*> mixed;
    for (const Finding& f : res.findings) {
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        QVERIFY2(!isFault(f), f.summary.c_str());
        if (f.kind == FindingKind::MixedJobs) mixed.push_back(&f);
    }
    if (jobs.size() == 1) {
        QVERIFY(mixed.empty());
        return;
    }
    QCOMPARE(mixed.size(), std::size_t(1));
    const Finding& f = *mixed.front();
    QCOMPARE(f.severity, Severity::Warning);
    QVERIFY(f.ranks.empty());
    QVERIFY2(f.summary.find("traces of " + std::to_string(jobs.size()) + " different jobs") !=
                 std::string::npos,
             f.summary.c_str());
    // Each file is cited once, under the job number of its job, with what it states.
    QCOMPARE(f.evidence.size(), std::size_t(files.size()));
    std::map<int, std::string> jobLabel; // world size -> "job K"
    for (const auto& [world, traces] : jobs)
        for (const RawTrace& t : traces) {
            const auto e =
                std::find_if(f.evidence.begin(), f.evidence.end(),
                             [&](const Evidence& e) { return e.path == t.name.toStdString(); });
            QVERIFY2(e != f.evidence.end(), qPrintable(t.name));
            QCOMPARE(e->rank, t.rank);
            const std::string label = e->text.substr(0, e->text.find(':'));
            QVERIFY(jobLabel.emplace(world, label).first->second == label);
            QVERIFY2(e->text.find("world size " + std::to_string(world)) != std::string::npos,
                     e->text.c_str());
            QVERIFY2(e->text.find(utcSecond(t.firstNs).toStdString()) != std::string::npos,
                     e->text.c_str());
            QVERIFY2(e->text.find(utcSecond(t.lastNs).toStdString()) != std::string::npos,
                     e->text.c_str());
        }
    std::set<std::string> labels;
    for (const auto& [world, label] : jobLabel)
        labels.insert(label);
    QCOMPARE(labels.size(), jobs.size());
    const std::string analysed = jobLabel.at(analysedJob->first) + " (analysed)";
    QVERIFY2(f.summary.find(analysed) != std::string::npos, f.summary.c_str());

    // Only the analysed job's ranks are matched and measured as ranks, each from its own file
    // alone; the other jobs' files are measured each on its own.
    std::set<int> analysedRanks;
    for (const RawTrace& t : analysedJob->second)
        analysedRanks.insert(t.rank);
    for (const CollectiveGroup& g : res.groups)
        for (int m : g.members)
            QVERIFY(analysedRanks.count(m));
    std::set<QString> measuredAlone;
    for (const RankTimeBreakdown& b : res.breakdown) {
        const RawTrace* t = nullptr;
        if (b.rank >= 0) {
            for (const RawTrace& x : analysedJob->second)
                if (x.rank == b.rank) t = &x;
        } else {
            const QString name =
                QFileInfo(session->folder.sources().at(b.sourceIndex).relativePath).fileName();
            for (const auto& [world, traces] : jobs)
                for (const RawTrace& x : traces)
                    if (x.name == name && world != analysedJob->first) t = &x;
            measuredAlone.insert(name);
        }
        QVERIFY2(t, qPrintable(QString::number(b.rank)));
        QVERIFY(b.windowStartNs >= t->firstNs - 1000 && b.windowEndNs <= t->lastNs + 1000);
    }
    QCOMPARE(measuredAlone.size(), std::size_t(files.size()) - analysedJob->second.size());
}

// A folder mixing a 2-rank job (two small traces written here) with one trace of HTA's 128-rank
// sample: the 2-rank job is analysed (more ranks), so the world size the report states and the
// auto-checks compare against is the one its traces state, not the other job's.
void TestAnalyzer::mixedJobsWorldSizeIsTheAnalysedJobs()
{
    const QString other = QStringLiteral("kineto-gpu-samples/sampled_128rank_rank0.json.gz");
    const int otherWorld = rawTrace(other).world;
    constexpr int world = 2;
    QVERIFY(otherWorld != world);
    QTemporaryDir dir;
    QVERIFY(QFile::copy(QStringLiteral(RANKSCOPE_TEST_DATA "/") + other,
                        dir.filePath(QFileInfo(other).fileName())));
    for (int rank = 0; rank < world; ++rank) {
        nlohmann::json trace;
        trace["schemaVersion"] = 1;
        trace["distributedInfo"] = {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}};
        trace["baseTimeNanoseconds"] = 1'700'000'000'000'000'000LL;
        trace["traceEvents"] = nlohmann::json::array({{{"ph", "X"},
                                                       {"cat", "cpu_op"},
                                                       {"name", "aten::add"},
                                                       {"pid", 1},
                                                       {"tid", 1},
                                                       {"ts", 1000.0},
                                                       {"dur", 50.0}}});
        QFile f(dir.filePath(QStringLiteral("rank%1.pt.trace.json").arg(rank)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray::fromStdString(trace.dump()));
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QVERIFY(std::any_of(session->analysis.findings.begin(), session->analysis.findings.end(),
                        [](const Finding& f) { return f.kind == FindingKind::MixedJobs; }));
    const nlohmann::ordered_json doc = AnalysisReport::toJson(*session, session->analysis);
    QCOMPARE(doc["world_size"].get<int>(), world);
    QCOMPARE(doc["world_size_at_least"].get<int>(), world);
    // Ranks 0 and 1 of a 2-rank job are all there: nothing is absent, whatever the 128-rank
    // job's file says.
    bool checked = false;
    for (const AutoCheckResult& r : session->autoChecks) {
        if (r.checkId != QLatin1String("all_ranks_present")) continue;
        checked = true;
        QVERIFY2(r.outcome != AutoCheckOutcome::Failed, qPrintable(r.evidenceText()));
        QVERIFY2(!r.summary.contains(QString::number(otherWorld)), qPrintable(r.summary));
    }
    QVERIFY(checked);
}

namespace {

// Trace A and trace B (or a log, for "b is a log"), as discovery and the readers state them.
struct StatedPair {
    SourceFile a, b;
    StatedPair()
    {
        for (SourceFile* s : {&a, &b}) {
            s->kind = SourceKind::Kineto;
            s->stated.firstNs = std::int64_t(1'700'000'000) * 1'000'000'000;
            s->stated.lastNs = s->stated.firstNs + 2'000'000'000;
        }
        a.relativePath = QStringLiteral("a.json");
        b.relativePath = QStringLiteral("b.json");
        a.rank = 0;
        b.rank = 1;
    }
};

} // namespace

Q_DECLARE_METATYPE(StatedPair)

// Each thing two traces can state that one job cannot (and what does not tell jobs apart).
void TestAnalyzer::jobSplitRules_data()
{
    QTest::addColumn<StatedPair>("pair");
    QTest::addColumn<bool>("mixed");
    StatedPair p;
    QTest::addRow("nothing differs") << p << false;
    p.a.stated.worldSize = p.b.stated.worldSize = 4;
    p.a.stated.backend = p.b.stated.backend = QStringLiteral("nccl");
    QTest::addRow("same world size and backend") << p << false;
    StatedPair w = p;
    w.b.stated.worldSize = 8;
    QTest::addRow("world sizes differ") << w << true;
    StatedPair be = p;
    be.b.stated.backend = QStringLiteral("gloo");
    QTest::addRow("backends differ") << be << true;
    StatedPair pg;
    pg.a.stated.processGroupSizes[QStringLiteral("0")] = 2;
    pg.b.stated.processGroupSizes[QStringLiteral("0")] = 4;
    QTest::addRow("a process group's sizes differ") << pg << true;
    pg.b.stated.processGroupSizes = {{QStringLiteral("1"), 4}};
    QTest::addRow("different process groups") << pg << false;
    StatedPair beyond;
    beyond.a.stated.worldSize = 2;
    beyond.b.rank = 5;
    QTest::addRow("a rank beyond the other's world size") << beyond << true;
    StatedPair apart;
    apart.b.stated.firstNs = apart.a.stated.lastNs + JobSplit::kSameJobGapNs + 1;
    apart.b.stated.lastNs = apart.b.stated.firstNs + 1'000'000'000;
    QTest::addRow("clocks further apart than one job runs") << apart << true;
    StatedPair near = apart;
    near.b.stated.firstNs = near.a.stated.lastNs + JobSplit::kSameJobGapNs - 1;
    QTest::addRow("clocks within a job's slack") << near << false;
    StatedPair relative;
    relative.a.stated.firstNs = 100'000;
    relative.a.stated.lastNs = 200'000;
    relative.b.stated.firstNs = 9'000'000'000'000;
    relative.b.stated.lastNs = 9'000'100'000'000;
    QTest::addRow("relative clocks say nothing") << relative << false;
    StatedPair log = w;
    log.b.kind = SourceKind::Log;
    QTest::addRow("a log is placed in no job") << log << false;
}

void TestAnalyzer::jobSplitRules()
{
    QFETCH(StatedPair, pair);
    QFETCH(bool, mixed);
    const JobSplit split = splitJobs({pair.a, pair.b}, {});
    QCOMPARE(split.mixed(), mixed);
    QCOMPARE(split.setAside, (std::vector<bool>{false, mixed}));
    if (!mixed) return;
    // The two jobs seen from the other side: still two, whatever the order of the files.
    QCOMPARE(splitJobs({pair.b, pair.a}, {}).jobs.size(), std::size_t(2));
    const Finding f = mixedJobsFinding(split, {pair.a, pair.b});
    QCOMPARE(f.kind, FindingKind::MixedJobs);
    QCOMPARE(f.evidence.size(), std::size_t(2));
    QVERIFY2(f.summary.find("job 1 (analysed): a.json") != std::string::npos, f.summary.c_str());
}

namespace {

SourceFile fileOf(const char* path, SourceKind kind, int rank, std::int64_t wallClockNs = -1)
{
    SourceFile s;
    s.relativePath = QLatin1String(path);
    s.kind = kind;
    s.rank = rank;
    s.sizeBytes = 1000;
    // PyTorch 1.13 traces: relative timestamps (no wall clock) unless given one.
    s.stated.firstNs = wallClockNs >= 0 ? wallClockNs : 100'000;
    s.stated.lastNs = s.stated.firstNs + 2'000'000'000;
    return s;
}

} // namespace

Q_DECLARE_METATYPE(QList<SourceFile>)
Q_DECLARE_METATYPE(std::vector<bool>)

// Traces that state no world size and no wall clock are told apart by where they lie: one rank
// claimed from two subfolders makes each subfolder a job, its logs with it. Two files of one rank
// in one folder, or a run spread over a subfolder per rank, stay one job.
void TestAnalyzer::jobsInSubfolders_data()
{
    QTest::addColumn<QList<SourceFile>>("files");
    QTest::addColumn<std::vector<bool>>("setAside");
    const auto K = SourceKind::Kineto;
    const auto L = SourceKind::Log;
    const std::int64_t clock = std::int64_t(1'700'000'000) * 1'000'000'000;
    QTest::addRow("two runs, rank 0 in both subfolders")
        << QList<SourceFile>{fileOf("a/rank0.json", K, 0), fileOf("a/rank0.log", L, 0),
                             fileOf("b/rank0.json", K, 0), fileOf("b/rank1.json", K, 1),
                             fileOf("b/rank1.log", L, 1),  fileOf("launcher.log", L, 0)}
        << std::vector<bool>{true, true, false, false, false, false};
    QTest::addRow("a trace and a log of one rank")
        << QList<SourceFile>{fileOf("rank0.json", K, 0), fileOf("rank0.log", L, 0)}
        << std::vector<bool>{false, false};
    QTest::addRow("two traces of one rank in one folder")
        << QList<SourceFile>{fileOf("run/rank0.json", K, 0), fileOf("run/rank0.2.json", K, 0),
                             fileOf("run/rank1.json", K, 1)}
        << std::vector<bool>{false, false, false};
    QTest::addRow("one run, a subfolder per rank")
        << QList<SourceFile>{fileOf("r0/rank0.json", K, 0), fileOf("r0/rank0.log", L, 0),
                             fileOf("r1/rank1.json", K, 1), fileOf("r1/rank1.log", L, 1)}
        << std::vector<bool>{false, false, false, false};
    QTest::addRow("profiling windows of one run on one wall clock")
        << QList<SourceFile>{fileOf("step100/rank0.json", K, 0, clock),
                             fileOf("step200/rank0.json", K, 0, clock + 60'000'000'000)}
        << std::vector<bool>{false, false};
}

void TestAnalyzer::jobsInSubfolders()
{
    QFETCH(QList<SourceFile>, files);
    QFETCH(std::vector<bool>, setAside);
    const JobSplit split = splitJobs(files, {});
    const bool mixed = std::find(setAside.begin(), setAside.end(), true) != setAside.end();
    QCOMPARE(split.mixed(), mixed);
    QCOMPARE(split.bySubfolder, mixed);
    QCOMPARE(split.setAside, setAside);
}

// The audit's folder: a healthy 2-rank run in a/ and the 3-rank straggler run in b/, both
// PyTorch 1.13 (traces with no distributedInfo and relative timestamps) with their logs. The
// runs' logs state different master ports; they must not be compared as one job's: the 3-rank
// run is analysed alone, its straggler found, and no rank blamed for the other run's port.
void TestAnalyzer::oldRunsInSubfoldersAreNotCompared()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    const std::map<QString, QString> runs{{QStringLiteral("a"), QStringLiteral("healthy")},
                                          {QStringLiteral("b"), QStringLiteral("straggler")}};
    QTemporaryDir dir;
    std::map<QString, std::set<QString>> ports; // subfolder -> master ports its launch lines state
    for (const auto& [sub, run] : runs) {
        QVERIFY(QDir(dir.path()).mkdir(sub));
        const QStringList names =
            QDir(data + run)
                .entryList({QStringLiteral("rank*"), QStringLiteral("launcher.log")}, QDir::Files);
        QVERIFY(!names.isEmpty());
        for (const QString& name : names) {
            QFile raw(data + run + u'/' + name);
            QVERIFY(raw.open(QIODevice::ReadOnly));
            const QByteArray bytes = raw.readAll();
            if (name.endsWith(QLatin1String(".json")))
                QVERIFY2(!bytes.contains("distributedInfo"), qPrintable(name));
            for (const QByteArray& line : bytes.split('\n')) {
                const qsizetype at = line.indexOf(" starting: ");
                const qsizetype master = line.indexOf(" master=", at);
                if (at < 0 || master < 0) continue;
                const QByteArray hostPort =
                    line.mid(master + 8, line.indexOf(' ', master + 8) - master - 8);
                ports[sub].insert(QString::fromLatin1(hostPort.mid(hostPort.lastIndexOf(':') + 1)));
            }
            QVERIFY(QFile::copy(data + run + u'/' + name, dir.filePath(sub + u'/' + name)));
        }
    }
    QCOMPARE(ports[QStringLiteral("a")].size(), std::size_t(1));
    QCOMPARE(ports[QStringLiteral("b")].size(), std::size_t(1));
    QVERIFY(ports[QStringLiteral("a")] != ports[QStringLiteral("b")]);
    QFile truthFile(data + QStringLiteral("straggler/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const QJsonObject truth = QJsonDocument::fromJson(truthFile.readAll()).object();
    const int straggler = truth.value(QStringLiteral("faulty_rank")).toInt(-1);
    QVERIFY(straggler >= 0);

    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    int mixed = 0, stragglers = 0;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.severity != Severity::Error, f.summary.c_str());
        QVERIFY2(f.kind != FindingKind::ConfigMismatch, f.summary.c_str());
        for (const std::string& port : {ports[QStringLiteral("a")].begin()->toStdString(),
                                        ports[QStringLiteral("b")].begin()->toStdString()})
            QVERIFY2(f.summary.find(port) == std::string::npos, f.summary.c_str());
        if (f.kind == FindingKind::MixedJobs) {
            ++mixed;
            QVERIFY2(f.summary.find("(analysed): b/") != std::string::npos, f.summary.c_str());
            QVERIFY2(f.summary.find("subfolders") != std::string::npos, f.summary.c_str());
        }
        if (f.kind == FindingKind::Straggler) {
            ++stragglers;
            QCOMPARE(f.ranks, std::vector<int>{straggler});
            // Measured on b/'s ranks alone, as in the run's own folder: a/'s steps are no rank's
            // (they once counted as one more rank's, "vs 2.2 ms on the others").
            const SessionPtr alone = loadSession(data + QStringLiteral("straggler"));
            QVERIFY(alone);
            const auto same =
                std::find_if(alone->analysis.findings.begin(), alone->analysis.findings.end(),
                             [](const Finding& g) { return g.kind == FindingKind::Straggler; });
            QVERIFY(same != alone->analysis.findings.end());
            QCOMPARE(f.summary, same->summary);
        }
    }
    QCOMPARE(mixed, 1);
    QCOMPARE(stragglers, 1);
}

namespace {

// The folder `dir` of two runs' files side by side is split by the launches its logs show
// (`byStart`: where none names one, by the ranks' starts), setting aside exactly the files
// `asideByName` says; no setting of one run is compared with the other's; `summary` receives its
// one mixed-jobs finding's.
void checkRunsSideBySide(const QString& dir, const std::map<QString, bool>& asideByName,
                         bool byStart, std::string& summary)
{
    const SessionPtr session = loadSession(dir);
    QVERIFY(session);
    const JobSplit split = splitJobs(session->folder.sources(), session->logs);
    QVERIFY(split.mixed());
    QVERIFY(split.byLaunch);
    QCOMPARE(split.byStart, byStart);
    const QList<SourceFile> sources = session->folder.sources();
    QCOMPARE(sources.size(), qsizetype(asideByName.size()));
    for (int i = 0; i < int(sources.size()); ++i)
        QVERIFY2(split.setAside[std::size_t(i)] == asideByName.at(sources[i].relativePath),
                 qPrintable(sources[i].relativePath));
    int mixed = 0;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.kind != FindingKind::ConfigMismatch, f.summary.c_str());
        if (f.kind != FindingKind::MixedJobs) continue;
        ++mixed;
        summary = f.summary;
    }
    QCOMPARE(mixed, 1);
}

// `from` copied to `to` with every launch its text names taken out (MASTER_ADDR/PORT in any of
// the forms the real logs print them, run ids), as a run whose logs name no launch leaves it.
bool copyWithoutLaunches(const QString& from, const QString& to)
{
    static const QRegularExpression launch(
        QStringLiteral(
            "\\b(?:master_addr|master_port|master|torchelastic_run_id|run_id)\\s*[=:]\\s*\\S+"),
        QRegularExpression::CaseInsensitiveOption);
    QFile in(from);
    QFile out(to);
    if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly)) return false;
    const QByteArray bytes = in.readAll();
    if (!from.endsWith(QLatin1String(".log"))) return out.write(bytes) == bytes.size();
    const QByteArray text = QString::fromUtf8(bytes).remove(launch).toUtf8();
    return out.write(text) == text.size();
}

} // namespace

// Two real runs' files side by side in one flat folder (PyTorch 1.13: no world size, no wall
// clock in the traces). "prefixed": the healthy 2-rank run as a_*, the 3-rank straggler run as
// b_*; both have ranks 0 and 1, launched under different master ports. "far apart": the healthy
// run's ranks 0, 1 beside rank 2 of a 3-rank run of the next day. The files of the run with fewer
// ranks are set aside (truth: which run each file was copied from), the launches' ports are named,
// and no rank is blamed for the other run's port.
void TestAnalyzer::runsSideBySideAreToldApartByTheirLaunch_data()
{
    QTest::addColumn<QStringList>("files"); // "run/name" copied as "prefix+name"
    QTest::addColumn<QStringList>("prefixes");
    QTest::addColumn<QString>("setAsideRun");
    const auto list = [](const char* names) { return QString::fromLatin1(names).split(u' '); };
    const QStringList healthy = list("healthy/rank0.log healthy/rank0.pt.trace.json "
                                     "healthy/rank1.log healthy/rank1.pt.trace.json "
                                     "healthy/launcher.log");
    const QStringList straggler =
        list("straggler/rank0.log straggler/rank0.pt.trace.json straggler/rank1.log "
             "straggler/rank1.pt.trace.json straggler/rank2.log straggler/rank2.pt.trace.json "
             "straggler/launcher.log");
    QStringList prefixes;
    for (qsizetype i = 0; i < healthy.size(); ++i)
        prefixes << QStringLiteral("a_");
    for (qsizetype i = 0; i < straggler.size(); ++i)
        prefixes << QStringLiteral("b_");
    QTest::newRow("prefixed") << healthy + straggler << prefixes << QStringLiteral("healthy");
    const QStringList other =
        list("hang_timeout_w3_step0/rank2.log hang_timeout_w3_step0/rank2.pt.trace.json");
    QTest::newRow("far apart") << healthy + other
                               << QStringList(healthy.size() + other.size(), QString())
                               << QStringLiteral("hang_timeout_w3_step0");
}

void TestAnalyzer::runsSideBySideAreToldApartByTheirLaunch()
{
    QFETCH(QStringList, files);
    QFETCH(QStringList, prefixes);
    QFETCH(QString, setAsideRun);
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    QTemporaryDir dir;
    std::map<QString, bool> asideByName; // copied name -> it came from setAsideRun
    std::map<QString, std::set<QString>> portsOfRun;
    for (qsizetype i = 0; i < files.size(); ++i) {
        const QString run = files[i].section(u'/', 0, 0);
        const QString name = prefixes[i] + files[i].section(u'/', 1);
        QFile raw(data + files[i]);
        QVERIFY2(raw.open(QIODevice::ReadOnly), qPrintable(files[i]));
        const QString text = QString::fromUtf8(raw.readAll());
        if (name.endsWith(QLatin1String(".json")))
            QVERIFY2(!text.contains(QLatin1String("distributedInfo")), qPrintable(name));
        portsOfRun[run].merge(masterPortsIn(text));
        QVERIFY(QFile::copy(data + files[i], dir.filePath(name)));
        asideByName[name] = run == setAsideRun;
    }
    QCOMPARE(portsOfRun.size(), std::size_t(2));
    std::set<QString> ports;
    for (const auto& [run, p] : portsOfRun) {
        QCOMPARE(p.size(), std::size_t(1)); // each run's ranks name one port
        ports.insert(*p.begin());
    }
    QCOMPARE(ports.size(), std::size_t(2));

    std::string summary;
    checkRunsSideBySide(dir.path(), asideByName, false, summary);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(summary.find("launches") != std::string::npos, summary.c_str());
    for (const QString& port : ports)
        QVERIFY2(summary.find(":" + port.toStdString()) != std::string::npos, summary.c_str());
}

// Two real runs side by side whose logs name no launch (their MASTER_ADDR/PORT taken out):
// "world sizes" the healthy 2-rank run (a_*) beside the 3-rank straggler run (b_*) started 7 s
// later, whose rank 0 and 1 state world size 2 in one log and 3 in the other; "days apart" the
// healthy run beside rank 0 of a 2-rank run two days later (b_*). One rank started twice tells the
// runs apart; the run with fewer ranks is set aside. Truth: which run each file was copied from,
// and the dates and world sizes its start-up lines state.
void TestAnalyzer::runsWithoutLaunchLinesAreToldApartByTheirStarts_data()
{
    QTest::addColumn<QStringList>(
        "files"); // "run/name", copied as "a_name" (first run) or "b_name"
    QTest::addColumn<QString>("setAsideRun");
    const auto list = [](const char* names) { return QString::fromLatin1(names).split(u' '); };
    const QStringList healthy = list("healthy/rank0.log healthy/rank0.pt.trace.json "
                                     "healthy/rank1.log healthy/rank1.pt.trace.json "
                                     "healthy/launcher.log");
    QTest::newRow("world sizes") << healthy +
                                        list("straggler/rank0.log straggler/rank0.pt.trace.json "
                                             "straggler/rank1.log straggler/rank1.pt.trace.json "
                                             "straggler/rank2.log straggler/rank2.pt.trace.json "
                                             "straggler/launcher.log")
                                 << QStringLiteral("healthy");
    QTest::newRow("days apart")
        << healthy + list("loader_stall_w2_r0/rank0.log loader_stall_w2_r0/rank0.pt.trace.json")
        << QStringLiteral("loader_stall_w2_r0");
}

void TestAnalyzer::runsWithoutLaunchLinesAreToldApartByTheirStarts()
{
    QFETCH(QStringList, files);
    QFETCH(QString, setAsideRun);
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    static const QRegularExpression startLine(
        QStringLiteral("^\\[?(\\d{4}-\\d\\d-\\d\\d "
                       "\\d\\d:\\d\\d:\\d\\d)[^\\n]*(?:world_size|WORLD_SIZE)=(\\d+)"),
        QRegularExpression::MultilineOption);
    QTemporaryDir dir;
    std::map<QString, bool> asideByName;
    std::map<QString, std::set<QString>> startsOfRun; // "2026-12-02 13:41:15 UTC, world size 2"
    const QString firstRun = files.front().section(u'/', 0, 0);
    for (const QString& file : files) {
        const QString run = file.section(u'/', 0, 0);
        const QString name =
            (run == firstRun ? QStringLiteral("a_") : QStringLiteral("b_")) + file.section(u'/', 1);
        QVERIFY(copyWithoutLaunches(data + file, dir.filePath(name)));
        asideByName[name] = run == setAsideRun;
        QFile copy(dir.filePath(name));
        QVERIFY(copy.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(copy.readAll());
        QVERIFY2(!text.contains(QLatin1String("MASTER_PORT")) &&
                     !text.contains(QLatin1String("master=")),
                 qPrintable(name));
        if (!name.endsWith(QLatin1String(".log")) || name.contains(QLatin1String("launcher")))
            continue;
        const QRegularExpressionMatch m = startLine.match(text);
        QVERIFY2(m.hasMatch(), qPrintable(name));
        startsOfRun[run].insert(m.captured(1) + QStringLiteral(" UTC, world size ") +
                                m.captured(2));
    }
    QCOMPARE(startsOfRun.size(), std::size_t(2));

    std::string summary;
    checkRunsSideBySide(dir.path(), asideByName, true, summary);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(summary.find("started more than once") != std::string::npos, summary.c_str());
    // Each run is named by its first start (to the second) and the world size it states.
    for (const auto& [run, starts] : startsOfRun)
        QVERIFY2(summary.find(starts.begin()->toStdString()) != std::string::npos, summary.c_str());
}

// Every real run, its logs' launches taken out, is still one job: one rank's one log never
// reads as two starts, whatever its lines' dates.
void TestAnalyzer::realRunsWithoutLaunchLinesStayOneJob()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    const QStringList runs = QDir(data).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(runs.size() > 30);
    for (const QString& run : runs) {
        QTemporaryDir dir;
        for (const QString& name : QDir(data + run).entryList(QDir::Files))
            QVERIFY(copyWithoutLaunches(data + run + u'/' + name, dir.filePath(name)));
        const SessionPtr session = loadSession(dir.path());
        QVERIFY(session);
        const JobSplit split = splitJobs(session->folder.sources(), session->logs);
        QVERIFY2(!split.mixed(), qPrintable(run));
    }
}

// Every real run of tests/data/traces is one job, whatever its ranks' logs name (setup_failure's
// rank 1 was launched with another MASTER_PORT: a misconfigured run, not two).
void TestAnalyzer::oneRealRunIsOneJob()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    const QStringList runs = QDir(data).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(runs.size() > 30);
    for (const QString& run : runs) {
        const SessionPtr session = loadSession(data + run);
        QVERIFY(session);
        const JobSplit split = splitJobs(session->folder.sources(), session->logs);
        QVERIFY2(!split.mixed(), qPrintable(run));
        for (const Finding& f : session->analysis.findings)
            QVERIFY2(f.kind != FindingKind::MixedJobs, qPrintable(run));
    }
}

// "Ranks 0, 2 failed the same way: ..." quotes each rank's own line (hang_timeout: rank 0 timed
// out on a recv, rank 2 on a send). Truth from the raw logs: for every such finding of the real
// runs, each blamed rank that left a log of its own has one of its own lines (its first 100
// characters) in the summary, numbers aside (a line that differs from another rank's only in its
// numbers is named, not quoted).
void TestAnalyzer::ranksFailingOneWayAreQuotedInTheirOwnWords()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    int checked = 0;
    for (const QString& run : QDir(data).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const SessionPtr session = loadSession(data + run);
        QVERIFY(session);
        for (const Finding& f : session->analysis.findings) {
            if (f.summary.find(" failed the same way: ") == std::string::npos) continue;
            for (const int r : f.ranks) {
                QFile log(data + run + QStringLiteral("/rank%1.log").arg(r));
                if (!log.open(QIODevice::ReadOnly)) continue;
                static const QRegularExpression number(QStringLiteral("\\d+"));
                const QString summary =
                    QString::fromStdString(f.summary).replace(number, QStringLiteral("#"));
                bool quoted = false;
                for (const QByteArray& raw : log.readAll().split('\n')) {
                    const QString line = QString::fromUtf8(raw.trimmed().left(100));
                    if (line.size() < 30) continue;
                    // The line, or its end after "…" (past a space, '/', ':' or '['), where another
                    // rank's quoted line starts the same.
                    const QString shape = QString(line).replace(number, QStringLiteral("#"));
                    quoted = quoted || summary.contains(shape);
                    for (qsizetype from = 1; from + 20 <= shape.size() && !quoted; ++from)
                        if (QStringLiteral(" /:[").contains(shape[from - 1]))
                            quoted = summary.contains(QStringLiteral("…") + shape.mid(from));
                }
                QVERIFY2(quoted, qPrintable(run + u'\n' + QString::fromStdString(f.summary)));
                ++checked;
            }
        }
    }
    QVERIFY(checked >= 10);
}

// Ranks 0 and 2 of the 3-rank straggler run beside rank 1 of a 3-rank run of the next day: the
// straggler run is analysed and its rank 1 left nothing, but the folder holds rank 1's files (of
// the other run, set aside). The missing-ranks warning must say so, not that the folder holds
// files for ranks 0, 2 only. Truth: the ranks of the files copied, and which run each came from.
void TestAnalyzer::aRankSetAsideIsNotSaidToHaveLeftNothing()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    const QStringList files =
        QString::fromLatin1("straggler/rank0.log straggler/rank0.pt.trace.json "
                            "straggler/rank2.log straggler/rank2.pt.trace.json "
                            "hang_timeout_w3_step0/rank1.log "
                            "hang_timeout_w3_step0/rank1.pt.trace.json")
            .split(u' ');
    QTemporaryDir dir;
    std::set<int> otherRunRanks;
    for (const QString& file : files) {
        const QString name = file.section(u'/', 1);
        QVERIFY(QFile::copy(data + file, dir.filePath(name)));
        if (file.startsWith(QLatin1String("hang_timeout_w3_step0/")))
            otherRunRanks.insert(name.mid(4, 1).toInt());
    }
    QCOMPARE(otherRunRanks, std::set<int>{1});
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    int missing = 0;
    for (const Finding& f : session->analysis.findings) {
        if (f.kind != FindingKind::MissingRanks) continue;
        ++missing;
        QVERIFY2(f.summary.find("the folder holds files for") == std::string::npos,
                 f.summary.c_str());
        QVERIFY2(f.summary.find("rank 1's rank1.") != std::string::npos, f.summary.c_str());
        QVERIFY2(f.summary.find("set aside as another job's") != std::string::npos,
                 f.summary.c_str());
    }
    QCOMPARE(missing, 1);
}

void TestAnalyzer::stragglerStepsAreTheTracesOwnLabels_data()
{
    QTest::addColumn<QString>("run");
    for (const char* run : {"straggler", "straggler_w3_r0", "straggler_w4"})
        QTest::newRow(run) << QString::fromLatin1(run);
}

// The straggler's steps are named as its trace names them ("ProfilerStep#0 to #9"), never as a
// bare "step 0" a reader takes for the log's step 0 (PyTorch 1.13's ProfilerStep#N is the log's
// step N + 1). Truth: the ProfilerStep#N names in the straggler's raw trace (ground_truth.json's
// faulty rank).
void TestAnalyzer::stragglerStepsAreTheTracesOwnLabels()
{
    QFETCH(QString, run);
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + run;
    QFile truthFile(dir + QStringLiteral("/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const int straggler = QJsonDocument::fromJson(truthFile.readAll())
                              .object()[QLatin1String("faulty_rank")]
                              .toInt(-1);
    QVERIFY(straggler >= 0);
    const QStringList traces =
        QDir(dir).entryList({QStringLiteral("rank%1.*pt.trace.json").arg(straggler)}, QDir::Files);
    QCOMPARE(traces.size(), qsizetype(1));
    QFile trace(dir + u'/' + traces.front());
    QVERIFY(trace.open(QIODevice::ReadOnly));
    // The spans in time order: this PyTorch labels two of them ProfilerStep#0.
    const std::vector<int> labels = stepLabelsInTimeOrder(trace.readAll());
    QVERIFY(!labels.empty());
    const SessionPtr session = loadSession(dir);
    QVERIFY(session);
    // "ProfilerStep#0 (1st of 2 so labelled)": which span of a repeated label is meant.
    const QString step =
        QStringLiteral("ProfilerStep#(\\d+)(?: \\((\\d+)\\w\\w of \\d+ so labelled\\))?");
    static const QRegularExpression range(QStringLiteral("(\\d+) steps?, ") + step +
                                          QStringLiteral("(?: to ") + step +
                                          QStringLiteral(")? in the trace's own numbering"));
    // The index in time order of the nth span labelled `label`, -1 when there is none.
    const auto indexOf = [&](int label, int nth) {
        for (std::size_t i = 0; i < labels.size(); ++i)
            if (labels[i] == label && --nth == 0) return int(i);
        return -1;
    };
    int found = 0;
    for (const Finding& f : session->analysis.findings) {
        if (f.kind != FindingKind::Straggler) continue;
        ++found;
        QCOMPARE(f.ranks, std::vector<int>{straggler});
        const QString summary = QString::fromStdString(f.summary);
        QVERIFY2(!summary.contains(QLatin1String("from step")), qPrintable(summary));
        const QRegularExpressionMatch m = range.match(summary);
        QVERIFY2(m.hasMatch(), qPrintable(summary));
        const int first = m.captured(2).toInt();
        const int last = m.hasCaptured(4) ? m.captured(4).toInt() : first;
        // A label the trace gives once is named alone, a repeated one with which span it is.
        const auto occurrence = [&](int label, int group) {
            const auto spans = std::count(labels.begin(), labels.end(), label);
            if (spans == 1) return m.hasCaptured(group) ? -1 : 1;
            return m.hasCaptured(group) ? m.captured(group).toInt() : -1;
        };
        const int from = indexOf(first, occurrence(first, 3));
        const int to = m.hasCaptured(4) ? indexOf(last, occurrence(last, 5)) : from;
        QVERIFY2(from >= 0 && to >= from, qPrintable(summary));
        // The steps counted are the spans named first to last (the delays fall in each).
        QCOMPARE(m.captured(1).toInt(), to - from + 1);
        QCOMPARE(f.step, first);
    }
    QCOMPARE(found, 1);
}

// Every ProfilerStep#N a finding of the real runs names (in its summary or evidence) is one span
// of the rank the text names before it: where that rank's trace labels more than one span N (its
// first two are both #0), the text says which ("2nd of 2 so labelled"), and a trace event cited
// in it lies in that span. Truth from each rank's raw trace: its ProfilerStep spans in time order.
void TestAnalyzer::repeatedStepLabelsSayWhichSpan()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    static const QRegularExpression named(QStringLiteral(
        "rank (\\d+)|ProfilerStep#(\\d+)(?: \\((\\d+)\\w\\w of (\\d+) so labelled\\))?"));
    int repeated = 0, placed = 0;
    for (const QString& run : QDir(data).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> spansOf; // µs
        std::map<int, std::vector<int>> labelsOf;
        for (const QString& name :
             QDir(data + run).entryList({QStringLiteral("rank*.pt.trace.json")}, QDir::Files)) {
            QFile trace(data + run + u'/' + name);
            QVERIFY(trace.open(QIODevice::ReadOnly));
            const QByteArray bytes = trace.readAll();
            const int rank = name.mid(4, name.indexOf(u'.') - 4).toInt();
            labelsOf[rank] = stepLabelsInTimeOrder(bytes, &spansOf[rank]);
        }
        const SessionPtr session = loadSession(data + run);
        QVERIFY(session);
        const auto check = [&](const std::string& text, std::int64_t traceTimeNs) {
            int rank = -1;
            const QString t = QString::fromStdString(text);
            for (auto it = named.globalMatch(t); it.hasNext();) {
                const QRegularExpressionMatch m = it.next();
                if (m.hasCaptured(1)) {
                    rank = m.captured(1).toInt();
                    continue;
                }
                QVERIFY2(labelsOf.count(rank), qPrintable(run + u'\n' + t));
                const std::vector<int>& labels = labelsOf.at(rank);
                const int label = m.captured(2).toInt();
                const auto spans = std::count(labels.begin(), labels.end(), label);
                QVERIFY2(spans >= 1, qPrintable(run + u'\n' + t));
                QVERIFY2(m.hasCaptured(3) == (spans > 1), qPrintable(run + u'\n' + t));
                if (spans == 1) continue;
                ++repeated;
                QCOMPARE(m.captured(4).toLongLong(), qlonglong(spans));
                int nth = m.captured(3).toInt();
                QVERIFY2(nth >= 1 && nth <= spans, qPrintable(run + u'\n' + t));
                std::size_t i = 0;
                while (labels[i] != label || --nth > 0)
                    ++i;
                if (traceTimeNs < 0) continue;
                const auto [startUs, endUs] = spansOf.at(rank)[i];
                QVERIFY2(startUs * 1000 <= traceTimeNs && traceTimeNs <= endUs * 1000,
                         qPrintable(run + u'\n' + t));
                ++placed;
            }
        };
        for (const Finding& f : session->analysis.findings) {
            check(f.summary, -1);
            for (const Evidence& e : f.evidence)
                check(e.text, e.line < 0 ? e.timeNs : -1);
        }
    }
    QVERIFY(repeated >= 10);
    QVERIFY(placed >= 5);
}

// Rule of #17: no hang, desync, mismatch or straggler finding blames a rank that left no file of
// the kind it rests on; the finding says what is missing instead.
// "fr": rank 1's Flight Recorder dump of a 2-rank group (make_scenarios.py's missing_rank dump of
// rank 1, its group cut to ranks 0 and 1: it waits in all_reduce #4), rank 0 only a log of
// training steps. "trace": hang_timeout with rank 1's trace left out (its log stays).
void TestAnalyzer::noCulpritWithoutItsEvidence_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("fr dump of rank 1, log of rank 0") << QStringLiteral("fr");
    QTest::newRow("hang_timeout without rank 1's trace") << QStringLiteral("trace");
}

void TestAnalyzer::noCulpritWithoutItsEvidence()
{
    QFETCH(QString, kind);
    QTemporaryDir dir;
    std::set<int> recorded; // ranks with a trace or a dump in the folder
    int silent = -1;        // the rank whose log shows no timeout while the others' do
    if (kind == QLatin1String("fr")) {
        QFile in(QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/missing_rank_json/"
                                                    "nccl_trace_rank_1.json"));
        QVERIFY(in.open(QIODevice::ReadOnly));
        nlohmann::json dump = nlohmann::json::parse(in.readAll().toStdString());
        for (auto& [id, pg] : dump["pg_config"].items())
            pg["ranks"] = "[0, 1]";
        const nlohmann::json& last = dump["entries"].back();
        QCOMPARE(last["state"].get<std::string>(), std::string("started"));
        QFile out(dir.filePath(QStringLiteral("nccl_trace_rank_1.json")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray::fromStdString(dump.dump()));
        out.close();
        QFile log(dir.filePath(QStringLiteral("rank0.log")));
        QVERIFY(log.open(QIODevice::WriteOnly));
        for (int step = 0; step < 4; ++step)
            log.write(QStringLiteral("2026-12-02 13:41:15.7%1 [rank0] INFO train: step %2 loss "
                                     "1.5 avg_loss 1.5\n")
                          .arg(10 + step)
                          .arg(step)
                          .toUtf8());
        recorded = {1};
    } else {
        const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout/");
        for (const QString& name : QDir(from).entryList(QDir::Files)) {
            if (name == QLatin1String("rank1.pt.trace.json")) continue;
            QVERIFY(QFile::copy(from + name, dir.filePath(name)));
            if (name.endsWith(QLatin1String(".pt.trace.json")))
                recorded.insert(name.mid(4, 1).toInt());
        }
        QFile truth(from + QStringLiteral("ground_truth.json"));
        QVERIFY(truth.open(QIODevice::ReadOnly));
        const QJsonArray faulty = QJsonDocument::fromJson(truth.readAll())
                                      .object()
                                      .value(QStringLiteral("faulty_ranks"))
                                      .toArray();
        QCOMPARE(faulty.size(), 1);
        silent = faulty.first().toInt();
        QVERIFY(!recorded.count(silent));
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    const AnalysisResult& res = session->analysis;
    QVERIFY(!res.findings.empty());
    // Blamed for a fault only on a file that records collectives, or (a log's own finding) for
    // having logged no timeout where the others did.
    for (const Finding& f : res.findings) {
        if (!isFault(f)) continue;
        const bool byLogs = std::find(f.conditions.begin(), f.conditions.end(), "silent_ranks") !=
                            f.conditions.end();
        for (int r : f.ranks)
            QVERIFY2(recorded.count(r) || (byLogs && r == silent), f.summary.c_str());
    }
    const Finding& top = res.findings.front();
    const std::string what = findingKindName(top.kind) + " " + top.summary;
    QCOMPARE(top.kind, FindingKind::Hang);
    QCOMPARE(top.severity, Severity::Error);
    if (kind == QLatin1String("fr")) {
        // Nobody to blame: the headline says what is missing, and so does the fix's reason.
        QVERIFY2(top.ranks.empty(), what.c_str());
        QVERIFY2(top.summary.find("rank 0 left no Flight Recorder dump") != std::string::npos,
                 what.c_str());
        QVERIFY2(top.summary.find("cannot compare") != std::string::npos, what.c_str());
        QCOMPARE(top.seq, std::int64_t(4));
        QVERIFY(!top.fixPatterns.empty());
        QVERIFY2(top.fixReason.find("rank 0 left no Flight Recorder dump") != std::string::npos,
                 top.fixReason.c_str());
        return;
    }
    // The logs name the rank that never timed out; the traces of the others cannot.
    QCOMPARE(top.ranks, std::vector<int>{silent});
    QVERIFY2(std::find(top.conditions.begin(), top.conditions.end(), "silent_ranks") !=
                 top.conditions.end(),
             what.c_str());
    QVERIFY(!top.fixPatterns.empty());
    QCOMPARE(top.fixPatterns.front(), std::string("fix-behavior-logic"));
    // The others' wait in the traces is the logs' finding's, which says what the traces lack.
    QVERIFY2(top.summary.find("cannot confirm it: rank " + std::to_string(silent) +
                              " left no trace") != std::string::npos,
             what.c_str());
    for (const Finding& f : res.findings)
        QVERIFY2(f.summary.find("no rank is missing") == std::string::npos, f.summary.c_str());
}

// Which ranks are missing is decided once (RankPresence): the missing-ranks warning, ConfigCheck's
// never-started finding and the all_ranks_present auto-check name the same ranks, which the test
// computes from the raw files: traces' distributedInfo (the job with the most files, when they
// mix jobs), dumps' pg_config, ground_truth.json.
void TestAnalyzer::missingRanksAreOneDecision_data()
{
    QTest::addColumn<QString>("folder");    // a folder of the test data, or empty
    QTest::addColumn<QStringList>("files"); // else these files copied into one
    const auto samples = [](const char* file) -> QString {
        return QStringLiteral("kineto-gpu-samples/") + QLatin1String(file);
    };
    QTest::newRow("only rank 0 of 2")
        << QString() << QStringList{samples("nccl_2rank_rank0.json.gz")};
    QTest::newRow("mixed jobs") << QString()
                                << QStringList{samples("fsdp_16rank_rank0.json.gz"),
                                               samples("nccl_2rank_rank0.json.gz"),
                                               samples("sampled_128rank_rank0.json.gz"),
                                               samples("sampled_128rank_rank1.json.gz")};
    QTest::newRow("ranks 0, 1 of 128") << QString()
                                       << QStringList{samples("sampled_128rank_rank0.json.gz"),
                                                      samples("sampled_128rank_rank1.json.gz")};
    QTest::newRow("world_size_mismatch_w3")
        << QStringLiteral("traces/world_size_mismatch_w3") << QStringList{};
    QTest::newRow("healthy") << QStringLiteral("traces/healthy") << QStringList{};
    QTest::newRow("fr absent_rank")
        << QStringLiteral("fr_scenarios/absent_rank_json") << QStringList{};
    QTest::newRow("fr missing_rank")
        << QStringLiteral("fr_scenarios/missing_rank_json") << QStringList{};
}

void TestAnalyzer::missingRanksAreOneDecision()
{
    QFETCH(QString, folder);
    QFETCH(QStringList, files);
    // The ranks the raw files say the job has and lacks.
    std::set<int> expected;
    bool neverStarted = false;
    QTemporaryDir dir;
    SessionPtr session;
    if (!files.isEmpty()) {
        std::map<int, std::set<int>> jobs; // world size -> ranks with a file
        for (const QString& f : files) {
            const RawTrace t = rawTrace(f);
            jobs[t.world].insert(t.rank);
        }
        const auto analysed = std::max_element(jobs.begin(), jobs.end(), [](auto& a, auto& b) {
            return a.second.size() < b.second.size();
        });
        for (int r = 0; r < analysed->first; ++r)
            if (!analysed->second.count(r)) expected.insert(r);
        session = loadCopies(dir, files);
    } else {
        const QString path = QStringLiteral(RANKSCOPE_TEST_DATA "/") + folder;
        QFile truthFile(path + QStringLiteral("/ground_truth.json"));
        if (truthFile.open(QIODevice::ReadOnly)) {
            // A run whose WORLD_SIZE names ranks torchrun never launched: the faulty ranks.
            const QJsonObject truth = QJsonDocument::fromJson(truthFile.readAll()).object();
            if (truth.value(QStringLiteral("scenario")).toString() ==
                QLatin1String("world_size_mismatch")) {
                for (const QJsonValue& v : truth.value(QStringLiteral("faulty_ranks")).toArray())
                    expected.insert(v.toInt());
                neverStarted = true;
            }
        } else {
            // Dumps: the members their pg_config lists that wrote none.
            std::set<int> members, dumped;
            for (const QString& name : QDir(path).entryList(QDir::Files)) {
                QFile f(path + QLatin1Char('/') + name);
                QVERIFY(f.open(QIODevice::ReadOnly));
                const nlohmann::json dump = nlohmann::json::parse(f.readAll().toStdString());
                dumped.insert(
                    name.section(QLatin1Char('_'), -1).section(QLatin1Char('.'), 0, 0).toInt());
                for (const auto& [id, pg] : dump["pg_config"].items())
                    for (const auto& r : nlohmann::json::parse(pg["ranks"].get<std::string>()))
                        members.insert(r.get<int>());
            }
            std::set_difference(members.begin(), members.end(), dumped.begin(), dumped.end(),
                                std::inserter(expected, expected.end()));
        }
        session = loadSession(path);
    }
    QVERIFY(session);
    // "rank 1", "ranks 2–127": how the three name a run of ranks.
    std::string named;
    if (!expected.empty()) {
        const int first = *expected.begin(), last = *expected.rbegin();
        QCOMPARE(int(expected.size()), last - first + 1); // one run in every row above
        named = first == last ? "rank " + std::to_string(first)
                : last == first + 1
                    ? "ranks " + std::to_string(first) + ", " + std::to_string(last)
                    : "ranks " + std::to_string(first) + "\u2013" + std::to_string(last);
    }
    std::vector<const Finding*> warned, launched;
    for (const Finding& f : session->analysis.findings) {
        if (f.kind == FindingKind::MissingRanks) warned.push_back(&f);
        if (std::find(f.conditions.begin(), f.conditions.end(), "world_size_not_launched") !=
            f.conditions.end())
            launched.push_back(&f);
    }
    const AutoCheckResult* present = nullptr;
    for (const AutoCheckResult& c : session->autoChecks)
        if (c.checkId == QLatin1String("all_ranks_present")) present = &c;
    QVERIFY(present);
    if (expected.empty()) {
        QVERIFY(warned.empty());
        QVERIFY(launched.empty());
        QVERIFY2(present->outcome != AutoCheckOutcome::Failed, qPrintable(present->summary));
        return;
    }
    // Said once: by ConfigCheck when the ranks never started, else by the warning.
    QCOMPARE(launched.size(), std::size_t(neverStarted ? 1 : 0));
    QCOMPARE(warned.size(), std::size_t(neverStarted ? 0 : 1));
    const Finding& f = neverStarted ? *launched.front() : *warned.front();
    QVERIFY2(f.summary.find(named) != std::string::npos, (named + " / " + f.summary).c_str());
    if (neverStarted)
        QCOMPARE(f.ranks, std::vector<int>(expected.begin(), expected.end()));
    else
        QVERIFY2(f.ranks.empty(), f.summary.c_str());
    QCOMPARE(present->outcome, AutoCheckOutcome::Failed);
    QVERIFY2(present->summary.contains(QString::fromStdString(named)),
             qPrintable(present->summary));
}

// What a log line witnessed of a peer is its signature's typed witness (signatures.json), not
// its id: a signature no code names reads the same as the built-in ones.
void TestAnalyzer::witnessIsTheSignaturesNotItsId()
{
    const auto witnessed = [](int rank, const char* text, const char* symptom,
                              SignatureWitness witness) {
        Evidence e = line(rank, 20, text, symptom, kWall + rank * 1'000'000, true);
        e.signature = "site.unknown-to-code";
        e.witness = witness;
        return e;
    };
    // Rank 1 failed on its own; rank 0 only saw its connection close, earlier by its stamp.
    const char* closed = "RuntimeError: link to peer 1 went away";
    std::vector<Evidence> lost = {
        witnessed(0, closed, symptoms::kCommunicationError, SignatureWitness::PeerFailure),
        witnessed(1, "RuntimeError: boom", kIterationFailure, SignatureWitness::None)};
    // Its line is not the one it died with, and comes a second after its peer's.
    lost[1].fatal = false;
    lost[1].timeNs = lost[0].timeNs + kS;
    const LogTriage::Result peer = LogTriage::triage(lost, {0, 1});
    QCOMPARE(peer.lostPeerRanks, std::vector<int>{0});
    QVERIFY(!peer.findings.empty());
    QCOMPARE(peer.findings.front().ranks, std::vector<int>{1});
    // The same lines without the witness: rank 0's line is a failure of its own, and first.
    lost[0].witness = SignatureWitness::None;
    const LogTriage::Result own = LogTriage::triage(lost, {0, 1});
    QVERIFY(own.lostPeerRanks.empty());
    QCOMPARE(own.findings.front().ranks, std::vector<int>{0});

    // A message of another size that one rank received: the line does not say whose call
    // deviates, so every rank of the job is named.
    std::vector<Evidence> size = {witnessed(1, "RuntimeError: message of 8 bytes, 4 posted",
                                            symptoms::kTensorMismatch,
                                            SignatureWitness::CollectiveMismatch)};
    const LogTriage::Result mismatch = LogTriage::triage(size, {0, 1, 2});
    QCOMPARE(mismatch.findings.front().ranks, (std::vector<int>{0, 1, 2}));
    const auto& c = mismatch.findings.front().conditions;
    QVERIFY(std::find(c.begin(), c.end(), "message_size_mismatch") != c.end());
    size[0].witness = SignatureWitness::None;
    QCOMPARE(LogTriage::triage(size, {0, 1, 2}).findings.front().ranks, std::vector<int>{1});
}

// Every rank's trace ends in a receive that held it for the timeout (a recv on each, or one
// broadcast that holds them all) and none in a send: nobody sent, so the ranks disagree on who
// sends, and the code comes before the link. A rank in a send, or an all_reduce that holds every
// rank, says no such thing.
void TestAnalyzer::everyRankWaitingToReceiveIsNoLinkFailure_data()
{
    QTest::addColumn<int>("world");
    QTest::addColumn<QString>("firstOp"); // rank 0's last op
    QTest::addColumn<QString>("op");      // the other ranks'
    QTest::addColumn<bool>("nobodySends");
    QTest::newRow("recv on both ranks") << 2 << "recv"
                                        << "recv" << true;
    QTest::newRow("one broadcast holds every rank") << 3 << "broadcast"
                                                    << "broadcast" << true;
    QTest::newRow("a rank is sending") << 2 << "send"
                                       << "recv" << false;
    QTest::newRow("one all_reduce holds every rank") << 3 << "all_reduce"
                                                     << "all_reduce" << false;
}

void TestAnalyzer::everyRankWaitingToReceiveIsNoLinkFailure()
{
    QFETCH(int, world);
    QFETCH(QString, firstOp);
    QFETCH(QString, op);
    QFETCH(bool, nobodySends);
    Scenario s(world);
    std::mt19937 rng(5);
    steps(s.job, 4, rng);
    const std::int64_t t = s.job.nowNs();
    for (int r = 0; r < world; ++r) {
        const std::int64_t at = t + 1'000'000 + r * 100'000;
        s.job.collective(r, (r == 0 ? firstOp : op).toStdString(), at, at + 50'000, t + 10 * kS,
                         CollectiveRecord::State::Completed, 4);
        s.logs.push_back(line(r, 40,
                              "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed "
                              "out waiting 10000ms for recv operation to complete",
                              symptoms::kHang, kWall + 10 * kS + r * 1'000'000, true));
    }
    const AnalysisResult res = run(s);
    QVERIFY(!res.findings.empty());
    const Finding& top = res.findings.front();
    QVERIFY2(top.kind == FindingKind::Hang || top.kind == FindingKind::Desync, top.summary.c_str());
    for (const Finding& f : res.findings) {
        const bool says = std::find(f.conditions.begin(), f.conditions.end(), "nobody_sends") !=
                          f.conditions.end();
        QVERIFY2(!says || nobodySends, f.summary.c_str());
    }
    const bool topSays = std::find(top.conditions.begin(), top.conditions.end(), "nobody_sends") !=
                         top.conditions.end();
    QCOMPARE(topSays, nobodySends);
    if (nobodySends) QCOMPARE(top.fixPatterns.front(), std::string("fix-behavior-logic"));
}

void TestAnalyzer::cutTraceIsNoCulprit_data()
{
    QTest::addColumn<QString>("run");
    QTest::addColumn<int>("cutRank");
    // The cut rank is the faulty one (it never arrived) and one that is not (its peer crashed).
    QTest::newRow("hang_timeout, rank 1 cut") << QStringLiteral("traces/hang_timeout") << 1;
    QTest::newRow("rank_crash, rank 0 cut") << QStringLiteral("traces/rank_crash") << 0;
    QTest::newRow("healthy, rank 1 cut") << QStringLiteral("traces/healthy") << 1;
}

// tests/data/log_scenarios/multinode_sigkill_r5 (README there): rank 5 is killed, its node's
// agent takes ranks 4, 6 and 7 down with it, and node 0's ranks time out waiting. The truth
// from the raw logs: node 1's agent names rank 5 its root cause, and ranks 4, 6 and 7 log no
// error. Only rank 5 is blamed: the silent ranks of a node that went down with a killed rank
// are not "the likely rank that never arrived".
void TestAnalyzer::ranksDownWithAKilledRanksNodeAreNotBlamed()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/log_scenarios/multinode_sigkill_r5");
    QFile agent(dir + QStringLiteral("/node1_launcher.log"));
    QVERIFY(agent.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(agent.readAll());
    const qsizetype root = text.indexOf(QStringLiteral("Root Cause"));
    QVERIFY(root >= 0);
    QVERIFY(text.mid(root).contains(QStringLiteral("rank      : 5 ")));
    for (int r : {4, 6, 7}) {
        QFile log(dir + QStringLiteral("/rank%1.log").arg(r));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QVERIFY(!log.readAll().contains("Error"));
    }
    const SessionPtr session = loadSession(dir);
    QVERIFY(session);
    QVERIFY(!session->analysis.findings.empty());
    QCOMPARE(session->analysis.findings.front().ranks, std::vector<int>{5});
    for (const Finding& f : session->analysis.findings)
        if (f.severity == Severity::Error)
            QVERIFY2(f.ranks == std::vector<int>{5}, f.summary.c_str());
}

// Ranks 0, 1 and 3 of a 4-rank job log a watchdog timeout; rank 2's log is an empty file (by
// construction). The file is rank 2's by its name, and unreadable; rank 2 left nothing to read,
// so no finding says every rank timed out, and the missing-ranks warning says rank 2 left only
// a file that could not be read. A collective timed out, so every rank joined the rendezvous:
// no finding says rank 2 never started.
void TestAnalyzer::emptyFileOfARankIsNamedNotAcquitted()
{
    QTemporaryDir dir;
    for (int r = 0; r < 4; ++r) {
        QFile log(dir.filePath(QStringLiteral("rank%1.log").arg(r)));
        QVERIFY(log.open(QIODevice::WriteOnly));
        if (r == 2) continue;
        log.write(
            QStringLiteral(
                "2026-12-01 10:00:0%1,000 [rank%1] INFO train: starting rank=%1 world_size=4\n"
                "[rank%1]:[E1201 10:30:01.482153821 ProcessGroupNCCL.cpp:616] "
                "[Rank %1] Watchdog caught collective operation timeout: "
                "WorkNCCL(SeqNum=4117, OpType=ALLREDUCE, NumelIn=4096, "
                "NumelOut=4096, Timeout(ms)=1800000) ran for 1800094 "
                "milliseconds before timing out.\n")
                .arg(r)
                .toUtf8());
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    bool named = false;
    for (const SourceFile& s : session->folder.sources())
        if (s.relativePath == QStringLiteral("rank2.log"))
            named = s.rank == 2 && s.status == SourceStatus::Error;
    QVERIFY(named);
    QCOMPARE(session->analysis.presence.present(), (std::vector<int>{0, 1, 3}));
    bool hang = false, missing = false;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.summary.find("every rank did") == std::string::npos, f.summary.c_str());
        QVERIFY2(f.summary.find("never started") == std::string::npos, f.summary.c_str());
        if (f.kind == FindingKind::Hang)
            hang = f.summary.find("rank 2 left no readable log") != std::string::npos;
        if (f.kind == FindingKind::MissingRanks)
            missing = f.summary.find("rank 2 left only a file that could not be read") !=
                      std::string::npos;
    }
    QVERIFY(hang);
    QVERIFY(missing);
}

// A healthy 4-rank NCCL job's GPU traces (tests/data/kineto-gpu-job/healthy_w4), rank 2's
// cut (a copy interrupted mid-file) where its first collective's GPU kernel begins. A Kineto
// file lists the kernels that end the calls after the CPU ops that issue them, so a cut loses
// the end of a call rank 2 issued: that is no hang, nor anything else pinned on rank 2. The
// truth comes from the raw files: every rank issued and completed (ran an ncclDevKernel for)
// every collective.
void TestAnalyzer::cutGpuTraceLosesCompletionsNotARank()
{
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-gpu-job/healthy_w4");
    QTemporaryDir dir;
    for (int r = 0; r < 4; ++r) {
        const QString name = QStringLiteral("rank%1.pt.trace.json").arg(r);
        std::string text = readGzipText(from + QStringLiteral("/") + name + QStringLiteral(".gz"));
        const nlohmann::json raw = nlohmann::json::parse(text);
        int issued = 0, completed = 0;
        for (const auto& e : raw["traceEvents"]) {
            const std::string n = e.value("name", "");
            issued += n == "record_param_comms";
            completed += n.rfind("ncclDevKernel_", 0) == 0;
        }
        QVERIFY(issued > 1);
        QCOMPARE(completed, issued);
        if (r == 2) {
            const std::size_t kernel = text.find("\"ncclDevKernel_");
            QVERIFY(kernel != std::string::npos && kernel > text.find("record_param_comms"));
            text.resize(kernel);
        }
        QFile out(dir.filePath(name));
        QVERIFY(out.open(QIODevice::WriteOnly));
        QCOMPARE(out.write(text.data(), qint64(text.size())), qint64(text.size()));
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    bool cutSeen = false;
    for (const SourceFile& s : session->folder.sources())
        if (s.rank == 2) cutSeen = s.status == SourceStatus::Truncated;
    QVERIFY(cutSeen);
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(!isFault(f), f.summary.c_str());
        QVERIFY2(std::find(f.ranks.begin(), f.ranks.end(), 2) == f.ranks.end(), f.summary.c_str());
    }
    // "No fault" covers what the cut trace recorded, and the report says so.
    QVERIFY(session->analysis.findings.empty());
    QVERIFY(AnalysisReport::toText(*session, session->analysis)
                .contains(QStringLiteral("The trace of rank 2 is cut short")));
}

// A real run with one rank's trace cut in half (a copy interrupted mid-file): that trace records
// nothing after the cut, which is not the rank stopping there. No trace finding blames the cut
// rank or points at a collective before the one the uncut ranks issued last (the count of
// c10d:: ops in their raw files); one that blames a rank blames the run's faulty ranks as its
// ground_truth.json states them.
void TestAnalyzer::cutTraceIsNoCulprit()
{
    QFETCH(QString, run);
    QFETCH(int, cutRank);
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/") + run;
    QFile truthFile(from + QStringLiteral("/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const nlohmann::json truth = nlohmann::json::parse(truthFile.readAll().toStdString());
    const std::vector<int> faulty = truth["faulty_ranks"].get<std::vector<int>>();
    const int world = truth["world_size"].get<int>();

    QTemporaryDir dir;
    std::int64_t frontier = 0;
    for (const QString& name : QDir(from).entryList(QDir::Files)) {
        if (name == QStringLiteral("ground_truth.json")) continue;
        QFile in(from + QStringLiteral("/") + name);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray bytes = in.readAll();
        const QString cutName = QStringLiteral("rank%1.pt.trace.json").arg(cutRank);
        if (name == cutName) {
            bytes.truncate(bytes.size() / 2);
        } else if (name.endsWith(QStringLiteral(".pt.trace.json"))) {
            std::int64_t ops = 0;
            for (const auto& e : nlohmann::json::parse(bytes.toStdString()))
                if (e["name"].get<std::string>().rfind("c10d::", 0) == 0) ++ops;
            frontier = std::max(frontier, ops);
        }
        QFile out(dir.filePath(name));
        QVERIFY(out.open(QIODevice::WriteOnly));
        QCOMPARE(out.write(bytes), bytes.size());
    }
    QVERIFY(frontier > 0);

    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    bool cutSeen = false;
    for (const SourceFile& s : session->folder.sources())
        if (s.rank == cutRank && s.kind == SourceKind::Kineto)
            cutSeen = s.status == SourceStatus::Truncated;
    QVERIFY(cutSeen);
    QCOMPARE(session->analysis.presence.present().size(), std::size_t(world));
    for (const Finding& f : session->analysis.findings) {
        if (!isFault(f) || f.seq < 0) continue; // a collective of the traces
        QVERIFY2(f.seq == frontier, f.summary.c_str());
        QVERIFY2(std::find(f.ranks.begin(), f.ranks.end(), cutRank) == f.ranks.end(),
                 f.summary.c_str());
        QVERIFY2(f.ranks.empty() || f.ranks == faulty, f.summary.c_str());
    }
}

// The real hang_timeout run without any file of rank 1, the rank that never arrived (its trace,
// its log, and the launcher log that carries its lines): the others' trace shows them waiting
// in their last collective, which nothing can pin on a rank that left nothing, and which no
// finding may call a hang with "no rank missing".
void TestAnalyzer::hangWithARankThatLeftNothing()
{
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout");
    QFile truthFile(from + QStringLiteral("/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const nlohmann::json truth = nlohmann::json::parse(truthFile.readAll().toStdString());
    QCOMPARE(truth["faulty_ranks"].get<std::vector<int>>(), std::vector<int>{1});
    QTemporaryDir dir;
    for (const QString& name : QDir(from).entryList(QDir::Files))
        if (name.startsWith(QStringLiteral("rank0.")) || name.startsWith(QStringLiteral("rank2.")))
            QVERIFY(QFile::copy(from + QStringLiteral("/") + name, dir.filePath(name)));
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QCOMPARE(session->analysis.presence.present(), (std::vector<int>{0, 2}));
    int traceHangs = 0;
    for (const Finding& f : session->analysis.findings) {
        if (!isFault(f) || f.seq < 0) continue; // a collective of the traces
        ++traceHangs;
        QVERIFY2(f.ranks.empty(), f.summary.c_str());
        QVERIFY2(f.conditions == std::vector<std::string>{"peer_unrecorded"}, f.summary.c_str());
        QVERIFY2(f.detail.find("rank 1") != std::string::npos, f.detail.c_str());
    }
    QCOMPARE(traceHangs, 1);
}

// The real hang_timeout run without rank 1's own files (trace, log), its launcher log kept: the
// launcher's [rank1] lines show rank 1 logging no timeout where the others did, so the logs name
// it; the others' traces cannot compare with a rank that left no trace. One error names the
// rank, and says the traces cannot confirm it; none calls the culprit unknown beside it.
void TestAnalyzer::logsNameTheRankThatLeftNoTrace()
{
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout/");
    QFile truthFile(from + QStringLiteral("ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const nlohmann::json truth = nlohmann::json::parse(truthFile.readAll().toStdString());
    const std::vector<int> faulty = truth["faulty_ranks"].get<std::vector<int>>();
    QCOMPARE(faulty.size(), std::size_t(1));
    const QString own = QStringLiteral("rank%1.").arg(faulty.front());
    // The launcher log carries the faulty rank's lines, none of them a timeout of its own.
    QFile launcher(from + QStringLiteral("launcher.log"));
    QVERIFY(launcher.open(QIODevice::ReadOnly));
    const QByteArray tag = QStringLiteral("[rank%1]").arg(faulty.front()).toUtf8();
    int taggedLines = 0;
    for (const QByteArray& line : launcher.readAll().split('\n')) {
        if (!line.contains(tag)) continue;
        ++taggedLines;
        QVERIFY2(!line.contains("Timed out"), line.constData());
    }
    QVERIFY(taggedLines > 0);
    QTemporaryDir dir;
    for (const QString& name : QDir(from).entryList(QDir::Files))
        if (!name.startsWith(own) && name != QLatin1String("ground_truth.json"))
            QVERIFY(QFile::copy(from + name, dir.filePath(name)));
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    const std::string culprit = "rank " + std::to_string(faulty.front());
    int errors = 0;
    for (const Finding& f : session->analysis.findings) {
        if (f.severity != Severity::Error) continue;
        ++errors;
        QCOMPARE(f.kind, FindingKind::Hang);
        QVERIFY2(f.ranks == faulty, f.summary.c_str());
        QVERIFY2(f.summary.find("cannot confirm it: " + culprit + " left no trace") !=
                     std::string::npos,
                 f.summary.c_str());
    }
    QCOMPARE(errors, 1);
    for (const Finding& f : session->analysis.findings)
        QVERIFY2(f.summary.find("is unknown") == std::string::npos, f.summary.c_str());
}

// The real healthy run with rank 1's log replaced by one NCCL watchdog timeout line: the traces
// (each rank's raw file has as many gloo:* spans as c10d:: ops, the same count on both ranks)
// show both ranks completing every collective, so the log's wait is not in them; no finding
// may then call rank 0, whose log says it finished, a rank that never arrived, as an error.
void TestAnalyzer::logTimeoutTheTracesDoNotShow()
{
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy");
    QFile truthFile(from + QStringLiteral("/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const nlohmann::json truth = nlohmann::json::parse(truthFile.readAll().toStdString());
    QVERIFY(truth["faulty_ranks"].empty());
    std::set<std::pair<int, int>> counts; // per rank: c10d ops, gloo spans
    QTemporaryDir dir;
    for (const QString& name : QDir(from).entryList(QDir::Files)) {
        if (name == QStringLiteral("ground_truth.json") || name == QStringLiteral("rank1.log") ||
            name == QStringLiteral("launcher.log"))
            continue;
        QVERIFY(QFile::copy(from + QStringLiteral("/") + name, dir.filePath(name)));
        if (!name.endsWith(QStringLiteral(".pt.trace.json"))) continue;
        QFile in(from + QStringLiteral("/") + name);
        QVERIFY(in.open(QIODevice::ReadOnly));
        int ops = 0, spans = 0;
        for (const auto& e : nlohmann::json::parse(in.readAll().toStdString())) {
            const std::string n = e["name"].get<std::string>();
            ops += n.rfind("c10d::", 0) == 0;
            spans += n.rfind("gloo:", 0) == 0;
        }
        QVERIFY(ops > 0);
        counts.insert({ops, spans});
    }
    QCOMPARE(counts.size(), std::size_t(1));
    QCOMPARE(counts.begin()->first, counts.begin()->second);
    QFile log(dir.filePath(QStringLiteral("rank1.log")));
    QVERIFY(log.open(QIODevice::WriteOnly));
    log.write(
        "[rank1]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, "
        "NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 "
        "milliseconds before timing out.\n");
    log.close();
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    for (const Finding& f : session->analysis.findings)
        QVERIFY2(f.severity != Severity::Error || f.ranks.empty() || f.ranks == std::vector<int>{1},
                 f.summary.c_str());
}

// One line can be two messages: PyTorch's "NCCL error in: ..., unhandled cuda error" is the
// generic NCCL error and NCCL's failed CUDA call. The finding carries both signatures, so the
// fix rule for the failed CUDA call (versions first) applies, not the generic communication
// error's first fix (the distributed API usage).
void TestAnalyzer::everySignatureOfTheRootLineChoosesTheFix()
{
    QTemporaryDir dir;
    const QByteArray failure = "RuntimeError: NCCL error in: "
                               "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
                               "unhandled cuda error, NCCL version 2.14.3";
    for (int r = 0; r < 2; ++r) {
        QFile log(dir.filePath(QStringLiteral("rank%1.log").arg(r)));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write(
            QStringLiteral("2026-12-01 10:00:0%1,000 INFO rank %1: step 0\n").arg(r).toUtf8());
        if (r == 1) log.write(failure + "\n");
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    const auto it = std::find_if(
        session->analysis.findings.begin(), session->analysis.findings.end(),
        [&](const Finding& f) { return f.ranks == std::vector<int>{1} && !f.evidence.empty(); });
    QVERIFY(it != session->analysis.findings.end());
    QCOMPARE(it->evidence.front().text, failure.toStdString());
    const auto has = [&](const char* c) {
        return std::find(it->conditions.begin(), it->conditions.end(), c) != it->conditions.end();
    };
    QVERIFY(has("signature:nccl.error-in"));
    QVERIFY(has("signature:nccl.unhandled-cuda"));
    QVERIFY(!it->fixPatterns.empty());
    QCOMPARE(it->fixPatterns.front(), std::string("fix-framework-version"));
}

void TestAnalyzer::firstCollectiveTimeoutsAreARankNotDonePreparing_data()
{
    QTest::addColumn<int>("seq");
    QTest::addColumn<bool>("teardown");
    QTest::addRow("first-broadcast") << 1 << false;
    QTest::addRow("fourth") << 4 << false;
    QTest::addRow("fifth") << 5 << false;
    QTest::addRow("mid-training") << 4117 << false;
    QTest::addRow("first-broadcast-teardown") << 1 << true;
    QTest::addRow("mid-training-teardown") << 4117 << true;
}

// Logs only: ranks 0-2 time out in the NCCL watchdog on one collective, rank 3 logs nothing
// after loading its data. Rank 3 is the rank that never arrived whatever the sequence number;
// the leaf follows the number written into the lines: one of the group's first four
// collectives is rank 3 not done preparing (a preparation hang), a later one training stalling.
// With `teardown`, each timeout is followed, as in every real log, by the lines the watchdog
// prints as it takes the process down, stamped with the same microsecond: they come after the
// timeout in the file, so they are its teardown, not a teardown the timeout followed.
void TestAnalyzer::firstCollectiveTimeoutsAreARankNotDonePreparing()
{
    QFETCH(int, seq);
    QFETCH(bool, teardown);
    QTemporaryDir dir;
    for (int r = 0; r < 4; ++r) {
        QFile log(dir.filePath(QStringLiteral("rank%1.log").arg(r)));
        QVERIFY(log.open(QIODevice::WriteOnly));
        log.write(
            QStringLiteral("2026-12-01 10:00:0%1,000 INFO rank %1: data loaded\n").arg(r).toUtf8());
        if (r == 3) continue;
        log.write(QStringLiteral("[rank%1]:[E1201 10:30:01.482153821 ProcessGroupNCCL.cpp:616] "
                                 "[Rank %1] Watchdog caught collective operation timeout: "
                                 "WorkNCCL(SeqNum=%2, OpType=BROADCAST, NumelIn=4096, "
                                 "NumelOut=4096, Timeout(ms)=1800000) ran for 1800094 "
                                 "milliseconds before timing out.\n")
                      .arg(r)
                      .arg(seq)
                      .toUtf8());
        if (!teardown) continue;
        log.write(QStringLiteral(
                      "[rank%1]:[E1201 10:30:01.482153821 ProcessGroupNCCL.cpp:630] [Rank %1] "
                      "Some NCCL operations have failed or timed out. Due to the asynchronous "
                      "nature of CUDA kernels, subsequent GPU operations might run on "
                      "corrupted/incomplete data.\n"
                      "[rank%1]:[E1201 10:30:01.482153821 ProcessGroupNCCL.cpp:636] [Rank %1] To "
                      "avoid data inconsistency, we are taking the entire process down.\n"
                      "[rank%1]:[F1201 10:30:01.482153821 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG "
                      "GUID 0(default_pg) Rank %1] Process group watchdog thread terminated with "
                      "exception: [Rank %1] Watchdog caught collective operation timeout: "
                      "WorkNCCL(SeqNum=%2, OpType=BROADCAST, NumelIn=4096, NumelOut=4096, "
                      "Timeout(ms)=1800000) ran for 1800094 milliseconds before timing out.\n")
                      .arg(r)
                      .arg(seq)
                      .toUtf8());
    }
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    const std::vector<Finding>& findings = session->analysis.findings;
    QVERIFY(!findings.empty());
    const Finding& top = findings.front();
    QCOMPARE(top.kind, FindingKind::Hang);
    QCOMPARE(top.ranks, std::vector<int>{3});
    QCOMPARE(top.symptom, std::string(seq <= 4 ? symptoms::kPreparationHang : symptoms::kHang));
    for (const Finding& f : findings)
        QVERIFY2(f.severity != Severity::Error || f.ranks == std::vector<int>{3},
                 f.summary.c_str());
}

// The real mismatched_collective run (TORCH_DISTRIBUTED_DEBUG=DETAIL): each raw trace ends in a
// c10d:: op with no gloo:all_reduce after it (one c10d::allreduce_ more than gloo:all_reduce
// spans), because the fingerprint check both logs report raised before it ran. That stuck
// collective is the mismatch's evidence, not a hang of its own pointing at the network.
void TestAnalyzer::witnessedMismatchExplainsTheStuckCollective()
{
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/mismatched_collective");
    std::set<std::int64_t> lastOps;
    for (const QString& name : QDir(from).entryList({QStringLiteral("*.pt.trace.json")})) {
        QFile in(from + QStringLiteral("/") + name);
        QVERIFY(in.open(QIODevice::ReadOnly));
        std::int64_t ops = 0, allreduces = 0, spans = 0;
        for (const auto& e : nlohmann::json::parse(in.readAll().toStdString())) {
            const std::string n = e["name"].get<std::string>();
            ops += n.rfind("c10d::", 0) == 0;
            allreduces += n == "c10d::allreduce_";
            spans += n == "gloo:all_reduce";
        }
        QCOMPARE(allreduces, spans + 1);
        lastOps.insert(ops);
    }
    QCOMPARE(lastOps.size(), std::size_t(1));
    QTemporaryDir dir;
    for (const QString& name : QDir(from).entryList(QDir::Files))
        if (name != QStringLiteral("ground_truth.json"))
            QVERIFY(QFile::copy(from + QStringLiteral("/") + name, dir.filePath(name)));
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    int mismatches = 0;
    for (const Finding& f : session->analysis.findings) {
        QVERIFY2(f.kind != FindingKind::Hang, f.summary.c_str());
        if (f.kind != FindingKind::CollectiveMismatch) continue;
        ++mismatches;
        int traceEvidence = 0;
        for (const Evidence& e : f.evidence)
            if (QString::fromStdString(e.path).endsWith(QStringLiteral(".pt.trace.json"))) {
                ++traceEvidence;
                QVERIFY2(e.text.find("#" + std::to_string(*lastOps.begin()) + " ") !=
                             std::string::npos,
                         e.text.c_str());
            }
        QCOMPARE(traceEvidence, 2);
    }
    QCOMPARE(mismatches, 1);
}

QTEST_GUILESS_MAIN(TestAnalyzer)
#include "tst_analyzer.moc"
