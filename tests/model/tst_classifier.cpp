#include "model/kb/symptomclassifier.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace rankscope;

class TestClassifier : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void evaluationSet();
    void emptyInputHasNoCandidates();
    void rootOutranksCascade();
    void cascadeAloneStillReported();
    void scoresAreBounded();
    void classifyLinesUsesCallerOffsets();
    void stageContextMovesHangToSetup();
    void cuesReadOnlyTheProseWindow();
    void pastedCodeIsNotASymptom();
};

static QByteArray readData(const QString& rel)
{
    QFile f(QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/") + rel);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
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

void TestClassifier::emptyInputHasNoCandidates()
{
    QVERIFY(SymptomClassifier::instance().classify(QByteArray()).isEmpty());
    QVERIFY(SymptomClassifier::instance().classify("all good, 42 tests passed\n").isEmpty());
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
    const QList<Candidate> c = SymptomClassifier::instance().classify(log, logOnly);
    QVERIFY(!c.isEmpty());
    QCOMPARE(c.first().symptom,
             QStringLiteral("training-and-evaluation/program-failure/out-of-memory"));
    QVERIFY(c.first().hasRoot);
    QCOMPARE(c.first().evidence.first().line, qsizetype(1));
    for (int i = 1; i < c.size(); ++i)
        QVERIFY(c[i].score < c.first().score / 2);
}

void TestClassifier::cascadeAloneStillReported()
{
    SymptomClassifier::Options logOnly;
    logOnly.useCues = false;
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
    for (const Candidate& c : SymptomClassifier::instance().classify(many)) {
        QVERIFY(c.score > 0.0 && c.score <= 1.0);
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
    const QList<Candidate> c = SymptomClassifier::instance().classifyLines(log, starts, logOnly);
    QVERIFY(!c.isEmpty());
    QCOMPARE(c.first().symptom,
             QStringLiteral("training-and-evaluation/program-failure/device-error"));
    QCOMPARE(c.first().evidence.first().line, qsizetype(3));
    QCOMPARE(c.first().evidence.first().signature, QStringLiteral("torch.device-ordinal"));
    QVERIFY(!c.first().evidence.first().text.endsWith(QLatin1Char('\r')));
}

void TestClassifier::stageContextMovesHangToSetup()
{
    const QList<Candidate> c = SymptomClassifier::instance().classify(
        "The job hangs forever at dist.init_process_group on the second node.\n"
        "MASTER_ADDR and MASTER_PORT are set, nothing happens.\n");
    QVERIFY(!c.isEmpty());
    QCOMPARE(c.first().symptom, QStringLiteral("communication-setup/hang-and-timeout"));
}

// Prose cues read the first SignatureSet::kProseBytes; log signatures read everything.
void TestClassifier::cuesReadOnlyTheProseWindow()
{
    QByteArray log(SignatureSet::kProseBytes + 10, 'x');
    log += "\nthe job hangs forever\nSegmentation fault (core dumped)\n";
    QStringList symptoms;
    for (const Candidate& c : SymptomClassifier::instance().classify(log))
        symptoms << c.symptom;
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

QTEST_GUILESS_MAIN(TestClassifier)
#include "tst_classifier.moc"
