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
    void scoreIsOneMinusExpOfTheSum();
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
    const QStringList expected{QStringLiteral("call"),         QStringLiteral("drops"),
                               QStringLiteral("last"),         QStringLiteral("recent"),
                               QStringLiteral("runtimeerror"), QStringLiteral("slow"),
                               QStringLiteral("stage"),        QStringLiteral("throughput"),
                               QStringLiteral("traceback"),    QStringLiteral("zero")};
    QCOMPARE(SymptomClassifier::instance().termTokens(report), expected);
    // The words that made a candidate's term score are among them.
    for (const Candidate& c : SymptomClassifier::instance().classify(report))
        for (const TermWeight& t : c.terms)
            QVERIFY2(expected.contains(t.term), qPrintable(t.term));
}

void TestTermModel::scoreIsOneMinusExpOfTheSum()
{
    TermModel model;
    QString error;
    QVERIFY2(TermModel::fromJson(R"({"leaves": {
                 "a/b/slow": {"slow": 1.0, "throughput": 0.5, "drops": 0.25},
                 "a/b/hang": {"hang": 2.0, "slow": 0.125}}})",
                                 &model, &error),
             qPrintable(error));
    QVERIFY(!model.isEmpty());
    const QMap<QString, TermModel::LeafScore> s =
        model.score({QStringLiteral("slow"), QStringLiteral("throughput"), QStringLiteral("zero")});
    QCOMPARE(s.size(), 2);
    // slow + throughput = 1.5; slow alone = 0.125 for the hang leaf.
    QVERIFY(qAbs(s[QStringLiteral("a/b/slow")].score - (1.0 - std::exp(-1.5))) < 1e-12);
    QVERIFY(qAbs(s[QStringLiteral("a/b/hang")].score - (1.0 - std::exp(-0.125))) < 1e-12);
    const QList<TermWeight>& terms = s[QStringLiteral("a/b/slow")].terms;
    QCOMPARE(terms.size(), 2);
    QCOMPARE(terms[0].term, QStringLiteral("slow"));
    QCOMPARE(terms[1].term, QStringLiteral("throughput"));
    QCOMPARE(terms[1].weight, 0.5);
    QCOMPARE(termListText(terms), QStringLiteral("slow, throughput"));
    QVERIFY(model.score({QStringLiteral("zero")}).isEmpty());
}

void TestTermModel::malformedTablesAreRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::newRow("not json") << QByteArray("{");
    QTest::newRow("no leaves") << QByteArray(R"({"schema": "rankscope.terms/1"})");
    QTest::newRow("leaf not an object") << QByteArray(R"({"leaves": {"a": 1}})");
    QTest::newRow("zero weight") << QByteArray(R"({"leaves": {"a": {"slow": 0}}})");
    QTest::newRow("negative weight") << QByteArray(R"({"leaves": {"a": {"slow": -1}}})");
    QTest::newRow("weight a string") << QByteArray(R"({"leaves": {"a": {"slow": "1"}}})");
    QTest::newRow("upper case") << QByteArray(R"({"leaves": {"a": {"Slow": 1}}})");
    QTest::newRow("digits") << QByteArray(R"({"leaves": {"a": {"fp16": 1}}})");
    QTest::newRow("two letters") << QByteArray(R"({"leaves": {"a": {"ok": 1}}})");
    QTest::newRow("stop word") << QByteArray(R"({"leaves": {"a": {"the": 1}}})");
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
    // Two classifiers that differ only in the term model: the log-odds of the leaf the model
    // names against any other leaf grow by termScale * (1 - exp(-weight)) / temperature.
    const QString leaf =
        QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
    TermModel model;
    QString error;
    QVERIFY2(TermModel::fromJson(
                 QStringLiteral(R"({"leaves": {"%1": {"sluggish": 0.7}}})").arg(leaf).toUtf8(),
                 &model, &error),
             qPrintable(error));
    RankerParameters p;
    p.termScale = 2.5;
    p.temperature = 1.25;
    const SymptomClassifier with(SignatureSet::builtin(), p, model);
    const SymptomClassifier without(SignatureSet::builtin(), p);
    SymptomClassifier::Options all;
    all.maxCandidates = 100;
    const QByteArray text = "The job is sluggish on two nodes\n";
    const QList<Candidate> a = with.classify(text, all);
    const QList<Candidate> b = without.classify(text, all);
    QCOMPARE(a.size(), b.size());
    QHash<QString, double> pa, pb;
    for (const Candidate& c : a)
        pa[c.symptom] = c.probability;
    for (const Candidate& c : b)
        pb[c.symptom] = c.probability;
    const double expectedShift = 2.5 * (1.0 - std::exp(-0.7)) / 1.25;
    const QString other = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
    QVERIFY(qAbs(std::log(pa[leaf] / pa[other]) - std::log(pb[leaf] / pb[other]) - expectedShift) <
            1e-9);
    for (const Candidate& c : a)
        if (c.symptom == leaf) {
            QVERIFY(qAbs(c.termScore - (1.0 - std::exp(-0.7))) < 1e-12);
            QCOMPARE(c.terms.size(), 1);
            QCOMPARE(c.terms.first().term, QStringLiteral("sluggish"));
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
