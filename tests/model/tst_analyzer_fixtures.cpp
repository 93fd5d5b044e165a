#include "model/analysis/collectivedetails.h"
#include "model/tracesession.h"
#include "tests/support/findings.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

using namespace rankscope;

Q_DECLARE_METATYPE(FindingKind)
Q_DECLARE_METATYPE(std::vector<int>)
Q_DECLARE_METATYPE(CollectiveRankState)
Q_DECLARE_METATYPE(std::vector<CollectiveRankState>)

namespace rankscope {
inline char* toString(CollectiveRankState state)
{
    return qstrdup(collectiveRankStateName(state));
}
} // namespace rankscope

// The analysis on the real runs of tests/data/traces: what each folder's ground_truth.json says
// was injected must be what the top finding says. Only this test reads ground_truth.json.
class TestAnalyzerFixtures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixture_data();
    void fixture();
    void flightRecorderCase_data();
    void flightRecorderCase();
    void collectiveDetailsOfRuns_data();
    void collectiveDetailsOfRuns();
    void collectiveDetailsOfFlightRecorderCases_data();
    void collectiveDetailsOfFlightRecorderCases();
    void collectiveDetailsListRanksWithoutRecords();
    void collectiveDetailsOfEveryFlightRecorderCase();
};

namespace {

QString tracesDir()
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/traces");
}

// The finding kinds that name each injected fault (empty: no error expected, or no fixed kind).
// Where the sources cannot tell two kinds apart, both are listed: a rank that left the loop is
// a hang when the others waited long for it and a desync when its exit cut their wait short.
std::vector<FindingKind> expectedKinds(const QString& scenario)
{
    using K = FindingKind;
    static const std::map<QString, std::vector<FindingKind>> kinds = {
        {QStringLiteral("straggler"), {K::Straggler}},
        {QStringLiteral("hang_timeout"), {K::Hang}},
        {QStringLiteral("uneven_inputs"), {K::Desync}},
        {QStringLiteral("mismatched_collective"), {K::CollectiveMismatch}},
        {QStringLiteral("setup_failure"), {K::SetupFailure}},
        {QStringLiteral("rank_crash"), {K::Crash}},
        {QStringLiteral("nan_loss"), {K::Crash}},
        {QStringLiteral("rank_killed"), {K::Crash}},
        {QStringLiteral("hook_exception"), {K::Crash}},
        {QStringLiteral("early_exit"), {K::Hang, K::Desync}},
        {QStringLiteral("loader_stall"), {K::Hang}},
        {QStringLiteral("subgroup_hang"), {K::Hang}},
        {QStringLiteral("p2p_deadlock"), {K::Hang, K::Desync}},
        // ranks left waiting in different collectives, or every rank completed them
        {QStringLiteral("collective_type"), {K::Desync, K::CollectiveMismatch}},
        {QStringLiteral("broadcast_src"), {K::Desync, K::Hang, K::CollectiveMismatch}},
        {QStringLiteral("dtype_mismatch"), {K::CollectiveMismatch}},
        // ranks that disagree on the world size never form the group
        {QStringLiteral("wrong_world_init"), {K::SetupFailure, K::ConfigMismatch}},
    };
    const auto it = kinds.find(scenario);
    return it == kinds.end() ? std::vector<FindingKind>{} : it->second;
}

// Scenarios whose sources cannot single out the faulty rank, so the headline must name it among
// the ranks it cannot tell apart: a message of another size is reported by the rank that
// received it, not the one whose call deviates (gloo names no sender); a broadcast whose src
// differs on one rank leaves that rank and the true root waiting in it, and these CPU traces
// record no root.
bool culpritAmongOthers(const QString& scenario, int world)
{
    return scenario == QLatin1String("dtype_mismatch") ||
           scenario == QLatin1String("broadcast_src") ||
           (scenario == QLatin1String("mismatched_collective") && world == 2);
}

const QString kLeafPrefix = QStringLiteral("training-and-evaluation/");

// The taxonomy leaf and the first fix the injected fault calls for: what the evidence of each
// scenario shows, not what the study fixed most often for the leaf.
struct Expected {
    QString symptom; // the leaf, or the stage's prefix where either of its leaves fits
    QString firstFix;
    // Where the evidence cannot tell the fault from its neighbour, the neighbour's fix may come
    // first: a rank out of batches that stops tracing before its final barrier looks like one
    // that branched out of the loop (uneven_inputs_w3), a float64 message like a longer shape;
    // the fault's own fix is then second.
    QString orFirst = {};
};

Expected expectedFix(const QString& scenario)
{
    if (scenario == QLatin1String("straggler"))
        return {kLeafPrefix + QStringLiteral("unexpected-performance/low-efficiency"),
                QStringLiteral("fix-batch-size-data-partition")};
    if (scenario == QLatin1String("hang_timeout")) // a rank never issued the collective
        return {kLeafPrefix + QStringLiteral("unexpected-performance/hang"),
                QStringLiteral("fix-behavior-logic")};
    if (scenario == QLatin1String("uneven_inputs")) // it ran out of batches first
        return {kLeafPrefix + QStringLiteral("unexpected-performance/hang"),
                QStringLiteral("fix-batch-size-data-partition"),
                QStringLiteral("fix-behavior-logic")};
    if (scenario == QLatin1String("mismatched_collective")) // shapes differ
        return {kLeafPrefix + QStringLiteral("program-failure/tensor-mismatch"),
                QStringLiteral("fix-data-shape")};
    // A rendezvous that never completes: a leaf of the communication setup stage.
    if (scenario == QLatin1String("setup_failure")) // a MASTER_PORT of its own
        return {QStringLiteral("communication-setup/"),
                QStringLiteral("fix-communication-configuration")};
    if (scenario == QLatin1String("world_size_mismatch")) // fewer processes than WORLD_SIZE
        return {QStringLiteral("communication-setup/"), QStringLiteral("fix-command-line")};
    // One rank passes another world size to init_process_group than the others: the
    // communication configuration (the setup stage's usual fix), or the command line giving it.
    if (scenario == QLatin1String("wrong_world_init"))
        return {QStringLiteral("communication-setup/"),
                QStringLiteral("fix-communication-configuration"),
                QStringLiteral("fix-command-line")};
    if (scenario == QLatin1String("rank_crash")) // an IndexError in its own code
        return {kLeafPrefix + QStringLiteral("program-failure/others"),
                QStringLiteral("fix-behavior-logic")};
    if (scenario == QLatin1String("nan_loss"))
        return {kLeafPrefix + QStringLiteral("unexpected-performance/non-convergence"),
                QStringLiteral("fix-learning-rate")};
    if (scenario == QLatin1String("unused_parameters"))
        return {kLeafPrefix + QStringLiteral("program-failure/others"),
                QStringLiteral("fix-distributed-api-usage")};
    // Killed by SIGKILL with no traceback: the OOM killer's signal, so memory use comes first.
    if (scenario == QLatin1String("rank_killed"))
        return {kLeafPrefix + QStringLiteral("program-failure/memory-issue"),
                QStringLiteral("fix-memory-core-setting"), QStringLiteral("fix-batch-size")};
    if (scenario == QLatin1String("hook_exception")) // a RuntimeError its own hook raised
        return {kLeafPrefix + QStringLiteral("program-failure/others"),
                QStringLiteral("fix-behavior-logic")};
    // A rank that left its loop early, or stalled in its own code, kept the others waiting; a
    // rank that ran fewer steps also looks like one out of batches.
    if (scenario == QLatin1String("early_exit"))
        return {kLeafPrefix + QStringLiteral("unexpected-performance/hang"),
                QStringLiteral("fix-behavior-logic"),
                QStringLiteral("fix-batch-size-data-partition")};
    if (scenario == QLatin1String("loader_stall") || scenario == QLatin1String("subgroup_hang") ||
        scenario == QLatin1String("p2p_deadlock"))
        return {kLeafPrefix + QStringLiteral("unexpected-performance/hang"),
                QStringLiteral("fix-behavior-logic")};
    // One rank called another op or named another root: the code path differs between ranks.
    if (scenario == QLatin1String("collective_type") || scenario == QLatin1String("broadcast_src"))
        return {kLeafPrefix, QStringLiteral("fix-behavior-logic")};
    // float64 where the others pass float32: the message sizes differ, as they would for shapes.
    if (scenario == QLatin1String("dtype_mismatch"))
        return {kLeafPrefix + QStringLiteral("program-failure/tensor-mismatch"),
                QStringLiteral("fix-data-type"), QStringLiteral("fix-data-shape")};
    return {};
}

// The events of a rank's trace file, whichever top-level form it has.
QJsonArray traceEvents(const QString& dir, int rank)
{
    const QStringList names =
        QDir(dir).entryList({QStringLiteral("rank%1.pt.trace.json").arg(rank),
                             QStringLiteral("rank%1.*.pt.trace.json").arg(rank)},
                            QDir::Files);
    if (names.isEmpty()) return {};
    QFile f(dir + QLatin1Char('/') + names.front());
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    return doc.isArray() ? doc.array()
                         : doc.object().value(QStringLiteral("traceEvents")).toArray();
}

// N of the `index`-th ProfilerStep#N span (in time order) of a rank's trace, -1 without one.
int profilerStepNumber(const QString& dir, int rank, int index)
{
    std::vector<std::pair<double, int>> steps;
    static const QString kPrefix = QStringLiteral("ProfilerStep#");
    for (const QJsonValue& v : traceEvents(dir, rank)) {
        const QString name = v.toObject().value(QStringLiteral("name")).toString();
        if (name.startsWith(kPrefix))
            steps.emplace_back(v.toObject().value(QStringLiteral("ts")).toDouble(),
                               name.mid(kPrefix.size()).toInt());
    }
    std::sort(steps.begin(), steps.end());
    return index >= 0 && std::size_t(index) < steps.size() ? steps[std::size_t(index)].second : -1;
}

// A run of tests/data/traces and what its ground_truth.json says: the scenario, the faulty ranks
// (sorted) and the world size; `truth` is empty when the file cannot be read.
struct Run {
    QString path;
    QJsonObject truth;
    QString scenario;
    std::vector<int> faulty;
    int world = 0;
};

Run runOf(const QString& dir)
{
    Run run;
    run.path = tracesDir() + QLatin1Char('/') + dir;
    QFile f(run.path + QStringLiteral("/ground_truth.json"));
    if (!f.open(QIODevice::ReadOnly)) return run;
    run.truth = QJsonDocument::fromJson(f.readAll()).object();
    run.scenario = run.truth.value(QStringLiteral("scenario")).toString();
    for (const QJsonValue& v : run.truth.value(QStringLiteral("faulty_ranks")).toArray())
        run.faulty.push_back(v.toInt());
    std::sort(run.faulty.begin(), run.faulty.end());
    run.world = run.truth.value(QStringLiteral("world_size")).toInt();
    return run;
}

// The group and row of the analysis holding collective `seq` of the group named `group` (any
// group when empty), or {-1, -1}.
std::pair<int, int> matchedRow(const AnalysisResult& res, const std::string& group,
                               std::int64_t seq)
{
    for (std::size_t g = 0; g < res.groups.size(); ++g) {
        if (!group.empty() && res.groups[g].name != group) continue;
        const auto& rows = res.groups[g].collectives;
        for (std::size_t k = 0; k < rows.size(); ++k)
            if (rows[k].seq == seq) return {int(g), int(k)};
    }
    return {-1, -1};
}

// "0 all_reduce waited_for [1] F1; 1 - never_arrived": the rows, for a failure's message.
std::string describeRows(const CollectiveDetails& d)
{
    std::string out;
    for (const CollectiveRankRow& r : d.rows)
        out += std::to_string(r.rank) + " " + (r.op.empty() ? "-" : r.op) + " " +
               collectiveRankStateName(r.state) + " [" + formatRanks(r.waitedFor) + "] " +
               r.finding + "; ";
    return out;
}

std::vector<int> rowRanks(const CollectiveDetails& d)
{
    std::vector<int> ranks;
    for (const CollectiveRankRow& r : d.rows)
        ranks.push_back(r.rank);
    return ranks;
}

// Where the details of a finding's collective disagree with the job or the finding: a row set
// other than every rank of `job`, a rank a hang or desync blames shown waiting for others, a
// record on a rank shown without one. Empty when they agree.
std::string detailsDisagreement(const TraceSession& session, const std::vector<int>& job)
{
    const AnalysisResult& res = session.analysis;
    for (const Finding& f : res.findings) {
        if (f.seq < 0 ||
            (f.kind != FindingKind::Hang && f.kind != FindingKind::Desync &&
             f.kind != FindingKind::CollectiveMismatch) ||
            std::find(f.conditions.begin(), f.conditions.end(), "point_to_point") !=
                f.conditions.end())
            continue;
        const auto [g, k] = matchedRow(res, f.processGroup, f.seq);
        if (g < 0) return "no matched collective for " + f.summary;
        const CollectiveDetails d = collectiveDetails(session, res, g, k);
        // A subgroup's collective lists the members its source names, present or not.
        const CollectiveGroup& group = res.groups[std::size_t(g)];
        std::vector<int> expected = job;
        if (group.membersFromSource) {
            expected = group.members;
            expected.insert(expected.end(), group.absentMembers.begin(), group.absentMembers.end());
            std::sort(expected.begin(), expected.end());
        }
        if (rowRanks(d) != expected) return "ranks " + describeRows(d) + "for " + f.summary;
        for (const CollectiveRankRow& r : d.rows) {
            // A rank a hang blames for keeping the others waiting never reads as waiting itself
            // (a rank that deviates in a mismatch may wait in it too).
            const bool blamed = f.kind != FindingKind::CollectiveMismatch &&
                                std::find(f.ranks.begin(), f.ranks.end(), r.rank) != f.ranks.end();
            const bool recordless = r.state == CollectiveRankState::NeverArrived ||
                                    r.state == CollectiveRankState::NoRecord;
            if ((r.state == CollectiveRankState::WaitedFor && blamed) ||
                (r.record >= 0) == recordless)
                return describeRows(d) + "for " + f.summary;
        }
    }
    return {};
}

// Copies the files of `from` that `keep` accepts into `to`.
bool copyFiles(const QString& from, const QString& to,
               const std::function<bool(const QString&)>& keep)
{
    for (const QString& name : QDir(from).entryList(QDir::Files))
        if (keep(name) &&
            !QFile::copy(from + QLatin1Char('/') + name, to + QLatin1Char('/') + name))
            return false;
    return true;
}

} // namespace

void TestAnalyzerFixtures::fixture_data()
{
    QTest::addColumn<QString>("dir");
    const QStringList names = QDir(tracesDir()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(names.size() >= 8);
    for (const QString& n : names)
        QTest::newRow(n.toUtf8().constData()) << n;
}

void TestAnalyzerFixtures::fixture()
{
    QFETCH(QString, dir);
    const Run run = runOf(dir);
    QVERIFY(!run.truth.isEmpty());
    const auto& [path, truth, scenario, faulty, world] = run;
    const QJsonValue stepValue = truth.value(QStringLiteral("fault_step"));
    const int faultStep = stepValue.isDouble() ? stepValue.toInt() : -1;

    const SessionPtr session = loadSession(path);
    QVERIFY(session);
    const AnalysisResult& res = session->analysis;
    std::vector<const Finding*> errors;
    for (const Finding& f : res.findings)
        if (f.severity == Severity::Error) errors.push_back(&f);
    // Every line of every rank's own log went through the classifier (the launcher's console
    // repeats them and is not read twice).
    qsizetype rankLogLines = 0;
    for (const QString& name : QDir(path).entryList({QStringLiteral("rank*.log")}, QDir::Files)) {
        QFile log(path + QLatin1Char('/') + name);
        QVERIFY(log.open(QIODevice::ReadOnly));
        rankLogLines += log.readAll().count('\n');
    }
    QCOMPARE(qsizetype(res.logLineCount), rankLogLines);
    // No auto-check the walkthrough shows says the opposite of a finding.
    const QStringList contradicting = test::contradictions(res, session->autoChecks);
    QVERIFY2(contradicting.isEmpty(), qPrintable(contradicting.join(QLatin1Char('\n'))));

    if (faulty.empty()) {
        for (const Finding* f : errors)
            QVERIFY2(false, f->summary.c_str());
        return;
    }
    const std::vector<FindingKind> kinds = expectedKinds(scenario);
    const bool straggler = kinds == std::vector<FindingKind>{FindingKind::Straggler};
    const Finding* top = nullptr;
    if (straggler) {
        // A slow rank fails nothing: no error, and the straggler warning comes first.
        for (const Finding* f : errors)
            QVERIFY2(false, f->summary.c_str());
        QVERIFY(!res.findings.empty());
        top = &res.findings.front();
    } else {
        QVERIFY2(!errors.empty(), qPrintable(scenario));
        top = errors.front();
    }
    const std::string what = findingKindName(top->kind) + " " + top->summary;
    if (!kinds.empty())
        QVERIFY2(std::find(kinds.begin(), kinds.end(), top->kind) != kinds.end(), what.c_str());
    if (culpritAmongOthers(scenario, world)) {
        // Two fingerprints that differ cannot say which rank deviates from the majority.
        QVERIFY2(std::includes(top->ranks.begin(), top->ranks.end(), faulty.begin(), faulty.end()),
                 what.c_str());
    } else {
        QVERIFY2(top->ranks == faulty, what.c_str());
    }
    // The step a finding names is the trace's own: the ProfilerStep#N span the fault's step
    // (counted in the training loop, as ground_truth.json does) is in.
    if (faultStep >= 0 && !straggler) {
        int expected = -1;
        for (int r : faulty)
            if (expected < 0) expected = profilerStepNumber(path, r, faultStep);
        for (int r = 0; r < world && expected < 0; ++r)
            expected = profilerStepNumber(path, r, faultStep);
        // Unknown, never wrong, where the finding cannot name the culprit and the rank whose
        // line it starts from left no trace (it aborted before exporting one).
        const bool mayBeUnknown = culpritAmongOthers(scenario, world) && !top->evidence.empty() &&
                                  traceEvents(path, top->evidence.front().rank).isEmpty();
        if (expected >= 0 && !(mayBeUnknown && top->step < 0)) QCOMPARE(top->step, expected);
    }
    // The fix its evidence calls for comes first, with the reason.
    const Expected fix = expectedFix(scenario);
    if (!fix.symptom.isEmpty()) {
        QVERIFY2(QString::fromStdString(top->symptom).startsWith(fix.symptom), what.c_str());
        QVERIFY2(!top->fixPatterns.empty(), what.c_str());
        const QString first = QString::fromStdString(top->fixPatterns.front());
        if (fix.orFirst.isEmpty() || first != fix.orFirst) {
            QCOMPARE(first, fix.firstFix);
        } else {
            QVERIFY2(top->fixPatterns.size() > 1 &&
                         QString::fromStdString(top->fixPatterns[1]) == fix.firstFix,
                     what.c_str());
        }
        QVERIFY2(!top->fixReason.empty() && top->fixReason.find('{') == std::string::npos,
                 top->fixReason.c_str());
    }
    // The headline names the cause, not what the other ranks saw of it.
    if (scenario == QLatin1String("world_size_mismatch")) {
        const std::string stated = "WORLD_SIZE is " + std::to_string(world + 1);
        QVERIFY2(top->summary.rfind(stated, 0) == 0, what.c_str());
        QVERIFY2(top->summary.find("never started") != std::string::npos, what.c_str());
        QVERIFY2(top->fixReason.find(stated) != std::string::npos, top->fixReason.c_str());
    }
    // The job is as large as the ranks launched say, not the one rank's larger claim: no rank
    // beyond them reads as missing.
    if (scenario == QLatin1String("wrong_world_init")) {
        // The headline says what the faulty rank did: launched with the job's size like every
        // rank, it passed one more to init_process_group (ground_truth.json's injection).
        QCOMPARE(truth.value(QStringLiteral("mode")).toString(),
                 QStringLiteral("init_world_plus_one"));
        const std::string did = " launched with WORLD_SIZE " + std::to_string(world) +
                                " and passed world_size=" + std::to_string(world + 1) +
                                " to init_process_group";
        QVERIFY2(top->summary.find(did) != std::string::npos, what.c_str());
        QVERIFY2(top->summary.find("uses WORLD_SIZE") == std::string::npos, what.c_str());
        QCOMPARE(res.statedWorldSize, world);
        for (const Finding& f : res.findings)
            QVERIFY2(f.kind != FindingKind::MissingRanks, f.summary.c_str());
    }
    // Every finding with a step on a traced rank can be shown on the timeline.
    for (const Finding& f : res.findings) {
        if (f.step < 0 || f.ranks.empty() || traceEvents(path, f.ranks.front()).isEmpty()) continue;
        QVERIFY2(f.startNs >= 0 && f.endNs >= f.startNs, f.summary.c_str());
    }
}

// The Flight Recorder cases of tests/data/fr_scenarios (both forms): the headline's kind, culprit
// and first fix. They have no ground_truth.json: the fault each one injects is the one
// tests/data/flight_recorder/make_scenarios.py's docstring describes, copied here.
void TestAnalyzerFixtures::flightRecorderCase_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<FindingKind>("headline");
    QTest::addColumn<std::vector<int>>("culprits");
    QTest::addColumn<QString>("firstFix");
    struct Row {
        const char* kind;
        FindingKind headline;
        std::vector<int> culprits;
        const char* firstFix;
    };
    const std::vector<Row> rows = {
        // rank 2 issues broadcast at seq 3 where the others issue all_reduce (and wait)
        {"op_type", FindingKind::Desync, {2}, "fix-behavior-logic"},
        // rank 2 runs seq 2 as all_gather, every rank completes it: nobody waits
        {"op_type_completed", FindingKind::CollectiveMismatch, {2}, "fix-behavior-logic"},
        {"size", FindingKind::CollectiveMismatch, {1}, "fix-data-shape"}, // 1000 vs 6792
        {"dtype", FindingKind::CollectiveMismatch, {3}, "fix-data-type"}, // Half vs Float
        {"missing_rank", FindingKind::Hang, {2}, "fix-behavior-logic"},   // never issues seq 4
        {"hang", FindingKind::Hang, {3}, "fix-behavior-logic"},           // stops after seq 2
        {"trimmed", FindingKind::Hang, {3}, "fix-behavior-logic"},        // never issues seq 4
        // seq 5 completed on the others, not on rank 2: the link or the peers failed in the call
        {"state", FindingKind::Hang, {2}, "fix-communication-configuration"},
        // seq 5 enqueued on rank 2 and never started (its GPU still busy with its own earlier
        // work) while the others started it and wait: what rank 2 ran before it, not the link
        {"not_started", FindingKind::Hang, {2}, "fix-behavior-logic"},
        {"p2p_unpaired", FindingKind::Desync, {1}, "fix-behavior-logic"}, // one recv for two
        {"p2p_size", FindingKind::CollectiveMismatch, {0, 1}, "fix-data-shape"},
        {"coalesced_size", FindingKind::CollectiveMismatch, {1}, "fix-data-shape"},
        // the same totals, tensors in another order: the model's parameters are ordered apart
        {"coalesced_order", FindingKind::CollectiveMismatch, {2}, "fix-model-construction"},
        {"version", FindingKind::ConfigMismatch, {1}, "fix-framework-version"}, // 3.0 vs 2.5
        // rank 3 stalls before its DP all_reduce; rank 1 waits in it and so misses a TP one
        {"tp_dp_stall", FindingKind::Hang, {3}, "fix-behavior-logic"},
        // rank 0 never sends a pipeline activation; rank 2 waits in that recv
        {"pp_stall", FindingKind::Hang, {0}, "fix-behavior-logic"},
    };
    for (const Row& r : rows)
        for (const char* form : {"json", "pickle"})
            QTest::addRow("%s_%s", r.kind, form)
                << QStringLiteral("%1_%2").arg(QLatin1String(r.kind), QLatin1String(form))
                << r.headline << r.culprits << QString::fromLatin1(r.firstFix);
}

void TestAnalyzerFixtures::flightRecorderCase()
{
    QFETCH(QString, kind);
    QFETCH(FindingKind, headline);
    QFETCH(std::vector<int>, culprits);
    QFETCH(QString, firstFix);
    const SessionPtr session =
        loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/") + kind);
    QVERIFY(session);
    QVERIFY(!session->analysis.findings.empty());
    const Finding& top = session->analysis.findings.front();
    const std::string what = findingKindName(top.kind) + " " + top.summary;
    QCOMPARE(top.kind, headline);
    QVERIFY2(top.ranks == culprits, what.c_str());
    QVERIFY(!top.fixPatterns.empty());
    QCOMPARE(QString::fromStdString(top.fixPatterns.front()), firstFix);
    QVERIFY2(!top.fixReason.empty() && top.fixReason.find('{') == std::string::npos,
             top.fixReason.c_str());
    const QStringList contradicting = test::contradictions(session->analysis, session->autoChecks);
    QVERIFY2(contradicting.isEmpty(), qPrintable(contradicting.join(QLatin1Char('\n'))));
}

// The details pane's rows (collectiveDetails) on the real runs: every finding about a collective
// lists every rank of the job (these jobs run on the default group only), and in a hang the rank
// ground_truth.json names never arrived while every other rank waited for it.
void TestAnalyzerFixtures::collectiveDetailsOfRuns_data()
{
    fixture_data();
}

void TestAnalyzerFixtures::collectiveDetailsOfRuns()
{
    QFETCH(QString, dir);
    const Run run = runOf(dir);
    QVERIFY(!run.truth.isEmpty());
    const auto& [path, truth, scenario, faulty, world] = run;
    std::vector<int> job(static_cast<std::size_t>(world));
    std::iota(job.begin(), job.end(), 0);

    const SessionPtr session = loadSession(path);
    QVERIFY(session);
    const AnalysisResult& res = session->analysis;
    const std::string disagreement = detailsDisagreement(*session, job);
    QVERIFY2(disagreement.empty(), disagreement.c_str());
    if (scenario != QLatin1String("hang_timeout") && scenario != QLatin1String("uneven_inputs") &&
        scenario != QLatin1String("loader_stall") && scenario != QLatin1String("early_exit"))
        return;
    // The rank that stalled (or ran out of batches) never arrived in the collective the others
    // entered, or waits in its own barrier; every other rank waited for it and did not complete.
    const Finding* top = test::topError(res);
    QVERIFY(top && top->seq >= 0);
    const auto [g, k] = matchedRow(res, top->processGroup, top->seq);
    QVERIFY(g >= 0);
    const CollectiveDetails d = collectiveDetails(*session, res, g, k);
    QCOMPARE(rowRanks(d), job);
    for (const CollectiveRankRow& r : d.rows) {
        const std::string what = describeRows(d) + "in " + top->summary;
        if (std::binary_search(faulty.begin(), faulty.end(), r.rank)) {
            QVERIFY2(r.state == CollectiveRankState::NeverArrived ||
                         (scenario == QLatin1String("uneven_inputs") &&
                          r.op.find("barrier") != std::string::npos),
                     what.c_str());
        } else {
            QVERIFY2(r.state == CollectiveRankState::WaitedFor, what.c_str());
            QCOMPARE(r.waitedFor, faulty);
        }
    }
}

// The rows of the Flight Recorder cases' collective at fault, each rank's state as
// make_scenarios.py's docstring states it (copied here) and its op, size and dtype as its dump's
// entry holds them (read from the JSON form here).
void TestAnalyzerFixtures::collectiveDetailsOfFlightRecorderCases_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<qint64>("seq");
    QTest::addColumn<std::vector<CollectiveRankState>>("states"); // of ranks 0-3
    QTest::addColumn<std::vector<int>>("waitedFor");
    using S = CollectiveRankState;
    const S c = S::Completed, w = S::WaitedFor;
    struct Row {
        const char* kind;
        qint64 seq;
        std::vector<S> states;
        std::vector<int> waitedFor;
    };
    const std::vector<Row> rows = {
        // rank 2 issues broadcast at seq 3 where the others issue all_reduce and wait
        {"op_type", 3, {w, w, S::Started, w}, {2}},
        // rank 2 runs seq 2 as all_gather, every rank completes it
        {"op_type_completed", 2, {c, c, c, c}, {}},
        // rank 3 left no dump of the 4-rank group
        {"absent_rank", 3, {c, c, c, S::NoRecord}, {}},
        // different sizes / dtypes: every rank waits in the call (started, retired without
        // completing), and no rank kept the others from it
        {"size", 2, {w, w, w, w}, {}},
        {"dtype", 4, {w, w, w, w}, {}},
        // rank 2 never issues seq 4, the others wait in it
        {"missing_rank", 4, {w, w, S::NeverArrived, w}, {2}},
        // rank 2 never started seq 5 (scheduled), the others completed it
        {"state", 5, {c, c, S::Issued, c}, {}},
        // rank 2 never started seq 5, the others started it and wait
        {"not_started", 5, {w, w, S::Issued, w}, {2}},
        // rank 3 stops after seq 2, the others wait in seq 3
        {"hang", 3, {w, w, w, S::NeverArrived}, {3}},
        // rank 3 never issues seq 4
        {"trimmed", 4, {w, w, w, S::NeverArrived}, {3}},
    };
    for (const Row& r : rows)
        for (const char* form : {"json", "pickle"})
            QTest::addRow("%s_%s", r.kind, form)
                << QStringLiteral("%1_%2").arg(QLatin1String(r.kind), QLatin1String(form)) << r.seq
                << r.states << r.waitedFor;
}

void TestAnalyzerFixtures::collectiveDetailsOfFlightRecorderCases()
{
    QFETCH(QString, kind);
    QFETCH(qint64, seq);
    QFETCH(std::vector<CollectiveRankState>, states);
    QFETCH(std::vector<int>, waitedFor);
    const QString root = QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/");
    const SessionPtr session = loadSession(root + kind);
    QVERIFY(session);
    const AnalysisResult& res = session->analysis;
    const auto [g, k] = matchedRow(res, {}, seq);
    QVERIFY(g >= 0);
    const CollectiveDetails d = collectiveDetails(*session, res, g, k);
    QCOMPARE(rowRanks(d), (std::vector<int>{0, 1, 2, 3}));
    const QString json =
        root + kind.left(kind.lastIndexOf(QLatin1Char('_'))) + QStringLiteral("_json/");
    for (const CollectiveRankRow& r : d.rows) {
        const std::string what = describeRows(d);
        QVERIFY2(r.state == states[std::size_t(r.rank)], what.c_str());
        QCOMPARE(r.waitedFor,
                 r.state == CollectiveRankState::WaitedFor ? waitedFor : std::vector<int>{});
        // The rank's own op, size and dtype: its dump's entry of that seq.
        QFile dump(json + QStringLiteral("nccl_trace_rank_%1.json").arg(r.rank));
        if (!dump.open(QIODevice::ReadOnly)) {
            QCOMPARE(r.record, -1);
            continue;
        }
        QJsonObject entry;
        for (const QJsonValue& v : QJsonDocument::fromJson(dump.readAll())
                                       .object()
                                       .value(QStringLiteral("entries"))
                                       .toArray())
            if (v[QStringLiteral("collective_seq_id")].toInteger() == seq &&
                !v[QStringLiteral("is_p2p")].toBool())
                entry = v.toObject();
        if (entry.isEmpty()) {
            QCOMPARE(r.record, -1);
            continue;
        }
        QCOMPARE(
            QString::fromStdString(r.op),
            entry[QStringLiteral("profiling_name")].toString().remove(QStringLiteral("nccl:")));
        const QJsonArray shape = entry[QStringLiteral("input_sizes")].toArray().first().toArray();
        qint64 numel = 1;
        for (const QJsonValue& n : shape)
            numel *= n.toInteger();
        QCOMPARE(qint64(r.inNelems), numel);
        QCOMPARE(QString::fromStdString(r.dtype).toLower(),
                 entry[QStringLiteral("input_dtypes")].toArray().first().toString().toLower());
    }
}

// Members with no record of the group are listed, apart from those that recorded it but not the
// collective: a Flight Recorder job whose rank 2 left only a log (its dump left out), and
// hang_timeout (world_size=3 in the ranks' logs) without any file of rank 2.
void TestAnalyzerFixtures::collectiveDetailsListRanksWithoutRecords()
{
    {
        QTemporaryDir dir;
        const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/missing_rank_json");
        QVERIFY(copyFiles(from, dir.path(), [](const QString& name) {
            return name != QLatin1String("nccl_trace_rank_2.json");
        }));
        QFile log(dir.filePath(QStringLiteral("rank2.log")));
        QVERIFY(log.open(QIODevice::WriteOnly));
        for (int step = 0; step < 4; ++step)
            log.write(QStringLiteral("2026-12-02 13:41:15.7%1 [rank2] INFO train: step %2 loss "
                                     "1.5 avg_loss 1.5\n")
                          .arg(10 + step)
                          .arg(step)
                          .toUtf8());
        log.close();
        const SessionPtr session = loadSession(dir.path());
        QVERIFY(session);
        const auto [g, k] = matchedRow(session->analysis, {}, 4);
        QVERIFY(g >= 0);
        const CollectiveDetails d = collectiveDetails(*session, session->analysis, g, k);
        QCOMPARE(rowRanks(d), (std::vector<int>{0, 1, 2, 3}));
        for (const CollectiveRankRow& r : d.rows) {
            if (r.rank == 2) {
                QCOMPARE(r.state, CollectiveRankState::NoRecord);
                QVERIFY2(r.note.find("log") != std::string::npos, r.note.c_str());
            } else {
                // Its dump says it is still in the call; nothing says for whom it waits.
                QCOMPARE(r.state, CollectiveRankState::WaitedFor);
                QVERIFY(r.waitedFor.empty());
            }
        }
    }
    QTemporaryDir dir;
    const QString from = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout");
    QVERIFY(copyFiles(from, dir.path(), [](const QString& name) {
        return !name.startsWith(QLatin1String("rank2")) && name != QLatin1String("launcher.log");
    }));
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    const AnalysisResult& res = session->analysis;
    QVERIFY(!res.groups.empty() && !res.groups.front().collectives.empty());
    for (int k : {0, int(res.groups.front().collectives.size()) - 1}) {
        const CollectiveDetails d = collectiveDetails(*session, res, 0, k);
        QCOMPARE(rowRanks(d), (std::vector<int>{0, 1, 2}));
        QCOMPARE(d.rows[2].state, CollectiveRankState::NoRecord);
        QCOMPARE(d.rows[2].note, std::string("no file at all"));
    }
}

// Every Flight Recorder case (4-rank jobs): each finding's collective lists ranks 0-3 (a
// subgroup's, its members) and agrees with the finding.
void TestAnalyzerFixtures::collectiveDetailsOfEveryFlightRecorderCase()
{
    const QString root = QStringLiteral(RANKSCOPE_TEST_DATA "/fr_scenarios/");
    const QStringList cases = QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QVERIFY(cases.size() >= 20);
    for (const QString& c : cases) {
        const SessionPtr session = loadSession(root + c);
        QVERIFY(session);
        const std::string disagreement = detailsDisagreement(*session, {0, 1, 2, 3});
        QVERIFY2(disagreement.empty(),
                 qPrintable(c + QLatin1Char(' ') + QString::fromStdString(disagreement)));
    }
}

QTEST_GUILESS_MAIN(TestAnalyzerFixtures)
#include "tst_analyzer_fixtures.moc"
