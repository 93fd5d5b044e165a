#include "model/tracesession.h"
#include "tests/support/findings.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>

using namespace rankscope;

Q_DECLARE_METATYPE(FindingKind)
Q_DECLARE_METATYPE(std::vector<int>)

// The analysis on the real runs of tests/data/traces: what each folder's ground_truth.json says
// was injected must be what the top finding says. Only this test reads ground_truth.json.
class TestAnalyzerFixtures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixture_data();
    void fixture();
    void flightRecorderCase_data();
    void flightRecorderCase();
};

namespace {

QString tracesDir()
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/traces");
}

// The finding kind that names each injected fault.
std::optional<FindingKind> expectedKind(const QString& scenario)
{
    if (scenario == QLatin1String("straggler")) return FindingKind::Straggler;
    if (scenario == QLatin1String("hang_timeout")) return FindingKind::Hang;
    if (scenario == QLatin1String("uneven_inputs")) return FindingKind::Desync;
    if (scenario == QLatin1String("mismatched_collective")) return FindingKind::CollectiveMismatch;
    if (scenario == QLatin1String("setup_failure")) return FindingKind::SetupFailure;
    if (scenario == QLatin1String("rank_crash")) return FindingKind::Crash;
    if (scenario == QLatin1String("nan_loss")) return FindingKind::Crash;
    return std::nullopt;
}

const QString kLeafPrefix = QStringLiteral("training-and-evaluation/");

// The taxonomy leaf and the first fix the injected fault calls for: what the evidence of each
// scenario shows, not what the study fixed most often for the leaf.
struct Expected {
    QString symptom; // the leaf, or the stage's prefix where either of its leaves fits
    QString firstFix;
    // Where the evidence cannot tell the fault from its neighbour, the neighbour's fix may come
    // first: a rank out of batches that stops tracing before its final barrier looks like one
    // that branched out of the loop (uneven_inputs_w3); the fault's own fix is then second.
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
    if (scenario == QLatin1String("rank_crash")) // an IndexError in its own code
        return {kLeafPrefix + QStringLiteral("program-failure/others"),
                QStringLiteral("fix-behavior-logic")};
    if (scenario == QLatin1String("nan_loss"))
        return {kLeafPrefix + QStringLiteral("unexpected-performance/non-convergence"),
                QStringLiteral("fix-learning-rate")};
    if (scenario == QLatin1String("unused_parameters"))
        return {kLeafPrefix + QStringLiteral("program-failure/communication-error"),
                QStringLiteral("fix-distributed-api-usage")};
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
    const QString path = tracesDir() + QLatin1Char('/') + dir;
    QFile truthFile(path + QStringLiteral("/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    const QJsonObject truth = QJsonDocument::fromJson(truthFile.readAll()).object();
    const QString scenario = truth.value(QStringLiteral("scenario")).toString();
    std::vector<int> faulty;
    for (const QJsonValue& v : truth.value(QStringLiteral("faulty_ranks")).toArray())
        faulty.push_back(v.toInt());
    std::sort(faulty.begin(), faulty.end());
    const QJsonValue stepValue = truth.value(QStringLiteral("fault_step"));
    const int faultStep = stepValue.isDouble() ? stepValue.toInt() : -1;
    const int world = truth.value(QStringLiteral("world_size")).toInt();

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
    const std::optional<FindingKind> kind = expectedKind(scenario);
    const Finding* top = nullptr;
    if (kind == FindingKind::Straggler) {
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
    if (kind) QVERIFY2(top->kind == *kind, what.c_str());
    if (top->kind == FindingKind::CollectiveMismatch && world == 2) {
        // Two fingerprints that differ cannot say which rank deviates from the majority.
        QVERIFY2(std::includes(top->ranks.begin(), top->ranks.end(), faulty.begin(), faulty.end()),
                 what.c_str());
    } else {
        QVERIFY2(top->ranks == faulty, what.c_str());
    }
    // The step a finding names is the trace's own: the ProfilerStep#N span the fault's step
    // (counted in the training loop, as ground_truth.json does) is in.
    if (faultStep >= 0 && kind != FindingKind::Straggler) {
        int expected = -1;
        for (int r : faulty)
            if (expected < 0) expected = profilerStepNumber(path, r, faultStep);
        for (int r = 0; r < world && expected < 0; ++r)
            expected = profilerStepNumber(path, r, faultStep);
        if (expected >= 0) QCOMPARE(top->step, expected);
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
        {"not_started", FindingKind::Hang, {2}, "fix-communication-configuration"},
        {"p2p_unpaired", FindingKind::Desync, {1}, "fix-behavior-logic"}, // one recv for two
        {"p2p_size", FindingKind::CollectiveMismatch, {0, 1}, "fix-data-shape"},
        {"coalesced_size", FindingKind::CollectiveMismatch, {1}, "fix-data-shape"},
        // the same totals, tensors in another order: the model's parameters are ordered apart
        {"coalesced_order", FindingKind::CollectiveMismatch, {2}, "fix-model-construction"},
        {"version", FindingKind::ConfigMismatch, {1}, "fix-framework-version"}, // 3.0 vs 2.5
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

QTEST_GUILESS_MAIN(TestAnalyzerFixtures)
#include "tst_analyzer_fixtures.moc"
