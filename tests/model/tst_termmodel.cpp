#include "model/kb/signatureset.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"
#include "model/kb/termmodel.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace rankscope;

class TestTermModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void tokensReadOnlyProseAndOutput();
    void tokensOfAWholeReport();
    void tracebackPathsAreNotWords();
    void evidenceTokensCorrectARule();
    void scoreIsTheSignedSumOfTheWeights();
    void malformedTablesAreRefused_data();
    void malformedTablesAreRefused();
    void termScaleMovesTheLogitByTheScore();
    void shippedModelIsUsedAndShown();
};

static QList<qsizetype> startsOf(QByteArrayView text)
{
    return SignatureSet::lineStartsOf(text);
}

void TestTermModel::tokensReadOnlyProseAndOutput()
{
    const QByteArray text = "Training is SLOW since all_reduce; ChildFailedError fp16 GPU0 the\n"
                            "import torch.distributed as dist\n"
                            "RuntimeError: NCCL watchdog timed out, the watchdog\n"
                            "torch==2.1.0 cuda 12.1 python\n";
    const QList<ReportLine> kinds{ReportLine::Prose, ReportLine::Code, ReportLine::Output,
                                  ReportLine::Environment};
    // By hand: runs of letters, lower-cased, 3 to 24 letters, stop words ("since", "the") out,
    // each once, sorted; the code and environment lines are not read.
    const QStringList expected{QStringLiteral("childfailederror"),
                               QStringLiteral("gpu"),
                               QStringLiteral("nccl"),
                               QStringLiteral("reduce"),
                               QStringLiteral("runtimeerror"),
                               QStringLiteral("slow"),
                               QStringLiteral("timed"),
                               QStringLiteral("training"),
                               QStringLiteral("watchdog")};
    QCOMPARE(TermModel::tokens(text, startsOf(text), kinds, {}), expected);
    // Lines past the kinds given are not read.
    QCOMPARE(TermModel::tokens(text, startsOf(text), kinds.first(1), {}),
             (QStringList{QStringLiteral("childfailederror"), QStringLiteral("gpu"),
                          QStringLiteral("reduce"), QStringLiteral("slow"),
                          QStringLiteral("training")}));
    // A word longer than 24 letters is no word.
    const QByteArray longWord = "abcdefghijklmnopqrstuvwxyz fine\n";
    QCOMPARE(TermModel::tokens(longWord, startsOf(longWord), {ReportLine::Prose}, {}),
             QStringList{QStringLiteral("fine")});
    // Lines a log signature explains are not read either.
    QCOMPARE(TermModel::tokens(text, startsOf(text), kinds, {0}),
             (QStringList{QStringLiteral("nccl"), QStringLiteral("runtimeerror"),
                          QStringLiteral("timed"), QStringLiteral("watchdog")}));
}

// A traceback frame's path is where Python keeps the file; only the frame's function is read.
void TestTermModel::tracebackPathsAreNotWords()
{
    const QByteArray text = "  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/"
                            "__init__.py\", line 346, in wrapper\n";
    QCOMPARE(TermModel::tokens(text, startsOf(text), {ReportLine::Output}, {}),
             (QStringList{QStringLiteral("line"), QStringLiteral("wrapper")}));
    // The same words outside a frame are read.
    const QByteArray prose = "the wrapper in torch distributed elastic\n";
    QVERIFY(TermModel::tokens(prose, startsOf(prose), {ReportLine::Prose}, {})
                .contains(QStringLiteral("elastic")));
}

void TestTermModel::tokensOfAWholeReport()
{
    // The source inside the fence is code, which the term model does not read; the title and
    // the traceback's lines are, but not the out-of-memory line a log signature explains.
    const QByteArray report = "Throughput drops with ZeRO stage 3\n"
                              "```python\n"
                              "model = deepspeed.initialize(model=model)\n"
                              "```\n"
                              "```\n"
                              "Traceback (most recent call last):\n"
                              "RuntimeError: slow\n"
                              "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to "
                              "allocate 2.00 GiB\n"
                              "```\n";
    const QList<ReportLine> kinds =
        reportLineKinds(report, startsOf(report), startsOf(report).size());
    QCOMPARE(kinds.mid(0, 9),
             (QList<ReportLine>{ReportLine::Prose, ReportLine::Scaffold, ReportLine::Code,
                                ReportLine::Scaffold, ReportLine::Scaffold, ReportLine::Output,
                                ReportLine::Output, ReportLine::Output, ReportLine::Scaffold}));
    // By hand, from the title and the two output lines ("with" and "most" are stop words).
    const QStringList words{QStringLiteral("call"),         QStringLiteral("drops"),
                            QStringLiteral("last"),         QStringLiteral("recent"),
                            QStringLiteral("runtimeerror"), QStringLiteral("slow"),
                            QStringLiteral("stage"),        QStringLiteral("throughput"),
                            QStringLiteral("traceback"),    QStringLiteral("zero")};
    // Beside the words, one evidence token per rule that counted: the out-of-memory line's
    // signatures are read as rules although their words are not.
    QStringList expected = words;
    QSet<QString> rules;
    SymptomClassifier::Options all;
    all.maxCandidates = 100;
    all.maxEvidence = 100;
    for (const Candidate& c : SymptomClassifier::instance().classify(report, all))
        for (const CandidateEvidence& e : c.evidence)
            rules.insert(TermModel::evidenceToken(e.signature));
    QVERIFY(rules.contains(QStringLiteral("@cuda.oom")));
    QVERIFY(rules.contains(QStringLiteral("@slow"))); // the prose cue of "RuntimeError: slow"
    expected.append(QStringList(rules.cbegin(), rules.cend()));
    expected.sort();
    // The ranking gives them with its candidates, the same candidates as without them.
    QStringList fromRanking;
    const QList<Candidate> ranked =
        SymptomClassifier::instance().classify(report, SymptomClassifier::Options{}, &fromRanking);
    QCOMPARE(fromRanking, expected);
    QCOMPARE(ranked.size(), SymptomClassifier::instance().classify(report).size());
    QCOMPARE(ranked.first().symptom,
             SymptomClassifier::instance().classify(report).first().symptom);
    // The words that made a candidate's term score are among them.
    for (const Candidate& c : SymptomClassifier::instance().classify(report))
        for (const TermWeight& t : c.terms)
            QVERIFY2(expected.contains(t.term), qPrintable(t.term));
}

void TestTermModel::evidenceTokensCorrectARule()
{
    // A learned weight on a rule's evidence token moves the leaf the rule names, as a word's
    // weight does: here it says that reports with "NCCL error in" are set-up failures more often
    // than the rule's own leaf. Without it the rule's leaf leads.
    const QString setup = QStringLiteral("communication-setup/setup-failure");
    TermModel model;
    QString error;
    QVERIFY2(TermModel::fromJson(QStringLiteral(R"({"schema": "rankscope.terms/2", "leaves": {
                     "%1": {"@nccl.error-in": 4.0}}})")
                                     .arg(setup)
                                     .toUtf8(),
                                 &model, &error),
             qPrintable(error));
    RankerParameters p;
    p.termScale = 1.0;
    const SymptomClassifier with(SignatureSet::builtin(), p, model);
    const SymptomClassifier without(SignatureSet::builtin(), p);
    const QByteArray text = "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/"
                            "ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version "
                            "2.7.8\n";
    QStringList tokens;
    with.classify(text, SymptomClassifier::Options{}, &tokens);
    QVERIFY(tokens.contains(QStringLiteral("@nccl.error-in")));
    QVERIFY(without.classify(text).first().symptom != setup);
    const Candidate first = with.classify(text).first();
    QCOMPARE(first.symptom, setup);
    QCOMPARE(termListText(first.terms), QStringLiteral("+4.00: @nccl.error-in"));
    // An evidence token is "@" and a rule id; anything else after "@" is refused.
    QVERIFY(!TermModel::fromJson(R"({"schema": "rankscope.terms/2", "leaves": {
                 "a": {"@NCCL error": 1.0}}})",
                                 &model, &error));
    QVERIFY(!TermModel::fromJson(R"({"schema": "rankscope.terms/2", "leaves": {"a": {"@": 1}}})",
                                 &model, &error));
}

void TestTermModel::scoreIsTheSignedSumOfTheWeights()
{
    TermModel model;
    QString error;
    QVERIFY2(TermModel::fromJson(R"({"schema": "rankscope.terms/2", "leaves": {
                 "a/b/slow": {"slow": 1.0, "throughput": 0.5, "drops": 0.25, "nccl": -0.75},
                 "a/b/hang": {"hang": 2.0, "slow": -0.25},
                 "a/b/oom": {"memory": 1.5}}})",
                                 &model, &error),
             qPrintable(error));
    QVERIFY(!model.isEmpty());
    const QMap<QString, TermModel::LeafScore> s =
        model.score({QStringLiteral("nccl"), QStringLiteral("slow"), QStringLiteral("throughput"),
                     QStringLiteral("zero")});
    // The oom leaf has none of its words: no entry.
    QCOMPARE(s.size(), 2);
    // By hand: slow + throughput + nccl = 1.0 + 0.5 - 0.75 = 0.75; the hang leaf: slow = -0.25.
    QCOMPARE(s[QStringLiteral("a/b/slow")].score, 0.75);
    QCOMPARE(s[QStringLiteral("a/b/hang")].score, -0.25);
    // The words for the leaf first, by decreasing weight, then the words against it.
    const QList<TermWeight>& terms = s[QStringLiteral("a/b/slow")].terms;
    QCOMPARE(terms.size(), 3);
    QCOMPARE(terms[0].term, QStringLiteral("slow"));
    QCOMPARE(terms[1].term, QStringLiteral("throughput"));
    QCOMPARE(terms[1].weight, 0.5);
    QCOMPARE(terms[2].term, QStringLiteral("nccl"));
    QCOMPARE(terms[2].weight, -0.75);
    QCOMPARE(termListText(terms), QStringLiteral("+1.50: slow, throughput; -0.75: nccl"));
    QCOMPARE(termListText(s[QStringLiteral("a/b/hang")].terms), QStringLiteral("-0.25: slow"));
    QVERIFY(model.score({QStringLiteral("zero")}).isEmpty());
}

void TestTermModel::malformedTablesAreRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::newRow("not json") << QByteArray("{");
    QTest::newRow("no schema") << QByteArray(R"({"leaves": {"a": {"slow": 1}}})");
    // The positive-only weights of schema 1 fed 1 - exp(-sum): not what schema 2 weighs.
    QTest::newRow("schema 1") << QByteArray(
        R"({"schema": "rankscope.terms/1", "leaves": {"a": {"slow": 1}}})");
    QTest::newRow("no leaves") << QByteArray(R"({"schema": "rankscope.terms/2"})");
    QTest::newRow("leaf not an object")
        << QByteArray(R"({"schema": "rankscope.terms/2", "leaves": {"a": 1}})");
    QTest::newRow("zero weight") << QByteArray(
        R"({"schema": "rankscope.terms/2", "leaves": {"a": {"slow": 0}}})");
    QTest::newRow("weight a string")
        << QByteArray(R"({"schema": "rankscope.terms/2", "leaves": {"a": {"slow": "1"}}})");
    QTest::newRow("upper case") << QByteArray(
        R"({"schema": "rankscope.terms/2", "leaves": {"a": {"Slow": 1}}})");
    QTest::newRow("digits") << QByteArray(
        R"({"schema": "rankscope.terms/2", "leaves": {"a": {"fp16": 1}}})");
    QTest::newRow("two letters") << QByteArray(
        R"({"schema": "rankscope.terms/2", "leaves": {"a": {"ok": 1}}})");
    QTest::newRow("stop word") << QByteArray(
        R"({"schema": "rankscope.terms/2", "leaves": {"a": {"the": -1}}})");
}

void TestTermModel::malformedTablesAreRefused()
{
    QFETCH(QByteArray, json);
    TermModel model;
    QString error;
    QVERIFY(!TermModel::fromJson(json, &model, &error));
    QVERIFY(!error.isEmpty());
}

void TestTermModel::termScaleMovesTheLogitByTheScore()
{
    // Two classifiers that differ only in the term model: the log-odds of a leaf against a leaf
    // the model does not name move by termScale * (sum of the leaf's weights of the words the
    // report contains, each once) / temperature, up or down.
    const QString slow =
        QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    const QString oom = QStringLiteral("training-and-evaluation/program-failure/out-of-memory");
    const QString other = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    TermModel model;
    QString error;
    QVERIFY2(TermModel::fromJson(QStringLiteral(R"({"schema": "rankscope.terms/2", "leaves": {
                     "%1": {"sluggish": 0.7, "nodes": -0.2},
                     "%2": {"sluggish": -0.9, "absent": 3.0}}})")
                                     .arg(slow, oom)
                                     .toUtf8(),
                                 &model, &error),
             qPrintable(error));
    RankerParameters p;
    p.termScale = 2.5;
    p.temperature = 1.25;
    const SymptomClassifier with(SignatureSet::builtin(), p, model);
    const SymptomClassifier without(SignatureSet::builtin(), p);
    SymptomClassifier::Options all;
    all.maxCandidates = 100;
    // "sluggish" twice and "nodes" once: each word counts once.
    const QByteArray text = "The job is sluggish on two nodes, really sluggish\n";
    const QList<Candidate> a = with.classify(text, all);
    const QList<Candidate> b = without.classify(text, all);
    QCOMPARE(a.size(), b.size());
    QHash<QString, double> pa, pb;
    for (const Candidate& c : a)
        pa[c.symptom] = c.probability;
    for (const Candidate& c : b)
        pb[c.symptom] = c.probability;
    const auto shift = [&](const QString& leaf) {
        return std::log(pa[leaf] / pa[other]) - std::log(pb[leaf] / pb[other]);
    };
    // By hand: slow 2.5 * (0.7 - 0.2) / 1.25 = 1.0; oom 2.5 * -0.9 / 1.25 = -1.8.
    QVERIFY(qAbs(shift(slow) - 1.0) < 1e-9);
    QVERIFY(qAbs(shift(oom) + 1.8) < 1e-9);
    for (const Candidate& c : a)
        if (c.symptom == slow) {
            QVERIFY(qAbs(c.termScore - 0.5) < 1e-12);
            QCOMPARE(c.terms.size(), 2);
            QCOMPARE(termListText(c.terms), QStringLiteral("+0.70: sluggish; -0.20: nodes"));
        } else if (c.symptom == oom) {
            QCOMPARE(c.termScore, -0.9);
            QCOMPARE(termListText(c.terms), QStringLiteral("-0.90: sluggish"));
        } else {
            QCOMPARE(c.termScore, 0.0);
            QVERIFY(c.terms.isEmpty());
        }
    // Log analysis (no cues) reads no words.
    SymptomClassifier::Options logs;
    logs.useCues = false;
    for (const Candidate& c : with.classify(text, logs))
        QCOMPARE(c.termScore, 0.0);
}

void TestTermModel::shippedModelIsUsedAndShown()
{
    // The shipped ranker weighs the shipped term model: a hook with no weight would be dead code.
    QFile f(QStringLiteral(":/taxonomy/ranker.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const double termScale =
        QJsonDocument::fromJson(f.readAll()).object()[QLatin1String("term_scale")].toDouble();
    QVERIFY(termScale > 0.0);
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    QCOMPARE(classifier.ranking().termScale, termScale);
    QVERIFY(!classifier.terms().isEmpty());
}

QTEST_GUILESS_MAIN(TestTermModel)
#include "tst_termmodel.moc"
