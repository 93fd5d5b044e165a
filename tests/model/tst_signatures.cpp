#include "model/kb/signatureset.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"

#include <QSet>
#include <QTest>

using namespace rankscope;

// The 38 leaf ids of the taxonomy derived from the study's CSV.
static QSet<QString> leafIds()
{
    const QStringList leaves = Taxonomy::instance().leaves();
    return QSet<QString>(leaves.begin(), leaves.end());
}

class TestSignatures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loads();
    void symptomsAreLeaves();
    void everyLeafIsReachable();
    void everyRule_data();
    void everyRule();
    void adviceIsNotAnError_data();
    void adviceIsNotAnError();
    void badDataIsReported();
    void lineOffsetsAreHonoured();
};

void TestSignatures::loads()
{
    const SignatureSet& set = SignatureSet::builtin();
    QVERIFY(set.signatures().size() >= 120);
    QVERIFY(!set.stages().isEmpty());
    QVERIFY(!set.frameworks().isEmpty());
    QSet<QString> ids;
    for (const Signature& s : set.signatures()) {
        QVERIFY2(!ids.contains(s.id), qPrintable(s.id));
        ids.insert(s.id);
    }
}

void TestSignatures::symptomsAreLeaves()
{
    const QSet<QString> leaves = leafIds();
    QCOMPARE(leaves.size(), 38);
    for (const Signature& s : SignatureSet::builtin().signatures())
        QVERIFY2(leaves.contains(s.symptom), qPrintable(s.id + QLatin1String(" -> ") + s.symptom));
}

// Each leaf but the study's catch-all "others" can be proposed: some rule names it, or a stage
// remap leads to it. The remap targets must be leaves too.
void TestSignatures::everyLeafIsReachable()
{
    const SignatureSet& set = SignatureSet::builtin();
    QSet<QString> reachable;
    for (const Signature& s : set.signatures())
        reachable.insert(s.symptom);
    const QSet<QString> leaves = leafIds();
    for (const QString& target : set.remapTargets()) {
        QVERIFY2(leaves.contains(target), qPrintable(target));
        reachable.insert(target);
    }
    for (const QString& leaf : leaves)
        if (!leaf.endsWith(QLatin1String("/others")))
            QVERIFY2(reachable.contains(leaf), qPrintable(leaf));
}

void TestSignatures::everyRule_data()
{
    QTest::addColumn<int>("rule");
    const QList<Signature>& all = SignatureSet::builtin().signatures();
    for (int i = 0; i < all.size(); ++i)
        QTest::addRow("%s", qPrintable(all[i].id)) << i;
}

// Each rule matches its positive line through the whole scan path (literal prefilter, advice
// stripping, regex) and does not match its near-miss negative line.
void TestSignatures::everyRule()
{
    QFETCH(int, rule);
    const SignatureSet& set = SignatureSet::builtin();
    const Signature& s = set.signatures()[rule];
    QVERIFY2(!s.positive.isEmpty() && !s.negative.isEmpty(), "positive and negative lines");
    auto matches = [&](const QString& line) {
        const QByteArray bytes = QByteArray("some preceding line\n") + line.toUtf8() + "\n";
        for (const SignatureHit& h : set.scan(bytes, {}, true))
            if (h.rule == rule) return h.line == 1;
        return false;
    };
    QVERIFY2(matches(s.positive), qPrintable(s.positive));
    QVERIFY2(!matches(s.negative), qPrintable(s.negative));
}

void TestSignatures::adviceIsNotAnError_data()
{
    QTest::addColumn<QString>("line");
    QTest::addRow("nccl-debug") << QStringLiteral("Please run with NCCL_DEBUG=INFO for details.");
    QTest::addRow("launch-blocking")
        << QStringLiteral("For debugging consider passing CUDA_LAUNCH_BLOCKING=1.");
    QTest::addRow("async") << QStringLiteral(
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.");
    QTest::addRow("dsa") << QStringLiteral(
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.");
    QTest::addRow("horovod-template-hang") << QStringLiteral(
        "2. If your question is about hang, did you read [this doc](https://github.com/horovod/"
        "horovod/blob/master/docs/running.rst)?");
    QTest::addRow("template-gcc") << QStringLiteral("11. GCC version: 9.4.0");
    QTest::addRow("tf-template-install")
        << QStringLiteral("- TensorFlow installed from (source or binary): binary");
    QTest::addRow("elastic") << QStringLiteral(
        "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html");
}

void TestSignatures::adviceIsNotAnError()
{
    QFETCH(QString, line);
    // Neither a log signature nor a prose cue may fire on advice or issue-template boilerplate:
    // the ranking is the base rates alone.
    for (const Candidate& c : SymptomClassifier::instance().classify(line.toUtf8()))
        QVERIFY2(c.evidence.isEmpty() && c.score == 0.0, qPrintable(c.symptom));
}

void TestSignatures::badDataIsReported()
{
    QString error;
    QVERIFY(SignatureSet::fromJson("{", "{}", &error).isEmpty());
    QVERIFY(!error.isEmpty());
    error.clear();
    const QByteArray bad =
        R"({"signatures":[{"id":"x","pattern":"(","symptom":"a/b","literals":["("]}]})";
    QVERIFY(SignatureSet::fromJson(bad, "{}", &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("'x'")), qPrintable(error));
}

void TestSignatures::lineOffsetsAreHonoured()
{
    const QByteArray log = "a\nb\nSegmentation fault (core dumped)\n";
    const QList<SignatureHit> hits =
        SignatureSet::builtin().scan(log, SignatureSet::lineStartsOf(log), false);
    QVERIFY(!hits.isEmpty());
    QCOMPARE(hits.first().line, qsizetype(2));
    QCOMPARE(SignatureSet::lineStartsOf(log), (QList<qsizetype>{0, 2, 4}));
}

QTEST_GUILESS_MAIN(TestSignatures)
#include "tst_signatures.moc"
