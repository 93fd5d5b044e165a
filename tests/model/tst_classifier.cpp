#include "model/kb/reporttext.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSet>
#include <QTest>
#include <cmath>

using namespace rankscope;

class TestClassifier : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void reservedStudyIssuesAreNotLabelledData();
    void evaluationSet();
    void todaysFrameworks();
    void frameworkLines_data();
    void frameworkLines();
    void emptyInputHasNoCandidates();
    void everyTextIsRanked();
    void manyTextsAreRanked();
    void baseRatesFollowTheStudy();
    void rankerParametersAreValidated();
    void statedProbabilitiesAreTheFittedOnes();
    void rootOutranksCascade();
    void cascadeAloneStillReported();
    void timeoutsAfterAFailureAreItsCascade();
    void deniedMessagesAndTemplateExamplesAreNoEvidence();
    void scoresAreBounded();
    void classifyLinesUsesCallerOffsets();
    void stageContextMovesHangToSetup();
    void unstagedHangCountsForEveryStage();
    void leadingStageMovesPartOfASymptom();
    void tensorsOnTwoDevicesStayInTraining();
    void secondaryStageReachesTheTopThree();
    void crossStageShareFollowsTheSymptom();
    void stagePinningSignatureKeepsItsStage();
    void cuesReadOnlyTheProseWindow();
    void pastedCodeIsNotASymptom();
    void proseAndStageRules_data();
    void proseAndStageRules();
    void markdownBoldIsReadThrough();
    void commandsGiveOnlyTheSetupTheyDescribe();
    void outputStageContextCountsLess();
    void checkpointCueSkipsBenignLines();
    void compileApiIsNotAPackageBuild();
    void dataLoadingCueSkipsWhatWorks();
    void earlyCollectiveTimeoutIsNotATrainingHang();
    void pinnedStageTakesTheVote();
    void loggedLossIsTrainingContext();
    void stepsRunAreTrainingContext();
    void environmentTemplateIsNotPackageContext();
    // Raw first posts: template scaffolding, environment dumps, code (model/kb/reporttext).
    void reportLineKindsOfATemplate();
    void acceleratePromptDumpIsNotEvidence();
    void templatePlaceholdersAreNotTheSetup();
    void checklistQuestionsAreNotSymptoms();
    void reproductionCodeIsNotTheStage();
    void frameCuesMatchTheirExamples();
    void frameCuesOnLines_data();
    void frameCuesOnLines();
    void nanCounterIsNoNan();
    void contextHintIsStagePlusFrames();
    void environmentTemplateStatesNoFrame();
    void importFramesAreNotAHang();
    void weakEvidenceTopThreeFollowsTheComplaint_data();
    void weakEvidenceTopThreeFollowsTheComplaint();
    void complaintInTheReportersWords_data();
    void complaintInTheReportersWords();
    void tracebackThroughImportsIsThePackageStage();
    void exceptionLocusSeparatesCommunicationFromOthers();
    void replicatedModelBuildIsACompileError();
};

static QByteArray readData(const QString& rel)
{
    QFile f(QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/") + rel);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// All 38 leaves ranked for a text.
static QList<Candidate> allLeaves(const QByteArray& text)
{
    SymptomClassifier::Options all;
    all.maxCandidates = 38;
    return SymptomClassifier::instance().classify(text, all);
}

// The evidence score of a leaf for a text, among all 38 ranked leaves.
static double evidenceScore(const QString& leaf, const QByteArray& text)
{
    for (const Candidate& c : allLeaves(text))
        if (c.symptom == leaf) return c.score;
    return -1.0;
}

// Every leaf's context hint (stage plus frames) for a text.
static QMap<QString, double> stageHints(const QByteArray& text)
{
    QMap<QString, double> hints;
    for (const Candidate& c : allLeaves(text))
        hints[c.symptom] = c.stageHint;
    return hints;
}

// Our own reports (prose plus logs, one or more per leaf we could write realistically): prints
// top-1/top-3 accuracy and holds a floor so a regression in signatures or cues fails the suite.
void TestClassifier::evaluationSet()
{
    const QJsonArray reports = QJsonDocument::fromJson(readData(QStringLiteral("manifest.json")))
                                   .object()
                                   .value(QLatin1String("reports"))
                                   .toArray();
    QVERIFY(reports.size() >= 40);
    int top1 = 0, top3 = 0;
    for (const QJsonValue& v : reports) {
        const QString file = v[QLatin1String("file")].toString();
        const QString expected = v[QLatin1String("expected")].toString();
        const QByteArray text = readData(file);
        QVERIFY2(!text.isEmpty(), qPrintable(file));
        const QList<Candidate> c = SymptomClassifier::instance().classify(text);
        QStringList ranked;
        for (int i = 0; i < std::min<qsizetype>(3, c.size()); ++i)
            ranked << c[i].symptom;
        if (!ranked.isEmpty() && ranked.first() == expected) ++top1;
        if (ranked.contains(expected))
            ++top3;
        else
            qInfo("miss %s: expected %s, got %s", qPrintable(file), qPrintable(expected),
                  qPrintable(ranked.join(QLatin1String(", "))));
    }
    const double n = reports.size();
    qInfo("evaluation: %d reports, top-1 %.3f, top-3 %.3f", int(n), top1 / n, top3 / n);
    QVERIFY(top1 / n >= 0.75);
    QVERIFY(top3 / n >= 0.85);
}

// Reports we wrote for DeepSpeed, Megatron-LM, FSDP/FSDP2, torchrun/elastic, accelerate,
// Colossal-AI and NCCL 2.18-2.2x (tests/data/classifier/frameworks_eval.tsv): the issue's targets
// for recent frameworks, top-1 >= 75 % and top-3 >= 90 %.
void TestClassifier::todaysFrameworks()
{
    const QList<QByteArray> lines = readData(QStringLiteral("frameworks_eval.tsv")).split('\n');
    int n = 0, top1 = 0, top3 = 0;
    for (const QByteArray& line : lines) {
        if (line.isEmpty() || line.startsWith('#')) continue;
        const QList<QByteArray> f = line.split('\t');
        QCOMPARE(f.size(), 4);
        const QString expected = QString::fromUtf8(f[2]);
        QVERIFY2(Taxonomy::instance().isLeafId(expected), qPrintable(expected));
        const QList<Candidate> c =
            SymptomClassifier::instance().classify(QByteArray(f[3]).replace(" | ", "\n"));
        QVERIFY(c.size() >= 3);
        ++n;
        top1 += c[0].symptom == expected;
        const bool inTop3 =
            c[0].symptom == expected || c[1].symptom == expected || c[2].symptom == expected;
        top3 += inTop3;
        if (!inTop3)
            qInfo("miss %s: expected %s, got %s", f[1].constData(), qPrintable(expected),
                  qPrintable(c[0].symptom));
    }
    QVERIFY(n >= 30);
    qInfo("today's frameworks: %d reports, top-1 %.3f, top-3 %.3f", n, double(top1) / n,
          double(top3) / n);
    QVERIFY(top1 >= 0.75 * n);
    QVERIFY(top3 >= 0.9 * n);
}

// One machine-written line per message of DeepSpeed, Megatron-LM, FSDP/FSDP2, torchrun/elastic,
// accelerate, Colossal-AI and NCCL 2.18-2.2x (tests/data/classifier/framework_lines.tsv, written
// by us from the message formats): alone, each names its leaf, both as a report (ranked, first)
// and as a log line (log analysis, first leaf with evidence).
void TestClassifier::frameworkLines_data()
{
    QTest::addColumn<QString>("expected");
    QTest::addColumn<QByteArray>("line");
    QSet<QString> frameworks;
    int row = 0;
    for (const QByteArray& l : readData(QStringLiteral("framework_lines.tsv")).split('\n')) {
        if (l.isEmpty() || l.startsWith('#')) continue;
        const QList<QByteArray> f = l.split('\t');
        QCOMPARE(f.size(), 3);
        frameworks.insert(QString::fromUtf8(f[0]));
        QTest::addRow("%d %s", ++row, f[0].constData()) << QString::fromUtf8(f[1]) << f[2];
    }
    for (const char* name :
         {"deepspeed", "megatron", "fsdp", "fsdp2", "torchrun", "accelerate", "colossalai", "nccl"})
        QVERIFY2(frameworks.contains(QLatin1String(name)), name);
}

void TestClassifier::frameworkLines()
{
    QFETCH(QString, expected);
    QFETCH(QByteArray, line);
    QVERIFY2(Taxonomy::instance().isLeafId(expected), qPrintable(expected));
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    const QList<Candidate> ranked = classifier.classify(line);
    QVERIFY(ranked.size() >= 3);
    QVERIFY(!ranked.first().evidence.isEmpty());
    // A line with no root signature (a teardown that follows another rank's failure) does not
    // say alone which leaf the report is: the labelled reports quoting NCCL's "Some NCCL
    // operations have failed or timed out" are communication errors, set-up, preparation and
    // training hangs. The ranking must then name the line's leaf first or say it is unsure and
    // hold it among its first three. A line with a root signature names its leaf first, or,
    // when the line names no stage and its message does not pin one, its leaf is second behind
    // the same symptom in another stage (the study files a bare NCCL error under set-up about
    // as often as under training).
    bool anyRoot = false;
    for (const Candidate& c : ranked)
        anyRoot = anyRoot || c.hasRoot;
    const QString& top = ranked.first().symptom;
    if (top != expected &&
        SignatureSet::builtin().remap(top.section(QLatin1Char('/'), 0, 0), expected) == top) {
        QCOMPARE(ranked[1].symptom, expected);
    } else if (top != expected) {
        QVERIFY2(!anyRoot, qPrintable(ranked.first().symptom));
        QVERIFY(classifier.isUnsure(ranked));
        QVERIFY2(ranked[1].symptom == expected || ranked[2].symptom == expected,
                 qPrintable(ranked.first().symptom));
    }
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    const QList<Candidate> log = SymptomClassifier::instance().classify(line, logOnly);
    QVERIFY(!log.isEmpty());
    QCOMPARE(log.first().symptom, expected);
}

void TestClassifier::emptyInputHasNoCandidates()
{
    QVERIFY(SymptomClassifier::instance().classify(QByteArray()).isEmpty());
    QVERIFY(SymptomClassifier::instance().classify(" \n\t\n").isEmpty());
    // A log scan (unranked) reports only what it found.
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    QVERIFY(
        SymptomClassifier::instance().classify("all good, 42 tests passed\n", logOnly).isEmpty());
}

// Any non-empty text gets a ranked answer: at least three leaves, probabilities that sum to at
// most 1 in descending order, and "unsure" when nothing in it is evidence.
void TestClassifier::everyTextIsRanked()
{
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    for (const QByteArray& text :
         {QByteArray("all good, 42 tests passed\n"), QByteArray("GPU0 uses more memory?"),
          QByteArray("Segmentation error in title only"), QByteArray("x"),
          QByteArray("**Environment:**\n1. Framework: PyTorch\n2. Framework version: 1.5.0\n"
                     "3. Horovod version: 0.19.2\n4. MPI version: 4.0.3\n"),
          QByteArray("[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
                     "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 "
                     "milliseconds before timing out.\n")}) {
        const QList<Candidate> c = classifier.classify(text);
        QVERIFY2(c.size() >= 3, text.constData());
        double sum = 0.0;
        QSet<QString> leaves;
        for (int i = 0; i < c.size(); ++i) {
            QVERIFY(Taxonomy::instance().isLeafId(c[i].symptom));
            leaves.insert(c[i].symptom);
            QVERIFY(c[i].probability > 0.0 && c[i].probability < 1.0);
            if (i > 0) QVERIFY(c[i].probability <= c[i - 1].probability);
            sum += c[i].probability;
        }
        QCOMPARE(leaves.size(), c.size());
        QVERIFY(sum <= 1.0 + 1e-9);
    }
    const QList<Candidate> nothing = classifier.classify("all good, 42 tests passed\n");
    QVERIFY(classifier.isUnsure(nothing));
    for (const Candidate& c : nothing)
        QVERIFY(c.evidence.isEmpty());
    // A one-line title names its symptom in the words people use.
    QCOMPARE(classifier.classify("Segmentation error in title only").first().symptom,
             QStringLiteral("training-and-evaluation/program-failure/segmentation-fault"));
    QCOMPARE(classifier.classify("GPU0 uses more memory?").first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device"));
    // An environment template without a problem is a guess, said to be one.
    QVERIFY(classifier.isUnsure(classifier.classify(
        "**Environment:**\n1. Framework: PyTorch\n3. Horovod version: 0.19.2\n")));
    const QList<Candidate> watchdog = classifier.classify(
        "[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 "
        "milliseconds before timing out.\n");
    QCOMPARE(watchdog.first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/hang"));
    QVERIFY(!classifier.isUnsure(watchdog));
    QVERIFY(!watchdog.first().evidence.isEmpty());
}

// The base rate of a leaf given a framework, counted here from the study's sheet.
void TestClassifier::baseRatesFollowTheStudy()
{
    QFile csv(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> rows = csv.readAll().split('\n');
    int all = 0, pytorch = 0, hangAll = 0, hangPytorch = 0;
    for (int i = 1; i < rows.size(); ++i) {
        const QByteArray& r = rows[i];
        if (r.trimmed().isEmpty()) continue;
        ++all;
        const bool isPytorch =
            r.toLower().startsWith("github-pytorch,") || r.toLower().startsWith("so-pytorch,");
        const bool isHang = r.contains(",unexpected performance,hang,");
        pytorch += isPytorch;
        hangAll += isHang;
        hangPytorch += isPytorch && isHang;
    }
    QVERIFY(pytorch > 0 && hangAll > 0);
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const double share = double(hangAll) / all;
    QVERIFY(qAbs(classifier.prior(hang) - share) < 1e-9);
    QVERIFY(qAbs(classifier.baseRate(hang, {}) - share) < 1e-9);
    const double k = classifier.ranking().priorSmoothing;
    QVERIFY(qAbs(classifier.baseRate(hang, {QStringLiteral("pytorch")}) -
                 (hangPytorch + k * share) / (pytorch + k)) < 1e-9);
    // A framework the study never saw falls back to the overall share.
    QVERIFY(qAbs(classifier.baseRate(hang, {QStringLiteral("jax")}) - share) < 1e-9);
}

void TestClassifier::rankerParametersAreValidated()
{
    RankerParameters p;
    QString error;
    QVERIFY(
        RankerParameters::fromJson(R"({"evidence_scale": 6, "unsure_below": 0.5})", &p, &error));
    QCOMPARE(p.evidenceScale, 6.0);
    QCOMPARE(p.unsureBelow, 0.5);
    QCOMPARE(p.minCandidates, RankerParameters{}.minCandidates);
    QVERIFY(!RankerParameters::fromJson(R"({"unsure_below": 2})", &p, &error));
    QVERIFY(error.contains(QLatin1String("unsure_below")));
    QVERIFY(!RankerParameters::fromJson("[1", &p, &error));
    QVERIFY(RankerParameters::fromJson(R"({"cross_stage_share": 0.25})", &p, &error));
    QCOMPARE(p.crossStageShare, 0.25);
    QVERIFY(!RankerParameters::fromJson(R"({"cross_stage_share": 1.5})", &p, &error));
    QVERIFY(error.contains(QLatin1String("cross_stage_share")));
    // Absent, the share with no stage context is the cross-stage share.
    QCOMPARE(p.unstagedShare, p.crossStageShare);
    QVERIFY(RankerParameters::fromJson(R"({"unstaged_share": 0.6})", &p, &error));
    QCOMPARE(p.unstagedShare, 0.6);
    QVERIFY(!RankerParameters::fromJson(R"({"unstaged_share": -0.5})", &p, &error));
    QVERIFY(error.contains(QLatin1String("unstaged_share")));
    QCOMPARE(p.leadingStageShare, 1.0);
    QVERIFY(RankerParameters::fromJson(R"({"leading_stage_share": 0.5})", &p, &error));
    QCOMPARE(p.leadingStageShare, 0.5);
    QVERIFY(!RankerParameters::fromJson(R"({"leading_stage_share": 1.2})", &p, &error));
    QVERIFY(error.contains(QLatin1String("leading_stage_share")));
    // The built-in file is what the classifier uses.
    QFile f(QStringLiteral(":/taxonomy/ranker.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(RankerParameters::fromJson(f.readAll(), &p, &error));
    QCOMPARE(SymptomClassifier::instance().ranking().evidenceScale, p.evidenceScale);
    QCOMPARE(SymptomClassifier::instance().ranking().unsureBelow, p.unsureBelow);
}

// The ranker's parameters as the product ships them (taxonomy/ranker.json, compiled in), read as
// plain JSON.
// The ranked answer's shape, checked on many texts: every text with a non-blank byte gets at
// least three distinct leaves of the taxonomy, by descending probability in (0, 1], summing to at
// most 1; a blank text gets none. Real texts are every report of tests/data/classifier (ours and
// today's frameworks); random ones are byte soup (any byte, invalid UTF-8 included) and word
// soup from the words the cues and signatures react to, from a fixed seed.
void TestClassifier::manyTextsAreRanked()
{
    QList<QByteArray> texts;
    const QJsonArray reports = QJsonDocument::fromJson(readData(QStringLiteral("manifest.json")))
                                   .object()
                                   .value(QLatin1String("reports"))
                                   .toArray();
    for (const QJsonValue& v : reports)
        texts << readData(v[QLatin1String("file")].toString());
    for (const QByteArray& line : readData(QStringLiteral("frameworks_eval.tsv")).split('\n'))
        if (!line.isEmpty() && !line.startsWith('#'))
            texts << line.split('\t').value(3).replace(" | ", "\n");
    const qsizetype real = texts.size();
    QVERIFY(real >= 90);

    QRandomGenerator random(20261204);
    for (int i = 0; i < 400; ++i) {
        QByteArray bytes(1 + random.bounded(200), Qt::Uninitialized);
        for (char& b : bytes)
            b = char(random.bounded(256));
        texts << bytes;
    }
    const QList<QByteArray> words = {"hang",         "NCCL",
                                     "timeout",      "horovod",
                                     "segmentation", "fault",
                                     "install",      "import",
                                     "error",        "OOM",
                                     "GPU",          "rank",
                                     "mpirun",       "slow",
                                     "nan",          "loss",
                                     "checkpoint",   "keras",
                                     "pytorch",      "\n",
                                     "Traceback",    "KeyError:",
                                     "watchdog",     "  ",
                                     "\t",           "multi_gpu_model",
                                     "setup",        "epoch"};
    for (int i = 0; i < 400; ++i) {
        QByteArray soup;
        for (int w = random.bounded(1, 30); w > 0; --w)
            soup += words[random.bounded(int(words.size()))] + ' ';
        texts << soup;
    }
    texts << QByteArray(1, '\0') << QByteArray(" \v\f\r\n") << QByteArray("\xff\xfe");

    const SymptomClassifier& classifier = SymptomClassifier::instance();
    int ranked = 0;
    for (qsizetype t = 0; t < texts.size(); ++t) {
        const QByteArray& text = texts[t];
        QVERIFY2(t >= real || !text.trimmed().isEmpty(), "a real report is empty");
        const QList<Candidate> c = classifier.classify(text);
        const QByteArray what = "text " + QByteArray::number(t) + ": " + text.left(60).toHex();
        if (text.trimmed().isEmpty()) {
            QVERIFY2(c.isEmpty(), what.constData());
            continue;
        }
        ++ranked;
        QVERIFY2(c.size() >= 3, what.constData());
        QSet<QString> leaves;
        double sum = 0.0;
        for (qsizetype i = 0; i < c.size(); ++i) {
            QVERIFY2(Taxonomy::instance().isLeafId(c[i].symptom), what.constData());
            leaves.insert(c[i].symptom);
            QVERIFY2(c[i].probability > 0.0 && c[i].probability <= 1.0, what.constData());
            if (i > 0) QVERIFY2(c[i].probability <= c[i - 1].probability, what.constData());
            sum += c[i].probability;
        }
        QVERIFY2(leaves.size() == c.size(), what.constData());
        QVERIFY2(sum <= 1.0 + 1e-9, what.constData());
    }
    QVERIFY(ranked > 800);
}

static QJsonObject shippedRanker()
{
    QFile f(QStringLiteral(":/taxonomy/ranker.json"));
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object()
                                       : QJsonObject();
}

// The stated probabilities are those of the parameters scripts/ranker.py fitted: recomputed here
// from the study's sheet and the shipped JSON, and "unsure" exactly below the fitted threshold.
void TestClassifier::statedProbabilitiesAreTheFittedOnes()
{
    const QJsonObject p = shippedRanker();
    QVERIFY(p.contains(QLatin1String("temperature")));
    QVERIFY(p.contains(QLatin1String("unsure_below")));
    const double temperature = p[QLatin1String("temperature")].toDouble();
    const double priorWeight = p[QLatin1String("prior_weight")].toDouble();
    const double evidenceScale = p[QLatin1String("evidence_scale")].toDouble();
    const double stageScale = p[QLatin1String("stage_scale")].toDouble();
    const double unsureBelow = p[QLatin1String("unsure_below")].toDouble();
    const double termScale = p[QLatin1String("term_scale")].toDouble();
    const double neighbourScale = p[QLatin1String("neighbour_scale")].toDouble();
    const double neighbourFloor = p[QLatin1String("neighbour_floor")].toDouble();
    const double neighbourHalfTokens = p[QLatin1String("neighbour_half_tokens")].toDouble();
    const double neighbourMinTokens = p[QLatin1String("neighbour_min_tokens")].toDouble();
    QVERIFY(temperature > 0.0 && priorWeight > 0.0 && evidenceScale > 0.0);

    // Each leaf's share of the sheet's fault rows, counted by its stage/inner/leaf names.
    QFile csv(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QList<QByteArray> rows = csv.readAll().split('\n');
    QHash<QString, int> rowsByPath;
    int all = 0;
    for (int i = 1; i < rows.size(); ++i) {
        const QList<QByteArray> f = rows[i].trimmed().split(',');
        if (f.size() < 6) continue;
        ++rowsByPath[QString::fromUtf8(f[3] + '/' + f[4] + '/' + f[5])];
        ++all;
    }
    const Taxonomy& taxonomy = Taxonomy::instance();
    QHash<QString, double> share;
    for (const QString& leaf : taxonomy.leaves()) {
        const TaxonomyNode* node = taxonomy.node(leaf);
        const TaxonomyNode* parent = taxonomy.node(node->parentId);
        const bool underStage = parent->kind == TaxonomyNode::Kind::Stage;
        const QString stage = underStage ? parent->name : taxonomy.node(parent->parentId)->name;
        const QString path = stage + QLatin1Char('/') + (underStage ? QString() : parent->name) +
                             QLatin1Char('/') + node->name;
        QVERIFY2(rowsByPath.contains(path), qPrintable(path));
        share[leaf] = double(rowsByPath.value(path)) / all;
    }

    // No evidence, no framework, no stage: the base rates alone, sharpened or flattened by the
    // fitted prior weight and temperature.
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    // (No word of three letters either, so no term score.)
    const QList<Candidate> none = classifier.classify("ok, 42 of 42\n");
    QVERIFY(none.size() >= 3);
    double z = 0.0;
    for (const QString& leaf : taxonomy.leaves())
        z += std::pow(share[leaf], priorWeight / temperature);
    for (const Candidate& c : none) {
        QCOMPARE(c.score, 0.0);
        QCOMPARE(c.stageHint, 0.0);
        QCOMPARE(c.termScore, 0.0);
        const double expected = std::pow(share[c.symptom], priorWeight / temperature) / z;
        QVERIFY2(qAbs(c.probability - expected) < 1e-9, qPrintable(c.symptom));
    }

    // With evidence: the log-odds between any two candidates are the fitted combination of the
    // inputs the program reports for them, divided by the fitted temperature.
    const QList<QByteArray> texts{
        "[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
        "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 "
        "milliseconds before timing out.\n",
        "Horovod hangs at hvd.init() on the second machine\n",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
        "GPU0 uses more memory?",
        "all good, 42 tests passed\n",
        "**Environment:**\n1. Framework: PyTorch\n3. Horovod version: 0.19.2\n"};
    int unsure = 0, sure = 0;
    for (const QByteArray& text : texts) {
        const QList<Candidate> c = classifier.classify(text);
        QVERIFY(c.size() >= 3);
        const auto logit = [&](const Candidate& x) {
            // The nearest labelled reports vote when the report reads enough of their words.
            const double n = double(x.neighbourTokens);
            const double vote = n >= neighbourMinTokens
                                    ? neighbourScale * n / (n + neighbourHalfTokens) *
                                          std::log(x.neighbourShare + neighbourFloor)
                                    : 0.0;
            return (priorWeight * std::log(x.baseRate) + evidenceScale * x.score +
                    stageScale * x.stageHint + termScale * x.termScore + vote) /
                   temperature;
        };
        for (int i = 1; i < c.size(); ++i)
            QVERIFY2(qAbs(std::log(c[i].probability / c[0].probability) -
                          (logit(c[i]) - logit(c[0]))) < 1e-9,
                     text.constData());
        const bool expectUnsure = c.first().probability < unsureBelow;
        QCOMPARE(classifier.isUnsure(c), expectUnsure);
        (expectUnsure ? unsure : sure) += 1;
    }
    // Both sides of the threshold were exercised.
    QVERIFY(unsure > 0 && sure > 0);
}

void TestClassifier::rootOutranksCascade()
{
    // An OOM on one rank, then the peers' watchdog teardown and the launcher's SIGTERM.
    const QByteArray log =
        "[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        "[rank0]:[E ProcessGroupNCCL.cpp:577] [Rank 0] Some NCCL operations have failed or timed "
        "out.\n"
        "[rank0]: Horovod has been shut down.\n"
        "Sending process 12 closing signal SIGTERM\n";
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    const QList<Candidate> c = SymptomClassifier::instance().classify(log, logOnly);
    QVERIFY(!c.isEmpty());
    QCOMPARE(c.first().symptom,
             QStringLiteral("training-and-evaluation/program-failure/out-of-memory"));
    QVERIFY(c.first().hasRoot);
    QCOMPARE(c.first().evidence.first().line, qsizetype(1));
    for (int i = 1; i < c.size(); ++i)
        QVERIFY(c[i].score < c.first().score / 2);
}

// One rank's CUDA OOM and the others' watchdog timeouts (they waited for it): the timeouts are
// the OOM's cascade (signatures.json cascade_after), in a pasted report and in a log alike. A
// timeout alone is still the hang.
void TestClassifier::timeoutsAfterAFailureAreItsCascade()
{
    const QByteArray oom =
        "[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB.\n";
    QByteArray timeouts;
    for (int r = 0; r < 3; ++r)
        timeouts +=
            QStringLiteral("[rank%1]:[E ProcessGroupNCCL.cpp:616] [Rank %1] Watchdog caught "
                           "collective operation timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, "
                           "NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600087 "
                           "milliseconds before timing out.\n")
                .arg(r)
                .toUtf8();
    const QString oomLeaf = QStringLiteral("training-and-evaluation/program-failure/out-of-memory");
    const QString hangLeaf = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    for (const QByteArray& text : {QByteArray(oom + timeouts), QByteArray(timeouts + oom)}) {
        const QList<Candidate> ranked = SymptomClassifier::instance().classify(text);
        QCOMPARE(ranked.first().symptom, oomLeaf);
        for (const Candidate& c : SymptomClassifier::instance().classify(text, logOnly))
            for (const CandidateEvidence& e : c.evidence)
                if (e.signature == QLatin1String("torch.watchdog-timeout"))
                    QCOMPARE(e.role, SignatureRole::Cascade);
    }
    const QList<Candidate> alone = SymptomClassifier::instance().classify(timeouts, logOnly);
    QCOMPARE(alone.first().symptom, hangLeaf);
    QCOMPARE(alone.first().evidence.first().role, SignatureRole::Root);
}

// Log messages the reporter denies ("there is no CUDA out of memory error") or that an issue
// template's HTML comment gives as an example are no evidence of that message.
void TestClassifier::deniedMessagesAndTemplateExamplesAreNoEvidence()
{
    const auto cites = [](const QList<Candidate>& ranked, const QString& prefix) {
        for (const Candidate& c : ranked)
            for (const CandidateEvidence& e : c.evidence)
                if (e.signature.startsWith(prefix)) return true;
        return false;
    };
    const QList<Candidate> denied = SymptomClassifier::instance().classify(
        "Training hangs at step 300. There is no CUDA out of memory error in the logs.\n");
    QVERIFY(!cites(denied, QStringLiteral("cuda.oom")));
    QCOMPARE(denied.first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/hang"));
    // The same words as a line the program printed are the message.
    QVERIFY(cites(SymptomClassifier::instance().classify(
                      "Training hangs at step 300.\n```\nRuntimeError: CUDA out of memory. "
                      "Tried to allocate 2.00 GiB\n```\n"),
                  QStringLiteral("cuda.oom")));

    const QList<Candidate> templated = SymptomClassifier::instance().classify(
        "DDP training freezes after the first epoch\n"
        "<!-- Paste the full error, e.g. torch.cuda.OutOfMemoryError: CUDA out of memory -->\n"
        "All 8 GPUs sit at 100 % utilisation and nothing is printed any more.\n");
    QVERIFY(!cites(templated, QStringLiteral("cuda.oom")));
}

void TestClassifier::cascadeAloneStillReported()
{
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    const QList<Candidate> c = SymptomClassifier::instance().classify(
        "HorovodInternalError: Horovod has been shut down. This was caused by an exception on one "
        "of the ranks\n",
        logOnly);
    QCOMPARE(c.size(), 1);
    QVERIFY(!c.first().hasRoot);
    QCOMPARE(c.first().evidence.first().role, SignatureRole::Cascade);
    QVERIFY(c.first().score < 0.2);
}

void TestClassifier::scoresAreBounded()
{
    QByteArray many;
    for (int i = 0; i < 200; ++i)
        many += "Segmentation fault (core dumped)\nsegfault crash\n";
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(many);
    QVERIFY(ranked.first().score > 0.0);
    for (const Candidate& c : ranked) {
        QVERIFY(c.score >= 0.0 && c.score <= 1.0);
        QVERIFY(c.probability > 0.0 && c.probability < 1.0);
        QVERIFY(c.evidence.size() <= 5);
    }
}

void TestClassifier::classifyLinesUsesCallerOffsets()
{
    const QByteArray log = "line one\r\nline two\r\nRuntimeError: CUDA error: invalid device "
                           "ordinal\r\n";
    const QList<qsizetype> starts{0, 10, 20};
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
    logOnly.ranked = false;
    const QList<Candidate> c = SymptomClassifier::instance().classifyLines(log, starts, logOnly);
    QVERIFY(!c.isEmpty());
    QCOMPARE(c.first().symptom, QStringLiteral("data-and-model-preparation/device-error"));
    QCOMPARE(c.first().evidence.first().line, qsizetype(3));
    QCOMPARE(c.first().evidence.first().signature, QStringLiteral("torch.device-ordinal"));
    QVERIFY(!c.first().evidence.first().text.endsWith(QLatin1Char('\r')));
}

// With nothing in the text that names a stage, a hang is as much the setup stage's as the
// training stage's; once the text places it in training, the setup leaf keeps only a small part.
void TestClassifier::unstagedHangCountsForEveryStage()
{
    const auto scores = [](const QByteArray& text) {
        SymptomClassifier::Options all;
        all.maxCandidates = 38;
        QHash<QString, double> out;
        for (const Candidate& c : SymptomClassifier::instance().classify(text, all))
            out.insert(c.symptom, c.score);
        return out;
    };
    const QString training = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const QString setup = QStringLiteral("communication-setup/hang-and-timeout");
    const QHash<QString, double> unstaged = scores("My script hangs with DDP on 4 GPUs.\n");
    QVERIFY(unstaged.value(training) > 0.3);
    QVERIFY(unstaged.value(setup) >= 0.5 * unstaged.value(training));
    const QHash<QString, double> inTraining =
        scores("My script hangs with DDP on 4 GPUs after 3 epochs of training.\n");
    QVERIFY(inTraining.value(training) > 0.3);
    QVERIFY(inTraining.value(setup) < 0.4 * inTraining.value(training));
}

// A hang said beside a set-up cue ranks the set-up hang first, but the cue also raises that leaf
// through its context hint: the leading stage moves only leading_stage_share of the hang, so the
// training hang keeps more of its evidence than when all of it moved. Unranked, as log analysis
// reads it, the stage still moves the whole symptom.
void TestClassifier::leadingStageMovesPartOfASymptom()
{
    const QByteArray text = "The job hangs at init_process_group when I start it on 4 GPUs.\n";
    const QString training = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const QString setup = QStringLiteral("communication-setup/hang-and-timeout");
    const auto ranked = [&](double share) {
        RankerParameters ranking = SymptomClassifier::instance().ranking();
        ranking.leadingStageShare = share;
        SymptomClassifier::Options all;
        all.maxCandidates = 38;
        const QList<Candidate> out =
            SymptomClassifier(SignatureSet::builtin(), ranking).classify(text, all);
        QHash<QString, Candidate> bySymptom;
        for (const Candidate& c : out)
            bySymptom.insert(c.symptom, c);
        return std::pair{out.first().symptom, bySymptom};
    };
    const double shipped = SymptomClassifier::instance().ranking().leadingStageShare;
    QVERIFY(shipped > 0.0 && shipped < 1.0);
    const auto [firstWhole, whole] = ranked(1.0);
    const auto [firstPart, part] = ranked(shipped);
    QCOMPARE(firstWhole, setup);
    QCOMPARE(firstPart, setup);
    QVERIFY(part.value(training).score > whole.value(training).score + 0.05);
    QVERIFY(part.value(setup).score < whole.value(setup).score);
    QVERIFY(part.value(setup).probability < whole.value(setup).probability);

    SymptomClassifier::Options unranked;
    unranked.ranked = false;
    const QList<Candidate> matched = SymptomClassifier::instance().classify(text, unranked);
    QVERIFY(!matched.isEmpty());
    QCOMPARE(matched.first().symptom, setup);
}

// "Expected all tensors to be on the same device" is raised where tensors meet, in a forward or
// backward pass: the data and the model loaded before it do not make it a preparation failure.
void TestClassifier::tensorsOnTwoDevicesStayInTraining()
{
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(
        "Loading the dataset works, the model is loaded from the checkpoint, then it fails "
        "with:\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two "
        "devices, cuda:0 and cuda:1!\n");
    qsizetype training = -1, preparation = -1;
    for (qsizetype i = 0; i < ranked.size(); ++i) {
        if (ranked[i].symptom ==
            QLatin1String("training-and-evaluation/program-failure/device-error"))
            training = i;
        if (ranked[i].symptom == QLatin1String("data-and-model-preparation/device-error"))
            preparation = i;
    }
    QVERIFY(training >= 0 && training < 3);
    QVERIFY(preparation < 0 || preparation > training);
}

void TestClassifier::stageContextMovesHangToSetup()
{
    const QList<Candidate> c = SymptomClassifier::instance().classify(
        "The job hangs forever at dist.init_process_group on the second node.\n"
        "MASTER_ADDR and MASTER_PORT are set, nothing happens.\n");
    QVERIFY(!c.isEmpty());
    QCOMPARE(c.first().symptom, QStringLiteral("communication-setup/hang-and-timeout"));
}

// Setup context leads (two nodes, init_process_group) but the hang is at DDP's constructor: the
// preparation stage's hang reaches the top three, and the secondary stage share raises it (the
// hang frame alone brings every stage's hang leaf near the top now).
void TestClassifier::secondaryStageReachesTheTopThree()
{
    const QByteArray text =
        "Two nodes with 2 GPUs each: processes hang at the DistributedDataParallel(...) "
        "constructor line\ninit_process_group(backend nccl, init_method env://) returned\n";
    const QString prepHang = QStringLiteral("data-and-model-preparation/hang-and-timeout");
    const auto topThree = [&](const SymptomClassifier& classifier) {
        QStringList leaves;
        for (const Candidate& c : classifier.classify(text).mid(0, 3))
            leaves << c.symptom;
        return leaves;
    };
    const auto prepHangProbability = [&](const SymptomClassifier& classifier) {
        SymptomClassifier::Options all;
        all.maxCandidates = 38;
        for (const Candidate& c : classifier.classify(text, all))
            if (c.symptom == prepHang) return c.probability;
        return -1.0;
    };
    QVERIFY(SymptomClassifier::instance().ranking().secondaryStageShare > 0.0);
    QVERIFY(topThree(SymptomClassifier::instance()).contains(prepHang));
    RankerParameters without = SymptomClassifier::instance().ranking();
    without.secondaryStageShare = 0.0;
    QVERIFY(prepHangProbability(SymptomClassifier::instance()) >
            prepHangProbability(SymptomClassifier(SignatureSet::builtin(), without)) + 0.01);
}

// Prose cues read the first SignatureSet::kProseBytes; log signatures read everything.
// A hang in a report with training context: each other stage's hang leaf gets exactly the shared
// part of the hang's evidence, with the hang's evidence line; none without the share. With the
// shipped parameters both rank among the first five behind the hang (the terms may put a
// communication error, which watchdog timeouts often are, between them).
void TestClassifier::crossStageShareFollowsTheSymptom()
{
    const QByteArray text = "Training hangs after the first epoch\n";
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const QStringList others = {QStringLiteral("communication-setup/hang-and-timeout"),
                                QStringLiteral("data-and-model-preparation/hang-and-timeout")};
    RankerParameters ranking = SymptomClassifier::instance().ranking();
    SymptomClassifier::Options all;
    all.maxCandidates = 38;
    for (const double share : {0.0, 0.3}) {
        ranking.crossStageShare = share;
        QHash<QString, Candidate> bySymptom;
        for (const Candidate& c :
             SymptomClassifier(SignatureSet::builtin(), ranking).classify(text, all))
            bySymptom.insert(c.symptom, c);
        const Candidate& h = bySymptom.value(hang);
        QVERIFY(h.score > 0.3);
        for (const QString& other : others) {
            const Candidate& c = bySymptom.value(other);
            QVERIFY2(std::abs(c.score - share * h.score) < 1e-12, qPrintable(other));
            // The hang's own evidence line follows the share; the hang frame's line is there
            // either way, as context.
            QList<CandidateEvidence> shared;
            for (const CandidateEvidence& e : c.evidence)
                if (e.signature != QLatin1String("saw-hang")) shared << e;
            QCOMPARE(shared.isEmpty(), share == 0.0);
            if (share > 0.0) QCOMPARE(shared.first().line, 1);
        }
    }
    QVERIFY(SymptomClassifier::instance().ranking().crossStageShare > 0.0);
    QStringList top;
    SymptomClassifier::Options five;
    five.maxCandidates = 5;
    for (const Candidate& c : SymptomClassifier::instance().classify(text, five))
        top << c.symptom;
    QCOMPARE(top.first(), hang);
    for (const QString& other : others)
        QVERIFY2(top.contains(other), qPrintable(top.join(QLatin1String(", "))));
}

// A store client connects only at rendezvous, so its timeout is a set-up hang even when the
// reporter says it happened "while training"; a hang in words alone follows those words.
void TestClassifier::stagePinningSignatureKeepsItsStage()
{
    const QString setupHang = QStringLiteral("communication-setup/hang-and-timeout");
    const QString trainingHang =
        QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const QList<Candidate> pinned = SymptomClassifier::instance().classify(
        "Timeout while training with multiple GPUs\n```\nTimeoutError: The client socket has timed "
        "out after 1800s while trying to connect to (127.0.0.1, 29500).\n```\n");
    QCOMPARE(pinned.first().symptom, setupHang);
    QCOMPARE(pinned.first().evidence.first().signature,
             QStringLiteral("torch.store-client-timeout"));
    const QList<Candidate> words =
        SymptomClassifier::instance().classify("The job hangs while training with multiple GPUs\n");
    QCOMPARE(words.first().symptom, trainingHang);
    int pinning = 0;
    for (const Signature& s : SignatureSet::builtin().signatures())
        pinning += s.pinsStage;
    QVERIFY(pinning > 0);
}

void TestClassifier::cuesReadOnlyTheProseWindow()
{
    QByteArray log(SignatureSet::kProseBytes + 10, 'x');
    log += "\nthe job hangs forever\nSegmentation fault (core dumped)\n";
    QStringList symptoms;
    for (const Candidate& c : SymptomClassifier::instance().classify(log))
        if (!c.evidence.isEmpty()) symptoms << c.symptom;
    QCOMPARE(symptoms, QStringList{QStringLiteral(
                           "training-and-evaluation/program-failure/segmentation-fault")});
}

// A training script pasted into a report names DistributedSampler, torch.save, strategy.scope,
// model.compile and logging; none of that is a symptom by itself.
void TestClassifier::pastedCodeIsNotASymptom()
{
    const QByteArray code = readData(QStringLiteral("code-only-script.txt"));
    QVERIFY(!code.isEmpty());
    for (const Candidate& c : SymptomClassifier::instance().classify(code))
        QVERIFY2(c.score < 0.3, qPrintable(c.symptom));
}

// Sentences and lines we wrote for the cues and stage rules of how reports of today's frameworks
// are labelled: the first candidate of the ranked classification.
void TestClassifier::proseAndStageRules_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    // Lazy initialisation's meta tensors fail when the model is loaded or moved (HF, ZeRO-3,
    // FSDP2), not as a missing feature.
    QTest::addRow("meta-tensor-copy")
        << QByteArray("NotImplementedError: Cannot copy out of meta tensor; no data!\n")
        << QStringLiteral("data-and-model-preparation/model-loading-failure");
    // A TF worker waits for the chief to initialise the variables before its first step.
    QTest::addRow("tf-waiting-for-model")
        << QByteArray("INFO:tensorflow:Waiting for model to be ready.  Ready_for_local_init_op:  "
                      "Variables not initialized: global_step\n")
        << QStringLiteral("data-and-model-preparation/hang-and-timeout");
    QTest::addRow("log-lines-per-rank")
        << QByteArray("the launcher duplicates each log line across all 8 ranks\n")
        << QStringLiteral("data-and-model-preparation/logging-error");
    QTest::addRow("progress-once-per-rank")
        << QByteArray("every progress line is printed once per rank under torchrun\n")
        << QStringLiteral("data-and-model-preparation/logging-error");
    QTest::addRow("kvstore-create-stall")
        << QByteArray("the job stalls at mx.kvstore.create('horovod') and nothing happens\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    // An operation the backend or the device lacks is not implemented there (leaves.md).
    QTest::addRow("backend-lacks-op")
        << QByteArray("RuntimeError: ProcessGroupNCCL does not support gather\n")
        << QStringLiteral("training-and-evaluation/program-failure/not-implemented-error");
    QTest::addRow("tf-no-op-kernel")
        << QByteArray("NotFoundError: No registered 'PyFunc' OpKernel for CPU devices compatible "
                      "with node {{node PyFunc}}\n")
        << QStringLiteral("training-and-evaluation/program-failure/not-implemented-error");
    // The hardware error is what failed; the timeout is the other ranks waiting for it.
    QTest::addRow("ecc-then-timeout")
        << QByteArray("Training crash with uncorrectable ECC error and NCCL timeout\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error");
    QTest::addRow("grad-norm-explodes")
        << QByteArray("the gradient norm spikes on two nodes\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence");
    // Fewer points with the job spread out ("4-GPU", "distributed training") is convergence.
    QTest::addRow("map-drops-distributed")
        << QByteArray("The results drop to nearly 71 mAP when using distributed training (4-GPU)\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence");
    QTest::addRow("poor-throughput")
        << QByteArray("poor throughput with tensor parallel size 4 "
                      "on 8 GPUs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "low-efficiency");
    QTest::addRow("loss-changes-with")
        << QByteArray("the loss changes with the number of GPUs although the global batch is "
                      "fixed\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-intermediate-result");
    QTest::addRow("gradients-do-not-reach")
        << QByteArray("gradients do not reach the embedding layer when it is wrapped by FSDP\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-intermediate-result");
    QTest::addRow("load-state") << QByteArray("accelerator.load_state fails after resuming on 4 "
                                              "GPUs\n")
                                << QStringLiteral("training-and-evaluation/program-failure/"
                                                  "checkpoint-unfunctioning");
    QTest::addRow("never-started-training")
        << QByteArray("the 2-node job printed its arguments and then hung; it never started "
                      "training\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    QTest::addRow("nccl-init-hang") << QByteArray("all ranks hang at NCCL init with 8 H100s\n")
                                    << QStringLiteral("communication-setup/hang-and-timeout");
    QTest::addRow("ray-init-hang")
        << QByteArray("the GRPO script sometimes gets stuck at ray.init on a single node\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    QTest::addRow("freeze-base-form")
        << QByteArray("the training randomly freeze after a few hundred steps on 8 GPUs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("loss-keeps-increasing")
        << QByteArray("with 8 GPUs the loss keeps increasing from epoch 3 on\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence");
    QTest::addRow("training-collapsed")
        << QByteArray("the model collapsed after 20 epochs with 4 GPUs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence");
    QTest::addRow("only-runs-on-one-gpu")
        << QByteArray("four GPUs are visible but the trainer only runs on one GPU\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    QTest::addRow("no-overlap")
        << QByteArray("the gradient allreduce does not overlap with the backward pass under "
                      "ZeRO-2\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    QTest::addRow("speed-lower-than-single")
        << QByteArray("with multi_gpu_model on 2 GPUs the speed is up to 50% lower than with a "
                      "single GPU\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    // "After multi-GPU training the saved model is incomplete."
    QTest::addRow("model-save-zh") << QByteArray("多卡训练后模型保存不完整\n")
                                   << QStringLiteral("training-and-evaluation/program-failure/"
                                                     "checkpoint-unfunctioning");
    QTest::addRow("before-process-group")
        << QByteArray("the job is stuck before the process group is initialized on 16 GPUs\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    // An NCCL error raised inside DDP's constructor: the model is being prepared, not trained.
    QTest::addRow("ddp-constructor")
        << QByteArray("Traceback (most recent call last):\n"
                      "  File \"/opt/venv/lib/python3.10/site-packages/torch/nn/parallel/"
                      "distributed.py\", line 798, in __init__\n"
                      "    _verify_params_across_processes(self.process_group, parameters)\n"
                      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/"
                      "distributed/c10d/NCCLUtils.hpp:219, unhandled system error\n")
        << QStringLiteral("data-and-model-preparation/communication-error");
    // Two nodes, but the timed-out collective is the 1822nd: the run hung mid-training.
    QTest::addRow("midrun-watchdog-two-nodes")
        << QByteArray("Fine-tuning on two nodes stops after three hours\n"
                      "[rank5]:[E ProcessGroupNCCL.cpp:607] [Rank 5] Watchdog caught collective "
                      "operation timeout: WorkNCCL(SeqNum=1822, OpType=ALLREDUCE, NumelIn=1, "
                      "NumelOut=1, Timeout(ms)=600000) ran for 600021 milliseconds before timing "
                      "out.\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // The module named between "import" and the failure.
    QTest::addRow("import-module-fails")
        << QByteArray("import horovod.torch fails after building horovod with NCCL\n")
        << QStringLiteral("package-build-and-import/import-error");
    QTest::addRow("blocks-at-call")
        << QByteArray("every rank blocks at loss.backward() after 200 iterations\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("takes-a-long-time")
        << QByteArray("each epoch takes a very long time with 4 GPUs compared with one\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    QTest::addRow("timeline-empty")
        << QByteArray("the horovod timeline file is empty after the run\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-intermediate-result");
    QTest::addRow("gpus-to-ranks")
        << QByteArray("the example cannot map GPUs to MPI ranks with mpirun on one host\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error");
    QTest::addRow("world-size-gives")
        << QByteArray("hvd.size() gives 1 in every process under mpirun -np 4\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    // A hang before training starts is a set-up hang.
    QTest::addRow("never-starts-training")
        << QByteArray("the benchmark never starts training with two processes on one host\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    // Freezing layers is a way of training, not a hang.
    QTest::addRow("freezing-layers")
        << QByteArray("after freezing the encoder layers each step is twice as slow on 8 GPUs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    // The leaf's page lists an illegal memory access among the CUDA errors: a fault on the
    // device, not a host-memory problem.
    QTest::addRow("illegal-access")
        << QByteArray("the optimizer step crashes on both nodes with ZeRO-3\n"
                      "RuntimeError: CUDA error: an illegal memory access was encountered\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error");
    QTest::addRow("cannot-be-imported")
        << QByteArray("the fused optimizer cannot be imported on the worker nodes\n")
        << QStringLiteral("package-build-and-import/import-error");
    // A call that does not complete has not failed: it waits.
    QTest::addRow("does-not-complete")
        << QByteArray("the barrier at the end of the epoch does not complete on the second node\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("resume-optimizer-state")
        << QByteArray("resuming the optimizer state with FSDP on 4 GPUs raises a KeyError\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    // Throughput stated in model FLOPs or steps per second is a speed complaint.
    QTest::addRow("tflops-per-gpu")
        << QByteArray("the 8-node run reaches 95 TFLOP/s per GPU while a single node reaches "
                      "160\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    // An identifier names the checkpoint call: "_" joins it to words, so \b alone misses it.
    QTest::addRow("resume-from-checkpoint-argument")
        << QByteArray("trainer.train(resume_from_checkpoint=True) stops with a KeyError on two "
                      "nodes\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    // "hanging" (not only "hangs") before initialization is a start-up hang.
    QTest::addRow("hanging-when-initializing")
        << QByteArray("DDP training hanging when initializing.\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    // TensorFlow's master waits for a worker or parameter server that never connects.
    QTest::addRow("createsession-waiting")
        << QByteArray("the worker job never trains: I tensorflow/core/distributed_runtime/"
                      "master.cc:209] CreateSession still waiting for response from worker: "
                      "/job:ps/replica:0/task:0\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    QTest::addRow("tracker-run-per-process")
        << QByteArray("accelerate launch on 4 GPUs opens four wandb runs, one per process\n")
        << QStringLiteral("data-and-model-preparation/logging-error");
    // Chinese and Japanese reports write English words straight after their own characters.
    QTest::addRow("english-after-cjk")
        << QByteArray("多卡训练一段时间后报OOM错误\n")
        << QStringLiteral("training-and-evaluation/program-failure/out-of-memory");
    // What the reporter says did not happen is not the symptom (cues.json's "negation").
    QTest::addRow("halts-without-oom")
        << QByteArray("multi-GPU training halts forever without any OOM warnings\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("never-got-oom")
        << QByteArray("I never got an OOM, but with 4 GPUs the job sits forever at the first "
                      "step\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("tensor-dimension-not-divisible")
        << QByteArray("AssertionError: First dimension of the tensor should be divisible by "
                      "tensor parallel size\n")
        << QStringLiteral("training-and-evaluation/program-failure/tensor-mismatch");
    QTest::addRow("parameters-in-different-devices")
        << QByteArray("Error on multi-GPU fine-tuning: input and module parameters are in "
                      "different devices\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error");
    QTest::addRow("compiler-error-line")
        << QByteArray("Building with NCCL 2.3 stops here:\n"
                      "src/solver/parallel.cpp:11:25: error: 'NCCL_MAJOR' was not declared in "
                      "this scope\n")
        << QStringLiteral("package-build-and-import/installation-and-build-failure");
    QTest::addRow("seems-to-use-only-1-gpu")
        << QByteArray("I set --world_size 4 for train.py but the system seems to use only 1 gpu\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    QTest::addRow("utilisation-zero-except-the-first")
        << QByteArray("nvidia-smi shows 0% utilisation on all GPUs except the first one\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    QTest::addRow("training-never-starts")
        << QByteArray("single-node multi-gpu training never starts with the ddp strategy\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    QTest::addRow("prepare-model-stuck")
        << QByteArray("ray.train.torch.prepare_model stuck on a GPU cluster\n")
        << QStringLiteral("data-and-model-preparation/hang-and-timeout");
    // "多机" (several machines) is the setup stage's multi-node context, as "multi-node" is.
    QTest::addRow("zh-multi-machine-stuck")
        << QByteArray("多机训练时一直卡在第一个 step\n")
        << QStringLiteral("communication-setup/hang-and-timeout");
    QTest::addRow("gpu-utility-is-low")
        << QByteArray("When training on 4 GPUs my GPU utility is low, under 50% on average\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    QTest::addRow("gpu-dash-0-memory")
        << QByteArray("GPU-0 always takes large memory while the other GPUs take less\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device");
    QTest::addRow("processes-on-main-card")
        << QByteArray("with 4 cards there are several processes on the main card, one per rank\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device");
    QTest::addRow("weights-saved-incomplete")
        << QByteArray("with FSDP the weights saved after the second epoch are incomplete\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    QTest::addRow("stucks") << QByteArray("training stucks after the first epoch on 8 GPUs\n")
                            << QStringLiteral(
                                   "training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("segment-fault")
        << QByteArray("segment fault when the training script ends on 2 nodes\n")
        << QStringLiteral("training-and-evaluation/program-failure/segmentation-fault");
    QTest::addRow("could-not-compile")
        << QByteArray("could not compile the NCCL plugin for 8 GPUs\n")
        << QStringLiteral("package-build-and-import/installation-and-build-failure");
    QTest::addRow("cannot-build-graphs")
        << QByteArray("every worker needs a huge amount of host memory, so the machine cannot "
                      "build all the graphs in parallel\n")
        << QStringLiteral("training-and-evaluation/program-failure/memory-issue");
    QTest::addRow("accuracy-sacrificed")
        << QByteArray("accuracy sacrificed with multi-gpu training in gluon\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence");
    QTest::addRow("parameters-do-not-match")
        << QByteArray("parameters after DDP training on 2 GPUs do not match local training\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-intermediate-result");
    // When the run was when it stalled: steps that ran, hours of training, the backward pass.
    QTest::addRow("stuck-after-running-steps")
        << QByteArray("Job gets stuck when scaling to 16 nodes\n"
                      "With 8 nodes it works, but with 16 nodes it is stuck after running 5 "
                      "steps.\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("timeout-during-backward-after-hours")
        << QByteArray("NCCL timeout with ZeRO-3 on my custom dataset\n"
                      "faced an nccl timeout during backward after 1:30 hours of training\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // "一张卡在跑" is one card running, not "stuck at" (卡在).
    QTest::addRow("one-card-running-zh")
        << QByteArray("用4张卡训练，但是只有一张卡在跑，其他卡都是空闲\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    // A launcher's environment variable the job cannot find ("cannot find RANK_ID").
    QTest::addRow("rank-id-missing-zh") << QByteArray("yoloV8的八卡训练找不到RANK_ID\n")
                                        << QStringLiteral("communication-setup/setup-failure");
    QTest::addRow("only-single-gpu")
        << QByteArray("Multi-GPU training fails: the wrapper only supports single GPU training\n")
        << QStringLiteral("training-and-evaluation/program-failure/not-implemented-error");
    // A model the parallel engine was to split, replicated instead.
    QTest::addRow("model-not-split")
        << QByteArray("Tensor parallel with 4 GPUs: the per-GPU memory is the same\n"
                      "The engine did not split the model, it launches four identical models on "
                      "four gpus\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    QTest::addRow("model-not-split-zh")
        << QByteArray("ColossalAI Gemini 例子\n单卡和多卡并行显存占用没区别\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    // Every card gets the same data (同一份数据), trained over again.
    QTest::addRow("same-data-zh") << QByteArray("多卡训练\n每张卡拿到的是同一份数据，重复训练\n")
                                  << QStringLiteral("data-and-model-preparation/"
                                                    "data-partition-error");
    // An inference engine being built is the model's preparation, not training.
    QTest::addRow("engine-build-nccl")
        << QByteArray("Building a vLLM engine with tensor_parallel_size 2 fails with an NCCL "
                      "unhandled system error while a single-GPU engine starts fine.\n")
        << QStringLiteral("data-and-model-preparation/communication-error");
    // A checkpoint written means steps ran: a hang after it is training's, even across machines.
    QTest::addRow("hang-after-checkpoint")
        << QByteArray("Horovod hangs after saving the first checkpoint, on two machines\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // A save that writes less than the model is the checkpoint's failure.
    QTest::addRow("save-not-whole-model")
        << QByteArray("Training with ZeRO-3 does not save the whole model\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    QTest::addRow("dropped-when-saving")
        << QByteArray("FSDP dropped the norm layer of the model when saving it\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    // The loss stops falling (降不下去) after the switch to several cards: it does not converge.
    QTest::addRow("loss-plateau-zh") << QByteArray("改成多卡训练后损失下降到0.6就降不下去了\n")
                                     << QStringLiteral("training-and-evaluation/"
                                                       "unexpected-performance/non-convergence");
    // A sharding engine that leaves the whole model on every GPU did not parallelize it; a whole
    // model loaded into host memory first is not that.
    QTest::addRow("not-sharding-parameters")
        << QByteArray("FSDP not properly sharding model parameters across GPUs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    QTest::addRow("whole-model-per-gpu")
        << QByteArray("With ZeRO-3 each GPU loads the complete 14B model\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    // A reinforcement-learning job's second rollout batch comes after training steps ran.
    QTest::addRow("hang-second-rollout")
        << QByteArray(
               "PPO: the first rollout_batch finishes, then a WorkNCCL timeout in the second "
               "one\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // Early stopping acts between epochs: a hang it causes is training's.
    QTest::addRow("hang-early-stopping")
        << QByteArray("With the EarlyStopping callback every worker hangs waiting for the others\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // A named experiment tracker that fails, or splits one job into runs, is a logging error.
    QTest::addRow("tracker-fails")
        << QByteArray("TensorBoard logging does not work with 4 GPUs under DDP: the event file "
                      "stays empty\n")
        << QStringLiteral("data-and-model-preparation/logging-error");
    QTest::addRow("tracker-runs")
        << QByteArray("Multiple runs show up in the MLflow tracker for one job on 8 GPUs\n")
        << QStringLiteral("data-and-model-preparation/logging-error");
    // A log that shows nothing in a hang is not a logging error.
    QTest::addRow("hang-log-shows-nothing")
        << QByteArray("Training hangs after 100 steps and the log shows nothing\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // Each node trains on its own (各训各的): the nodes never formed one job.
    QTest::addRow("each-node-alone-zh")
        << QByteArray("accelerate 启动两机训练，每个节点各训各的\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/"
                          "unexpected-parallelization");
    // Loading data (加载数据) is preparation: a hang there is not yet training's.
    QTest::addRow("hang-loading-data-zh") << QByteArray("八卡训练，加载数据时卡住\n")
                                          << QStringLiteral("data-and-model-preparation/"
                                                            "hang-and-timeout");
    // A timeout (超时) at the third epoch, or while evaluating (评估), is training's hang.
    QTest::addRow("nccl-timeout-epoch-zh")
        << QByteArray("多卡训练到第3个epoch时NCCL超时\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QTest::addRow("timeout-evaluating-zh")
        << QByteArray("两卡分布式训练，评估阶段超时\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    // Hugging Face's shard-loading progress is the model being loaded: preparation.
    QTest::addRow("hang-after-checkpoint-shards")
        << QByteArray("8卡训练 Loading checkpoint shards 之后一直卡住\n")
        << QStringLiteral("data-and-model-preparation/hang-and-timeout");
    QTest::addRow("tensor-rank") << QByteArray("RuntimeError: 'weight' must be 2-D\n")
                                 << QStringLiteral(
                                        "training-and-evaluation/program-failure/tensor-mismatch");
}

// The environment templates of today's reports (PyTorch's collect_env, DeepSpeed's ds_report)
// name compilers, build tools and ops in every report; they are not package build context, a
// failing import or build is.
void TestClassifier::environmentTemplateIsNotPackageContext()
{
    const QString install =
        QStringLiteral("package-build-and-import/installation-and-build-failure");
    const auto packageHint = [&](const QByteArray& text) {
        return stageHints(text).value(install, -1.0);
    };
    const QByteArray environment = "Training hangs at the first step\n"
                                   "Is debug build: False\n"
                                   "CUDA used to build PyTorch: 11.8\n"
                                   "GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\n"
                                   "CMake version: version 3.27.7\n"
                                   "JIT compiled ops requires ninja\n"
                                   "ninja .................. [OKAY]\n"
                                   "nvcc version ..................... 11.8\n";
    QCOMPARE(packageHint(environment), 0.0);
    QVERIFY(packageHint(environment + "ImportError: libcudart.so.11.0: cannot open shared "
                                      "object file\n") >= 0.5);
}

// Markdown's bold markers do not hide a prose cue, and the evidence quotes the words without them.
void TestClassifier::markdownBoldIsReadThrough()
{
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(
        "DDP throughput question\nThe speed with 4 GPUs is 50% **LOWER** than with a single "
        "GPU\n");
    QCOMPARE(ranked.first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency"));
    bool slowCue = false;
    for (const CandidateEvidence& e : ranked.first().evidence)
        if (e.signature == QLatin1String("slow")) {
            slowCue = true;
            QCOMPARE(e.line, 2);
            QVERIFY2(!e.text.contains(QLatin1String("**")), qPrintable(e.text));
        }
    QVERIFY(slowCue);
}

// Stage context from what the job's commands carry: the hosts a launcher joins say how the job
// was set up, MASTER_ADDR and MASTER_PORT (in every launch line) do not say it failed at set-up.
void TestClassifier::commandsGiveOnlyTheSetupTheyDescribe()
{
    const auto setupHint = [](const QByteArray& text) {
        return stageHints(text).value(QStringLiteral("communication-setup/setup-failure"), -1.0);
    };
    const QByteArray complaint = "The loss is NaN on 8 GPUs\n```bash\n";
    const QByteArray single = "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 torchrun "
                              "--nproc_per_node 8 train.py\n```\n";
    const QByteArray twoNodes = "MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 torchrun "
                                "--nproc_per_node 8 --nnodes 2 train.py\n```\n";
    const double frameOnly = setupHint(complaint + "```\n");
    QVERIFY(frameOnly >= 0.0);
    QCOMPARE(setupHint(complaint + single), frameOnly);
    QVERIFY(setupHint(complaint + twoNodes) > frameOnly + 0.1);
    // The same words said by the reporter are set-up context.
    QVERIFY(setupHint("The loss is NaN on 8 GPUs after init_process_group with MASTER_ADDR\n") >
            frameOnly + 0.1);
}

// A log walks through every stage it passed: its "Loading dataset" lines are weaker stage context
// than the reporter saying the data was being loaded.
void TestClassifier::outputStageContextCountsLess()
{
    const auto prepHint = [](const QByteArray& text) {
        return stageHints(text).value(
            QStringLiteral("data-and-model-preparation/data-loading-failure"), -1.0);
    };
    const double inOutput = prepHint("Fine-tuning on 4 GPUs crashes\n```\n"
                                     "[INFO] Loading dataset alpaca.json...\n"
                                     "Segmentation fault (core dumped)\n```\n");
    const double inProse = prepHint("Fine-tuning on 4 GPUs crashes while loading the dataset\n"
                                    "Segmentation fault (core dumped)\n");
    const double none = prepHint("Fine-tuning on 4 GPUs crashes\n"
                                 "Segmentation fault (core dumped)\n");
    QVERIFY2(none < inOutput && inOutput < inProse,
             qPrintable(QStringLiteral("%1 %2 %3").arg(none).arg(inOutput).arg(inProse)));
}

void TestClassifier::proseAndStageRules()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(text);
    QVERIFY(ranked.size() >= 3);
    QCOMPARE(ranked.first().symptom, expected);
    QVERIFY(!ranked.first().evidence.isEmpty());
}

// The first collectives of a process group (SeqNum 1 to 5: DDP's parameter broadcast, a barrier
// after loading) run before any step: their timeout is not training's hang, a late one is.
void TestClassifier::earlyCollectiveTimeoutIsNotATrainingHang()
{
    const auto watchdog = [](int seq) {
        return QStringLiteral("YOLO DDP training killed by the NCCL watchdog\n[Rank 1] Watchdog "
                              "caught collective operation timeout: WorkNCCL(SeqNum=%1, "
                              "OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran "
                              "for 1800112 milliseconds before timing out.\n")
            .arg(seq)
            .toUtf8();
    };
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QCOMPARE(SymptomClassifier::instance().classify(watchdog(2480)).first().symptom, hang);
    const QString early = SymptomClassifier::instance().classify(watchdog(2)).first().symptom;
    QVERIFY2(early.endsWith(QLatin1String("/hang-and-timeout")), qPrintable(early));
}

// Three labelled reports, all training hangs, hold every word of a frozen job's report. On the
// group's second collective the line pins the preparation stage: the reports still say "a hang",
// and their whole vote goes to the preparation stage's hang, which lists them. On a late
// collective nothing is pinned and training's hang keeps the vote.
void TestClassifier::pinnedStageTakesTheVote()
{
    const QString hang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    const QString prepHang = QStringLiteral("data-and-model-preparation/hang-and-timeout");
    const QByteArray words = "broadcast froze job stuck watchdog";
    QByteArray tsv;
    for (int n = 1; n <= 3; ++n)
        tsv += hang.toUtf8() + "\thttps://github.com/o/r/issues/" + QByteArray::number(n) + "\t" +
               words + "\n";
    // A fourth report of other words, so that the shared words weigh something (idf > 0).
    tsv += "training-and-evaluation/program-failure/out-of-memory\thttps://github.com/o/r/issues/4"
           "\tallocate cuda memory\n";
    NeighbourModel neighbours;
    QString error;
    QVERIFY2(NeighbourModel::fromTsv(tsv, &neighbours, &error), qPrintable(error));
    const SymptomClassifier classifier(SignatureSet::builtin(),
                                       SymptomClassifier::instance().ranking(),
                                       SymptomClassifier::instance().terms(), neighbours);
    const auto shares = [&](int seq, const QByteArray& also = {}) {
        const QByteArray text =
            also +
            QStringLiteral("The job froze, stuck in a broadcast until the watchdog fired\n"
                           "[Rank 1] Watchdog caught collective operation timeout: "
                           "WorkNCCL(SeqNum=%1, OpType=BROADCAST, NumelIn=1, NumelOut=1, "
                           "Timeout(ms)=1800000) ran for 1800112 milliseconds before timing out.\n")
                .arg(seq)
                .toUtf8();
        SymptomClassifier::Options all;
        all.maxCandidates = 100;
        QMap<QString, Candidate> byLeaf;
        for (const Candidate& c : classifier.classify(text, all))
            byLeaf.insert(c.symptom, c);
        return byLeaf;
    };
    const QMap<QString, Candidate> early = shares(2);
    QCOMPARE(early.value(prepHang).neighbourShare, 1.0);
    QCOMPARE(early.value(prepHang).neighbours.size(), 3);
    QCOMPARE(early.value(hang).neighbourShare, 0.0);
    QVERIFY(early.value(hang).neighbours.isEmpty());
    const QMap<QString, Candidate> late = shares(2480);
    QCOMPARE(late.value(hang).neighbourShare, 1.0);
    QCOMPARE(late.value(prepHang).neighbourShare, 0.0);
    // A store timeout (0.9) beside the early watchdog line (0.85) pins the set-up stage more
    // strongly: its hang takes training's vote, and neither pinned leaf takes the other's.
    const QMap<QString, Candidate> both =
        shares(2, "RuntimeError: Timed out after 1801 seconds waiting for clients. 1/2 clients "
                  "joined.\n");
    const QString setupHang = QStringLiteral("communication-setup/hang-and-timeout");
    QVERIFY(both.value(setupHang).score > both.value(prepHang).score);
    QCOMPARE(both.value(setupHang).neighbourShare, 1.0);
    QCOMPARE(both.value(setupHang).neighbours.size(), 3);
    QCOMPARE(both.value(prepHang).neighbourShare, 0.0);
}

// "It only ran several steps", "after a few hundred steps": the steps ran, so a freeze is
// training's hang more than the set-up's.
void TestClassifier::stepsRunAreTrainingContext()
{
    for (const QByteArray& text : {QByteArray("all ranks freeze, the job only ran several steps\n"),
                                   QByteArray("all ranks freeze after a few hundred steps\n")}) {
        const QMap<QString, double> stage = stageHints(text);
        QVERIFY2(
            stage.value(QStringLiteral("training-and-evaluation/unexpected-performance/hang")) >
                stage.value(QStringLiteral("communication-setup/hang-and-timeout")),
            text.constData());
    }
}

// A logger's "step 120 loss 2.31507" (no colon) says training steps ran, as "loss: 2.3" does: the
// training leaves get the stage, the set-up and preparation hangs do not.
void TestClassifier::loggedLossIsTrainingContext()
{
    const QMap<QString, double> stage =
        stageHints("all 8 ranks freeze\n2024-05-01 10:00:01 [rank0] step 120 loss 2.31507\n"
                   "2024-05-01 10:00:02 [rank0] step 121 loss 2.29811\n");
    const double training = stage.value(QStringLiteral("training-and-evaluation/"
                                                       "unexpected-performance/hang"));
    QVERIFY(training > stage.value(QStringLiteral("communication-setup/hang-and-timeout")));
    QVERIFY(training > stage.value(QStringLiteral("data-and-model-preparation/hang-and-timeout")));
}

// A model's shards loading and activation checkpointing's warning are not checkpoint failures;
// a failing save is.
void TestClassifier::checkpointCueSkipsBenignLines()
{
    const QString checkpoint =
        QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    QCOMPARE(evidenceScore(checkpoint,
                           "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00, "
                           "1.52s/it]\n"),
             0.0);
    QCOMPARE(evidenceScore(checkpoint,
                           "/opt/venv/lib/python3.10/site-packages/torch/utils/checkpoint.py:"
                           "464: UserWarning: torch.utils.checkpoint: the use_reentrant "
                           "parameter should be passed explicitly.\n"),
             0.0);
    // A path or an identifier that holds the word is not the reporter saying it.
    QCOMPARE(evidenceScore(checkpoint, "    output_dir=model_save_path + \"-checkpoints\",\n"),
             0.0);
    QCOMPARE(evidenceScore(checkpoint, "the job writes to /data/checkpoints/run1 and then the "
                                       "all-reduce fails\n"),
             0.0);
    QVERIFY(evidenceScore(checkpoint, "saving a ZeRO-3 fine-tuned model sometimes fails\n") > 0.3);
}

// torch.compile (and Keras' model.compile) compile a model, not the package.
void TestClassifier::compileApiIsNotAPackageBuild()
{
    const QString install =
        QStringLiteral("package-build-and-import/installation-and-build-failure");
    QCOMPARE(evidenceScore(install, "torch.compile fails with tensor parallel on two ranks\n"),
             0.0);
    QVERIFY(evidenceScore(install, "the horovod build fails with NCCL 2.18\n") > 0.3);
}

// "Loading the dataset works, then training crashes": the failure the sentence reaches is not the
// data loading it says works.
void TestClassifier::dataLoadingCueSkipsWhatWorks()
{
    const QString loading = QStringLiteral("data-and-model-preparation/data-loading-failure");
    QCOMPARE(
        evidenceScore(loading, "Data loading works fine, but after 3 epochs the job crashes\n"),
        0.0);
    QCOMPARE(evidenceScore(loading, "Loading the dataset succeeded; the all-reduce then fails\n"),
             0.0);
    QVERIFY(evidenceScore(loading, "loading the dataset fails with an exception on rank 3\n") >
            0.3);
}

// Raw first posts, written by us in the shape of today's issue templates. `lines` joins them;
// the 1-based numbers of the lines that are not the reporter's words are known from how the
// text is built, not from the program.
namespace {

struct Report {
    QByteArray text;
    QSet<qsizetype> notProse; // 1-based line numbers of scaffolding, dumps and code
    qsizetype lines = 0;
    void add(const char* line, bool prose = true)
    {
        text += line;
        text += '\n';
        if (!prose) notProse.insert(lines + 1);
        ++lines;
    }
};

QList<Candidate> rankAll(const QByteArray& text)
{
    SymptomClassifier::Options all;
    all.maxCandidates = 38;
    return SymptomClassifier::instance().classify(text, all);
}

// The evidence lines of every candidate that fall on lines that are not the reporter's words.
QStringList evidenceOn(const QList<Candidate>& ranked, const QSet<qsizetype>& lines)
{
    QStringList out;
    for (const Candidate& c : ranked)
        for (const CandidateEvidence& e : c.evidence)
            if (lines.contains(e.line))
                out << QStringLiteral("%1 line %2 (%3)")
                           .arg(c.symptom)
                           .arg(e.line)
                           .arg(e.signature);
    return out;
}

} // namespace

void TestClassifier::reportLineKindsOfATemplate()
{
    using K = ReportLine;
    const QList<std::pair<QByteArray, K>> lines = {
        {"### Training is slow on two nodes", K::Prose}, // the title, whatever its markup
        {"", K::Prose},
        {"### System Info", K::Scaffold},
        {"- [x] My own modified scripts", K::Scaffold},
        {"<!-- Paste the output of the environment command below -->", K::Scaffold},
        {"```", K::Scaffold},
        {"PyTorch version: 2.3.0+cu121", K::Environment},
        {"Is debug build: False", K::Environment},
        {"GPU 0: NVIDIA H100 80GB HBM3", K::Environment},
        {"[pip3] torch==2.3.0", K::Environment},
        {"```", K::Scaffold},
        {"Each step takes 3 s with 16 ranks.", K::Prose},
        {"- OS: [e.g. Ubuntu 22.04]", K::Scaffold},
        {"NCCL_DEBUG=INFO torchrun --nnodes 2 --nproc-per-node 8 train.py \\", K::Command},
        {"    --config cfg.yaml", K::Command},
        {"accelerate launch --multi_gpu train.py `", K::Command}, // PowerShell goes on after "`"
        {"    --pretrained_model_name_or_path=$ckpt `", K::Command},
        {"    --save_every_n_epochs=1", K::Command},
        // A copied prompt and what was typed after it.
        {"root@node1:/work/bench# mpirun -np 2 -H 10.0.0.1:1,localhost:1 python train.py",
         K::Command},
        {"(venv) user@gpu-box:~/proj$ torchrun --nproc_per_node 4 train.py", K::Command},
        {"[user@login01 run]$ sbatch job.sh", K::Command},
        // A command quoted as inline code, and the options it goes on with.
        {"`deepspeed --module openrlhf.cli.train_ppo \\", K::Command},
        {"  --save_path ./checkpoint/llama-3-8b-rlhf \\", K::Command},
        {"  --save_steps -1`", K::Command},
        // Options after a head no launcher list names ("uv run ...") are still a command's.
        {"--save_path ./checkpoint/run1 \\", K::Command},
        {"  --micro_batch_size 2", K::Command},
        {"Contact: admin@example.com # not a prompt", K::Prose},
        {"```python", K::Scaffold},
        {"model = AutoModel.from_pretrained(path)", K::Code},
        {"# the second node waits here", K::Prose},
        {"Traceback (most recent call last):", K::Output},
        {"  File \"train.py\", line 12, in <module>", K::Output},
        {"    trainer.train()", K::Output},
        {"  File \"/opt/venv/lib/python3.10/site-packages/apex/__init__.py\", line 5, in <module>",
         K::Output},
        {"    from apex.parallel import DistributedDataParallel", K::Import},
        {"RuntimeError: NCCL communicator was aborted", K::Output},
        {"loss: 2.31 at step 10", K::Output},
        // Rich's boxed traceback: the source around the failing line is code, that line output.
        {"[rank0]: \xe2\x94\x82   1525 \xe2\x94\x82   # call before the peak memory usage "
         "increases",
         K::Code},
        {"[rank0]: \xe2\x94\x82 \xe2\x9d\xb1 1528 \xe2\x94\x82   if "
         "self.reducer._rebuild_buckets():",
         K::Output},
        {"```", K::Scaffold},
        {"```", K::Scaffold}, // a log's "|"-separated progress lines are output, not fields
        {"iteration 20/ 100 | consumed samples: 2560 | lm loss: 2.871E+00", K::Output},
        {"iteration 30/ 100 | consumed samples: 3840 | lm loss: NaN", K::Output},
        {"```", K::Scaffold},
        {"Versions:", K::Prose}, // a label alone is no dump
        {"It hangs: see below", K::Prose},
    };
    QByteArray text;
    for (const auto& [line, kind] : lines)
        text += line + '\n';
    const QList<qsizetype> starts = SignatureSet::lineStartsOf(text);
    const QList<ReportLine> kinds = reportLineKinds(text, starts, starts.size());
    QCOMPARE(kinds.size(), lines.size());
    for (qsizetype i = 0; i < lines.size(); ++i)
        QVERIFY2(kinds[i] == lines[i].second,
                 qPrintable(QStringLiteral("line %1 '%2': kind %3, expected %4")
                                .arg(i + 1)
                                .arg(QString::fromUtf8(lines[i].first))
                                .arg(int(kinds[i]))
                                .arg(int(lines[i].second))));
    // Only the lines before the limit are read.
    QCOMPARE(reportLineKinds(text, starts, 3).size(), 3);
}

// An `accelerate env` dump (system RAM, NCCL in the package list, a timeout in the config) under
// a report of a slow run: the dump is no evidence, the slow run leads.
void TestClassifier::acceleratePromptDumpIsNotEvidence()
{
    Report r;
    r.add("Multi-GPU run with accelerate is slow");
    r.add("");
    r.add("### System Info", false);
    r.add("```Shell", false);
    for (const char* line :
         {"- `Accelerate` version: 0.27.2", "- Platform: Linux-5.15.0-94-generic-x86_64",
          "- Python version: 3.10.12", "- PyTorch version (GPU?): 2.2.1+cu121 (True)",
          "- System RAM: 503.71 GB", "- GPU type: NVIDIA H100 80GB HBM3",
          "- `Accelerate` default config:", "\t- compute_environment: LOCAL_MACHINE",
          "\t- distributed_type: MULTI_GPU", "\t- num_machines: 2", "\t- nccl_timeout: 1800",
          "[pip3] nvidia-nccl-cu12==2.19.3", "```"})
        r.add(line, false);
    r.add("");
    r.add("### Reproduction", false);
    r.add("Each step takes 2.3 s on 16 GPUs and 0.6 s on one.");
    const QList<Candidate> ranked = rankAll(r.text);
    QCOMPARE(ranked.first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency"));
    const QStringList onDump = evidenceOn(ranked, r.notProse);
    QVERIFY2(onDump.isEmpty(), qPrintable(onDump.join(QLatin1String("; "))));
}

// A template's example placeholders ("[e.g. two nodes with 8 GPUs each]") and a ds_report under
// a hang in training: the placeholders do not make it a set-up hang, the dump is no evidence.
void TestClassifier::templatePlaceholdersAreNotTheSetup()
{
    Report r;
    r.add("ZeRO-3 fine-tuning hangs after the first optimizer step");
    r.add("");
    r.add("**Describe the bug**", false);
    r.add("All ranks hang after the first optimizer step; GPU utilisation drops to 0 %.");
    r.add("");
    r.add("**ds_report output**", false);
    for (const char* line :
         {"```", "async_io ............... [NO] ....... [OKAY]",
          "cpu_adam ............... [YES] ...... [OKAY]",
          "torch version .................... 2.2.0", "nvcc version ..................... 12.1",
          "shared memory (/dev/shm) size .... 64.00 GB", "```", "**System info:**",
          " - OS: [e.g. Ubuntu 22.04]", " - GPU count and types [e.g. two nodes with 8 GPUs each]",
          " - Interconnect [e.g. InfiniBand between the nodes]"})
        r.add(line, false);
    const QList<Candidate> ranked = rankAll(r.text);
    QCOMPARE(ranked.first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/hang"));
    const QStringList onTemplate = evidenceOn(ranked, r.notProse);
    QVERIFY2(onTemplate.isEmpty(), qPrintable(onTemplate.join(QLatin1String("; "))));
}

// A template's checklist asks about hangs, timeouts and NCCL errors in every report; the report
// is about accuracy.
void TestClassifier::checklistQuestionsAreNotSymptoms()
{
    Report r;
    r.add("Accuracy with 4 workers is lower than with one worker");
    r.add("");
    r.add("**Environment:**", false);
    for (const char* line :
         {"1. Framework: PyTorch", "2. Framework version: 2.1.0", "3. Horovod version: 0.28.1",
          "4. NCCL version: 2.18.3", "", "**Checklist:**",
          "1. Did you search issues for a hang or a timeout like this one? Yes",
          "2. Did you read the troubleshooting guide on NCCL errors? Yes", ""})
        r.add(line, false);
    r.add("**Bug report:**", false);
    r.add("After 10 epochs the validation accuracy is 71 % with 4 workers and 78 % with one.");
    const QList<Candidate> ranked = rankAll(r.text);
    QVERIFY(ranked.first().symptom !=
            QLatin1String("training-and-evaluation/unexpected-performance/hang"));
    const QStringList onChecklist = evidenceOn(ranked, r.notProse);
    QVERIFY2(onChecklist.isEmpty(), qPrintable(onChecklist.join(QLatin1String("; "))));
}

// Every reproduction script loads a pretrained model and builds a trainer; that code does not
// put a slow training run in the model preparation stage.
void TestClassifier::reproductionCodeIsNotTheStage()
{
    Report r;
    r.add("Trainer with accelerate is slower on 8 GPUs than on 1");
    r.add("");
    r.add("### Reproduction", false);
    for (const char* line :
         {"```python", "model = AutoModelForCausalLM.from_pretrained(\"gpt2\")",
          "args = TrainingArguments(output_dir=\"out\", per_device_train_batch_size=8)",
          "trainer = Trainer(model=model, args=args, train_dataset=ds)", "trainer.train()", "```"})
        r.add(line, false);
    r.add("");
    r.add("### Expected behavior", false);
    r.add("8 GPUs should give close to 8x the samples/s of one GPU, but throughput is the same.");
    const QList<Candidate> ranked = rankAll(r.text);
    QCOMPARE(ranked.first().symptom,
             QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency"));
    const QStringList onCode = evidenceOn(ranked, r.notProse);
    QVERIFY2(onCode.isEmpty(), qPrintable(onCode.join(QLatin1String("; "))));
}

static QJsonObject builtinCues()
{
    QFile f(QStringLiteral(":/taxonomy/cues.json"));
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object()
                                       : QJsonObject();
}

// Whether frame cue `cue` (an index into set.frames()) reads `line`, through the whole scan path.
static bool frameCueReads(const SignatureSet& set, int cue, QByteArrayView line)
{
    for (const ContextHit& h : set.scanContext(line, {}, set.frames()))
        if (h.cue == cue) return true;
    return false;
}

// Every frame cue reads its example of what a reporter did or saw through the whole scan path
// (literal prefilter, advice removal, regex) and not its counter-example; every frame names
// leaves of the taxonomy.
void TestClassifier::frameCuesMatchTheirExamples()
{
    const SignatureSet& set = SignatureSet::builtin();
    const QJsonArray frames = builtinCues().value(QLatin1String("frames")).toArray();
    QVERIFY(!frames.isEmpty());
    QCOMPARE(set.frames().size(), frames.size());
    const QStringList leaves = Taxonomy::instance().leaves();
    for (int i = 0; i < frames.size(); ++i) {
        const QJsonObject o = frames[i].toObject();
        const ContextCue& cue = set.frames()[i];
        QCOMPARE(cue.id, o.value(QLatin1String("id")).toString());
        const QString positive = o.value(QLatin1String("positive")).toString();
        const QString negative = o.value(QLatin1String("negative")).toString();
        QVERIFY2(!positive.isEmpty() && !negative.isEmpty(), qPrintable(cue.id));
        QVERIFY2(frameCueReads(set, i, positive.toUtf8()),
                 qPrintable(cue.id + QStringLiteral(": ") + positive));
        QVERIFY2(!frameCueReads(set, i, negative.toUtf8()),
                 qPrintable(cue.id + QStringLiteral(": ") + negative));
        // A cue that reads negation skips its "negated" example because of the negation alone:
        // its pattern matches the line.
        const QString negated = o.value(QLatin1String("negated")).toString();
        QCOMPARE(cue.readsNegation, !negated.isEmpty());
        if (cue.readsNegation) {
            QVERIFY2(cue.regex.match(negated).hasMatch(), qPrintable(negated));
            QVERIFY2(!frameCueReads(set, i, negated.toUtf8()),
                     qPrintable(cue.id + QStringLiteral(": ") + negated));
        }
        QVERIFY2(!set.frameLeaves(cue.target).isEmpty(), qPrintable(cue.target));
        for (const QString& leaf : set.frameLeaves(cue.target))
            QVERIFY2(leaves.contains(leaf), qPrintable(leaf));
    }
}

// What a frame cue reads on one line, beyond the one example pair of each cue: sentences we
// wrote.
void TestClassifier::frameCuesOnLines_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("cue");
    QTest::addColumn<bool>("hit");
    QTest::addRow("freeze-base-form")
        << QByteArray("Freeze on infiniband with two nodes") << QStringLiteral("saw-hang") << true;
    QTest::addRow("pip-freeze") << QByteArray("Output of pip freeze:") << QStringLiteral("saw-hang")
                                << false;
    QTest::addRow("should-in-prose") << QByteArray("the loss should be lower with 8 GPUs")
                                     << QStringLiteral("saw-not-as-expected") << true;
    // An exception's message says what the program expected, not what the reporter saw.
    QTest::addRow("should-in-an-exception")
        << QByteArray("**Error:** ValueError: All layer names should be unique.")
        << QStringLiteral("saw-not-as-expected") << false;
    QTest::addRow("expected-in-an-exception")
        << QByteArray("RuntimeError: expected scalar type Half but found Float")
        << QStringLiteral("saw-not-as-expected") << false;
    QTest::addRow("cannot-reproduce-results")
        << QByteArray("I cannot reproduce the paper's accuracy with 8 GPUs")
        << QStringLiteral("saw-wrong-values") << true;
    QTest::addRow("not-reproducible") << QByteArray("the runs are not reproducible across nodes")
                                      << QStringLiteral("saw-wrong-values") << true;
    // Reproducing a bug is not reproducing a result.
    QTest::addRow("steps-to-reproduce") << QByteArray("Reproduce issue: run train.py on two GPUs")
                                        << QStringLiteral("saw-wrong-values") << false;
    QTest::addRow("loss-is-zero") << QByteArray("the loss is 0 from the first step on 2 nodes")
                                  << QStringLiteral("saw-wrong-values") << true;
    QTest::addRow("loss-is-zero-zh")
        << QByteArray("单机多卡训练 loss 一直为 0") << QStringLiteral("saw-wrong-values") << true;
    QTest::addRow("loss-value") << QByteArray("step 10: loss: 0.345, lr 1e-4")
                                << QStringLiteral("saw-wrong-values") << false;
    QTest::addRow("loss-scale-zero")
        << QByteArray("loss_scale: 0") << QStringLiteral("saw-wrong-values") << false;
    QTest::addRow("grad-norm-zero")
        << QByteArray("grad_norm: 0.0 on every rank") << QStringLiteral("saw-wrong-values") << true;
    QTest::addRow("abnormal-loss") << QByteArray("with bf16 on 8 GPUs there is an abnormal loss")
                                   << QStringLiteral("saw-wrong-values") << true;
    QTest::addRow("during-checkpointing")
        << QByteArray("the train loop crashes during checkpointing on 2 GPUs")
        << QStringLiteral("did-checkpoint") << true;
    QTest::addRow("gradient-checkpointing")
        << QByteArray("OOM on 8 GPUs even with gradient checkpointing")
        << QStringLiteral("did-checkpoint") << false;
    QTest::addRow("prefixed-state-dict")
        << QByteArray("set_model_state_dict fails with an AssertionError")
        << QStringLiteral("did-checkpoint") << true;
}

void TestClassifier::frameCuesOnLines()
{
    QFETCH(QByteArray, line);
    QFETCH(QString, cue);
    QFETCH(bool, hit);
    const SignatureSet& set = SignatureSet::builtin();
    int index = 0;
    while (index < set.frames().size() && set.frames()[index].id != cue)
        ++index;
    QVERIFY2(index < set.frames().size(), qPrintable(cue));
    QCOMPARE(frameCueReads(set, index, line), hit);
}

// Megatron and GPT-NeoX print a count of NaN iterations on every step: "number of nan
// iterations: 0" is a healthy run's log, not a NaN.
void TestClassifier::nanCounterIsNoNan()
{
    const QByteArray text =
        "Training from the converted weights\n```\n"
        "iteration 1/ 100 | lm_loss: 2.275809E+00 | number of skipped iterations: 0 | number of "
        "nan iterations: 0 |\n```\n";
    for (const Candidate& c : SymptomClassifier::instance().classify(text))
        for (const CandidateEvidence& e : c.evidence)
            QVERIFY2(e.signature != QLatin1String("nan"), qPrintable(e.text));
    // A NaN the reporter names beside an iteration count still is one.
    const QByteArray nan = "Training from the converted weights\n"
                           "some activations become NaN on rank 3 after 200 iterations\n";
    bool seen = false;
    for (const Candidate& c : SymptomClassifier::instance().classify(nan))
        for (const CandidateEvidence& e : c.evidence)
            seen = seen || e.signature == QLatin1String("nan");
    QVERIFY(seen);
}

// A leaf's context hint is its stage's confidence plus the noisy-or of the frames it fits, each
// frame cue counted once however many lines repeat it. Computed here from the cue data.
void TestClassifier::contextHintIsStagePlusFrames()
{
    QHash<QString, double> weight; // frame cue id -> weight
    QHash<QString, QString> frameOf;
    for (const QJsonValue& v : builtinCues().value(QLatin1String("frames")).toArray()) {
        const QJsonObject o = v.toObject();
        weight[o.value(QLatin1String("id")).toString()] =
            o.value(QLatin1String("weight")).toDouble();
        frameOf[o.value(QLatin1String("id")).toString()] =
            o.value(QLatin1String("frame")).toString();
    }
    const QJsonObject frameLeaves = builtinCues().value(QLatin1String("frame_leaves")).toObject();
    const auto inFrame = [&](const QString& cue, const QString& leaf) {
        return frameLeaves.value(frameOf.value(cue)).toArray().contains(leaf);
    };
    SymptomClassifier::Options all;
    all.maxCandidates = 38;
    // A hang while saving, said twice: the saw-hang and did-checkpoint cues, no stage cue.
    const QByteArray text = "model.save hangs on the second worker\n"
                            "and model.save hangs again when we retry\n";
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(text, all);
    QCOMPARE(ranked.size(), Taxonomy::instance().leaves().size());
    for (const Candidate& c : ranked) {
        double miss = 1.0;
        QStringList shown; // the frame cues whose line the candidate shows
        for (const QString& cue : {QStringLiteral("saw-hang"), QStringLiteral("did-checkpoint")})
            if (inFrame(cue, c.symptom)) {
                miss *= 1.0 - weight.value(cue);
                shown << cue;
            }
        QVERIFY2(qAbs(c.stageHint - (1.0 - miss)) < 1e-12, qPrintable(c.symptom));
        // Each frame cue's first line is shown on the leaves it fits, and only there.
        for (const CandidateEvidence& e : c.evidence)
            if (weight.contains(e.signature)) {
                QVERIFY2(shown.removeOne(e.signature), qPrintable(c.symptom + e.signature));
                QCOMPARE(e.line, 1);
            }
        QVERIFY2(shown.isEmpty(), qPrintable(c.symptom));
    }
    // The same hang "at startup" (the set-up stage cue "setup") adds that cue's weight to every
    // set-up leaf, on top of the frames.
    double setupWeight = 0.0;
    for (const QJsonValue& v : builtinCues().value(QLatin1String("stages")).toArray())
        if (v[QLatin1String("id")].toString() == QLatin1String("setup"))
            setupWeight = v[QLatin1String("weight")].toDouble();
    QVERIFY(setupWeight > 0.0);
    const QString setupHang = QStringLiteral("communication-setup/hang-and-timeout");
    QVERIFY(inFrame(QStringLiteral("saw-hang"), setupHang));
    for (const Candidate& c : SymptomClassifier::instance().classify(
             "model.save hangs at startup on the second worker\n", all)) {
        double miss = 1.0;
        for (const QString& cue : {QStringLiteral("saw-hang"), QStringLiteral("did-checkpoint")})
            if (inFrame(cue, c.symptom)) miss *= 1.0 - weight.value(cue);
        const double stage =
            c.symptom.startsWith(QLatin1String("communication-setup/")) ? setupWeight : 0.0;
        QVERIFY2(qAbs(c.stageHint - (stage + 1.0 - miss)) < 1e-12, qPrintable(c.symptom));
    }
}

// The environment templates and progress logs pasted into reports (DeepSpeed's ds_report,
// PyTorch's collect_env, Megatron's iteration lines and launch arguments, a model's shards
// loading) print paths, JIT notes, timings and checkpoint options in every report: they say
// nothing about what the reporter did or saw.
void TestClassifier::environmentTemplateStatesNoFrame()
{
    const QByteArray pasted =
        "DeepSpeed C++/CUDA extension op report\n"
        "NOTE: Ops not installed will be just-in-time (JIT) compiled at runtime if needed.\n"
        "fused_adam ............. [NO] ....... [OKAY]\n"
        "torch install path ............... ['/opt/conda/lib/python3.11/site-packages/torch']\n"
        "deepspeed install path ........... ['/opt/conda/lib/python3.11/site-packages/deepspeed']\n"
        "Is debug build: False\n"
        "CUDA used to build PyTorch: 12.4\n"
        "Python platform: Linux-5.15.0-x86_64-with-glibc2.35\n"
        " iteration      120/  500000 | consumed samples:        15360 | elapsed time per "
        "iteration (ms): 1834.2 | learning rate: 2.999E-04 |\n"
        "torchrun --nproc_per_node 8 pretrain_gpt.py --save /data/gpt/ckpt --load "
        "/data/gpt/ckpt --save-interval 1000\n"
        "Loading checkpoint shards: 100%|##########| 4/4 [00:09<00:00,  2.31s/it]\n";
    const QStringList frames = {QStringLiteral("did-environment"), QStringLiteral("did-graph"),
                                QStringLiteral("saw-slow"), QStringLiteral("did-checkpoint")};
    for (const ContextHit& h :
         SignatureSet::builtin().scanContext(pasted, {}, SignatureSet::builtin().frames()))
        QVERIFY2(!frames.contains(SignatureSet::builtin().frames()[h.cue].id),
                 qPrintable(SignatureSet::builtin().frames()[h.cue].id));
    // The same frames do read a reporter's sentence.
    for (const QByteArray& said :
         {QByteArray("LD_LIBRARY_PATH is not exported to the remote ranks\n"),
          QByteArray("the step runs inside tf.function and fails\n"),
          QByteArray("the iteration time doubles with a second node\n"),
          QByteArray("the ckpt we wrote cannot be read back\n")}) {
        bool found = false;
        for (const ContextHit& h :
             SignatureSet::builtin().scanContext(said, {}, SignatureSet::builtin().frames()))
            found = found || frames.contains(SignatureSet::builtin().frames()[h.cue].id);
        QVERIFY2(found, said.constData());
    }
}

// Sentences we wrote with no error line, where the old ranker knew no cue and fell back to the
// study's most common leaves: the stage and the complaint they state bring the leaf a labeller
// would give into the first three.
// A traceback through Python's import machinery names frozen modules ("<frozen
// importlib._bootstrap>"); nothing froze, and the failure happened while importing.
void TestClassifier::importFramesAreNotAHang()
{
    const QByteArray text =
        "Launching the trainer fails right away on every rank\n"
        "```\n"
        "Traceback (most recent call last):\n"
        "  File \"train.py\", line 4, in <module>\n"
        "    import trainer_lib\n"
        "  File \"<frozen importlib._bootstrap>\", line 1027, in _find_and_load\n"
        "  File \"<frozen importlib._bootstrap_external>\", line 883, in "
        "exec_module\n"
        "  File \"/opt/lib/trainer_lib/__init__.py\", line 9, in <module>\n"
        "    mp.set_start_method(\"spawn\")\n"
        "```\n";
    SymptomClassifier::Options all;
    all.maxCandidates = 38;
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(text, all);
    QVERIFY(ranked.size() >= 3);
    for (const Candidate& c : ranked) {
        if (c.symptom.endsWith(QLatin1String("/hang")) ||
            c.symptom.endsWith(QLatin1String("/hang-and-timeout")))
            QCOMPARE(c.score, 0.0);
        if (c.symptom == QLatin1String("package-build-and-import/import-error"))
            QVERIFY(c.stageHint >= 0.4);
    }
    QVERIFY(!ranked.first().symptom.contains(QLatin1String("hang")));
}

void TestClassifier::weakEvidenceTopThreeFollowsTheComplaint_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QTest::addRow("memory-on-rank0")
        << QByteArray("rank 0 holds far more memory than the other ranks once ZeRO-2 is on\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device");
    QTest::addRow("stall-reading-shards")
        << QByteArray("the workers stall while the dataset shards are being read\n")
        << QStringLiteral("data-and-model-preparation/hang-and-timeout");
    QTest::addRow("resumed-loss-higher")
        << QByteArray("resuming from the weights we wrote at step 5000 gives a loss twice as "
                      "high\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning");
    QTest::addRow("throughput-halves")
        << QByteArray("the throughput per GPU halves when we go from one node to four\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    QTest::addRow("bf16-loss-far")
        << QByteArray("the bf16 run ends with a loss far from the fp32 run\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-intermediate-result");
    QTest::addRow("embeddings-not-identical")
        << QByteArray("rank 3 returns embeddings that are not identical to those of rank 0\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-parallelization");
}

void TestClassifier::weakEvidenceTopThreeFollowsTheComplaint()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(text);
    QVERIFY(ranked.size() >= 3);
    QStringList top3;
    for (int i = 0; i < 3; ++i)
        top3 << ranked[i].symptom;
    QVERIFY2(top3.contains(expected), qPrintable(top3.join(QStringLiteral(", "))));
}

// A report with no error line states its complaint in words: how the run is slower, stuck or
// wrong, in English or Chinese (frameworks' issue trackers get both). The complaint's leaf leads
// (or, where the words fit several leaves, is in the top three) on the reporter's sentence alone.
void TestClassifier::complaintInTheReportersWords_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("within"); // the rank the expected leaf must reach
    QTest::addRow("longer-than-one-node")
        << QByteArray("The step time on two nodes is much longer than on a single node\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency") << 1;
    QTest::addRow("idle-gpu")
        << QByteArray("One of the eight GPUs stays idle for the whole backward pass\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency") << 1;
    QTest::addRow("zh-slower")
        << QByteArray("四卡训练的速度比单卡还慢\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency") << 1;
    QTest::addRow("zh-stuck-first-step")
        << QByteArray("单机多卡训练时一直卡在第一个 step\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang") << 1;
    QTest::addRow("zh-accuracy-drops")
        << QByteArray("换成四张卡以后准确率下降了一半\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence") << 1;
    QTest::addRow("accuracy-is-low")
        << QByteArray("With four GPUs the validation accuracy is 12% where one GPU reaches 70%\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence") << 3;
    QTest::addRow("memory-increases-slowly")
        << QByteArray("GPU memory increases slowly during training with ZeRO-2\n")
        << QStringLiteral("training-and-evaluation/program-failure/memory-issue") << 1;
    // The multi-node cue and "second" (the harvests' set-up failures on a second node) put a
    // set-up failure first since the terms of 2026-12-06 (raw posts through the 21st harvest);
    // the illegal access keeps the device error right behind it.
    QTest::addRow("illegal-memory-access")
        << QByteArray("An illegal memory access is reported as soon as the second node joins\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error") << 2;
    QTest::addRow("nothing-is-output")
        << QByteArray("With two servers nothing is output after the launcher starts\n")
        << QStringLiteral("communication-setup/hang-and-timeout") << 1;
    QTest::addRow("restart-broken")
        << QByteArray("Restarting the training from step 200 is broken with 4 GPUs\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning") << 1;
    QTest::addRow("loss-differences")
        << QByteArray("Loss differences between one GPU and tensor parallel size 2\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-intermediate-result")
        << 3;
    QTest::addRow("every-process-gpu0")
        << QByteArray("Every process allocates memory of GPU 0 under DDP\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device") << 1;
    QTest::addRow("utilization-is-low")
        << QByteArray("The GPU utilization is very low when we fine-tune on two machines\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency") << 1;
    // A model that ends worse on more GPUs did not converge as it should; values that merely
    // differ are another leaf.
    QTest::addRow("accuracy-lower-than")
        << QByteArray("On four GPUs the accuracy of the model is much lower than on one GPU after "
                      "the same epochs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence") << 1;
    QTest::addRow("zh-quality-worse")
        << QByteArray("用八张卡训练后效果明显变差\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence") << 1;
    // A title names the exception a cut traceback ends with, or the failure in words.
    QTest::addRow("title-names-exception")
        << QByteArray("NotImplementedError with the parameter server strategy on two workers\n")
        << QStringLiteral("training-and-evaluation/program-failure/not-implemented-error") << 1;
    // The multi-node cue and the learned terms ("second" node, "every" rank: words of set-up
    // failures in the harvests) put a multi-node set-up failure first here; the exception the
    // title names must stay right behind it.
    QTest::addRow("title-names-file-exception")
        << QByteArray("FileNotFoundError on the second node when every rank reads its shard\n")
        << QStringLiteral("training-and-evaluation/program-failure/path-error") << 2;
    QTest::addRow("cannot-find-gpus")
        << QByteArray("Keras cannot find the GPUs when the model is replicated on 4 devices\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error") << 1;
    // Every rank reading the same samples is a partition error, not an iterator's.
    QTest::addRow("duplicate-batches")
        << QByteArray("The dataloader yields duplicate batches on every rank with ZeRO-2\n")
        << QStringLiteral("data-and-model-preparation/data-partition-error") << 1;
    QTest::addRow("missing-sampler")
        << QByteArray("Missing sampler when the job runs on four GPUs with DDP\n")
        << QStringLiteral("data-and-model-preparation/data-partition-error") << 1;
    QTest::addRow("same-batch-size-is-no-partition")
        << QByteArray("With the same batch size the loss on 4 GPUs differs from 1 GPU\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-intermediate-result")
        << 1;
    QTest::addRow("training-restart-broken")
        << QByteArray("With torchrun the training restart is broken on 4 GPUs\n")
        << QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning") << 1;
    QTest::addRow("different-validation-loss")
        << QByteArray("Different validation loss with one node versus two nodes\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-intermediate-result")
        << 1;
    QTest::addRow("wrongly-computes-metrics")
        << QByteArray("The evaluate helper wrongly computes the metrics on 8 processes\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-intermediate-result")
        << 1;
    QTest::addRow("poor-allreduce-performance")
        << QByteArray("Poor NCCL allreduce performance between two hosts\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency") << 1;
    QTest::addRow("cuda-not-available")
        << QByteArray("cuda.is_available() is False on every rank under accelerate launch\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error") << 1;
    QTest::addRow("cuda-errors")
        << QByteArray("Restoring from the last step leads to CUDA errors on the second GPU\n")
        << QStringLiteral("training-and-evaluation/program-failure/device-error") << 1;
    QTest::addRow("garbage-results")
        << QByteArray("all_gather on 4 ranks produces garbage results\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-intermediate-result")
        << 1;
    QTest::addRow("command-not-found")
        << QByteArray("horovodrun: command not found on the second host\n")
        << QStringLiteral("training-and-evaluation/program-failure/path-error") << 1;
    // Where a hang happened: with no output at all, at the set-up, while connecting, the job
    // never got past the set-up; a hang after epochs stays a training hang.
    QTest::addRow("setup-gets-stuck")
        << QByteArray("The multi-GPU setup gets stuck with accelerate while torchrun works\n")
        << QStringLiteral("communication-setup/hang-and-timeout") << 1;
    QTest::addRow("hang-no-output") << QByteArray("mpirun hangs with no error and no output\n")
                                    << QStringLiteral("communication-setup/hang-and-timeout") << 1;
    QTest::addRow("hang-connecting")
        << QByteArray("The job hangs when connecting with gRPC to the other worker\n")
        << QStringLiteral("communication-setup/hang-and-timeout") << 1;
    QTest::addRow("stuck-converting-to-fsdp")
        << QByteArray("The job is stuck while converting the model to FSDP on 16 GPUs\n")
        << QStringLiteral("data-and-model-preparation/hang-and-timeout") << 1;
    QTest::addRow("hang-when-training")
        << QByteArray("FSDP hanging when training with the mixed dataset\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang") << 1;
    QTest::addRow("hang-after-epochs")
        << QByteArray("After 3 epochs the training hangs with no output\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/hang") << 1;
    // Devices left out or shared, told in words with no error line.
    QTest::addRow("all-processes-on-first-gpu")
        << QByteArray("nvidia-smi shows all eight processes on GPU 0 while the other cards stay "
                      "empty\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device") << 1;
    QTest::addRow("gpus-not-used")
        << QByteArray("After switching to the mirrored strategy the job does not use the GPUs\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/unexpected-device") << 1;
    QTest::addRow("whole-dataset-per-gpu")
        << QByteArray("Each GPU trains on the whole dataset instead of its share of it\n")
        << QStringLiteral(
               "training-and-evaluation/unexpected-performance/unexpected-parallelization")
        << 1;
    // A model that ends worse as workers are added did not converge as it should.
    QTest::addRow("accuracy-drops-with-more-gpus")
        << QByteArray("The final accuracy drops as more GPUs are added to the job\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence") << 1;
    // "Slowly" also reads as a slow job: the loss that falls slowly must follow it closely.
    QTest::addRow("loss-falls-more-slowly")
        << QByteArray("On eight GPUs the training loss falls much more slowly than on one\n")
        << QStringLiteral("training-and-evaluation/unexpected-performance/non-convergence") << 2;
    // Building the replicated model fails before the first step: the preparation's compile leaf.
    QTest::addRow("parallel-model-fails")
        << QByteArray("multi_gpu_model fails on two GPUs with the segmentation network\n")
        << QStringLiteral("data-and-model-preparation/compile-model-error") << 1;
    // An ordinary exception in the training code, no communication named: the catch-all leaf.
    QTest::addRow("plain-exception-in-training")
        << QByteArray("The evaluation step raises a KeyError for the metric name on 4 workers\n")
        << QStringLiteral("training-and-evaluation/program-failure/others") << 1;
}

// Where an exception is raised decides between a communication error and the catch-all leaf:
// the same RuntimeError is a communication error when a frame of the traceback is a collective
// of a communication library, and an ordinary failure when the frames are the model's code.
void TestClassifier::exceptionLocusSeparatesCommunicationFromOthers()
{
    const QByteArray head = "Training crashes in the second epoch on 4 GPUs\n"
                            "\n"
                            "```\n"
                            "Traceback (most recent call last):\n"
                            "  File \"train.py\", line 88, in <module>\n"
                            "    main()\n";
    const QByteArray inCollective =
        head + "  File \"train.py\", line 61, in main\n"
               "    dist.all_reduce(loss)\n"
               "  File \"/opt/py/site-packages/torch/distributed/c10d_logger.py\", line 47, in "
               "wrapper\n"
               "    return func(*args, **kwargs)\n"
               "  File \"/opt/py/site-packages/torch/distributed/distributed_c10d.py\", line "
               "2050, in all_reduce\n"
               "    work = group.allreduce([tensor], opts)\n"
               "RuntimeError: the input has an unexpected layout\n"
               "```\n";
    const QByteArray inModel = head + "  File \"train.py\", line 58, in main\n"
                                      "    out = model(batch)\n"
                                      "  File \"/home/me/net/heads.py\", line 31, in forward\n"
                                      "    scores = self.table[key]\n"
                                      "RuntimeError: the input has an unexpected layout\n"
                                      "```\n";
    const QString communication =
        QStringLiteral("training-and-evaluation/program-failure/communication-error");
    const QString others = QLatin1String(SymptomClassifier::kUncaughtExceptionLeaf);
    const QList<Candidate> collective = rankAll(inCollective);
    QCOMPARE(collective.first().symptom, communication);
    QVERIFY(!collective.first().evidence.isEmpty());
    const QList<Candidate> model = rankAll(inModel);
    QCOMPARE(model.first().symptom, others);
    for (const Candidate& c : model)
        if (c.symptom == communication) QVERIFY(c.probability < model.first().probability / 2);
}

// An exception raised while Keras builds the replicas of a model (a frame of multi_gpu_model) is
// the preparation stage's compile error, whatever the exception's type names.
void TestClassifier::replicatedModelBuildIsACompileError()
{
    const QByteArray text =
        "Using two GPUs with the segmentation model\n"
        "\n"
        "```\n"
        "Traceback (most recent call last):\n"
        "  File \"train.py\", line 40, in <module>\n"
        "    model = multi_gpu_model(model, gpus=2)\n"
        "  File \"/usr/lib/python3.6/site-packages/keras/utils/multi_gpu_utils.py\", line 200, in "
        "multi_gpu_model\n"
        "    outputs = model(inputs)\n"
        "  File \"/usr/lib/python3.6/site-packages/keras/engine/base_layer.py\", line 457, in "
        "__call__\n"
        "    output = self.call(inputs, **kwargs)\n"
        "ZeroDivisionError: division by zero\n"
        "```\n";
    const QList<Candidate> ranked = rankAll(text);
    QCOMPARE(ranked.first().symptom,
             QStringLiteral("data-and-model-preparation/compile-model-error"));
    QCOMPARE(ranked.first().evidence.first().line, 7);
}

void TestClassifier::complaintInTheReportersWords()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    QFETCH(int, within);
    const QList<Candidate> ranked = SymptomClassifier::instance().classify(text);
    QVERIFY(ranked.size() >= 3);
    QStringList top;
    for (int i = 0; i < within; ++i)
        top << ranked[i].symptom;
    QVERIFY2(top.contains(expected),
             qPrintable(ranked[0].symptom + QLatin1String(", ") + ranked[1].symptom +
                        QLatin1String(", ") + ranked[2].symptom));
    // The leaf's evidence shows the words it was ranked by.
    for (const Candidate& c : ranked)
        if (c.symptom == expected) QVERIFY(!c.evidence.isEmpty());
}

// A traceback whose frames quote import statements failed while importing: the package stage's
// leaves rank high, and the module names it imports ("datasets", "Iterator") are no prose cue.
void TestClassifier::tracebackThroughImportsIsThePackageStage()
{
    const QByteArray text = "Running the benchmark on a second machine\n"
                            "\n"
                            "On that machine I got this:\n"
                            "\n"
                            "Traceback (most recent call last):\n"
                            "  File \"bench/run.py\", line 4, in <module>\n"
                            "    import input_utils\n"
                            "  File \"/home/me/bench/input_utils.py\", line 9, in <module>\n"
                            "    from shardlib.datasets import Iterator\n";
    const QList<Candidate> ranked = rankAll(text);
    QStringList top3;
    for (int i = 0; i < 3; ++i)
        top3 << ranked[i].symptom;
    QVERIFY2(top3.contains(QLatin1String("package-build-and-import/import-error")),
             qPrintable(top3.join(QLatin1String(", "))));
    QVERIFY2(evidenceOn(ranked, {7, 9}).isEmpty(),
             qPrintable(evidenceOn(ranked, {7, 9}).join(QLatin1String("; "))));
}

// The study's issues outside its development links are reserved for evaluation: no labelled
// harvest, no raw post's words and none of the reports the ranker's vote reads may hold one
// (a search returns them like any issue, so a harvest must be checked against them).
void TestClassifier::reservedStudyIssuesAreNotLabelledData()
{
    const auto normal = [](QString link) {
        link = link.trimmed().toLower().replace(QLatin1String("/pull/"), QLatin1String("/issues/"));
        while (link.endsWith(QLatin1Char('/')))
            link.chop(1);
        return link;
    };
    QSet<QString> development;
    for (const QByteArray& line : readData(QStringLiteral("tosem23_dev_links.txt")).split('\n'))
        if (line.startsWith("http")) development.insert(normal(QString::fromUtf8(line)));
    QCOMPARE(development.size(), 353);
    QSet<QString> reserved;
    for (const char* sheet : {":/taxonomy/tosem23_faults.csv", ":/taxonomy/tosem23_howto.csv"}) {
        QFile f{QString::fromLatin1(sheet)};
        QVERIFY(f.open(QIODevice::ReadOnly));
        for (const QByteArray& row : f.readAll().split('\n'))
            for (const QByteArray& cell : row.split(','))
                if (cell.startsWith("https://github.com/"))
                    if (const QString link = normal(QString::fromUtf8(cell));
                        !development.contains(link))
                        reserved.insert(link);
    }
    QVERIFY2(reserved.size() > 300, qPrintable(QString::number(reserved.size())));
    // Every labelled file, the raw posts' words (link first) and the vote's reports (link
    // second).
    QStringList files = QDir(QStringLiteral(RANKSCOPE_TEST_DATA "/classifier"))
                            .entryList({QStringLiteral("*.tsv")}, QDir::Files);
    QVERIFY(files.size() > 40);
    QList<std::pair<QString, QByteArray>> tables;
    for (const QString& name : std::as_const(files))
        tables.append({name, readData(name)});
    QFile vote(QStringLiteral(":/taxonomy/neighbours.tsv"));
    QVERIFY(vote.open(QIODevice::ReadOnly));
    tables.append({QStringLiteral("neighbours.tsv"), vote.readAll()});
    int links = 0;
    for (const auto& [name, table] : std::as_const(tables))
        for (const QByteArray& line : table.split('\n')) {
            if (line.isEmpty() || line.startsWith('#')) continue;
            for (const QByteArray& field : line.split('\t').mid(0, 2))
                if (field.startsWith("https://github.com/")) {
                    ++links;
                    QVERIFY2(!reserved.contains(normal(QString::fromUtf8(field))),
                             qPrintable(name + QLatin1String(": ") + QString::fromUtf8(field)));
                }
        }
    QVERIFY(links > 10000);
}

QTEST_GUILESS_MAIN(TestClassifier)
#include "tst_classifier.moc"
