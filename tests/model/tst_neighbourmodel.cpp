#include "model/kb/neighbourmodel.h"
#include "model/kb/signatureset.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>

using namespace rankscope;

namespace {

const QString kHang = QStringLiteral("training-and-evaluation/unexpected-performance/hang");
const QString kSlow =
    QStringLiteral("training-and-evaluation/unexpected-performance/low-efficiency");
const QString kOom = QStringLiteral("training-and-evaluation/program-failure/out-of-memory");

// Four labelled reports. Tokens alpha, beta and delta are held by two reports each (idf ln 2),
// gamma, epsilon and zeta by one (idf ln 4 = 2 ln 2).
QByteArray fourReports()
{
    return QStringLiteral("# leaves<TAB>link<TAB>tokens\n"
                          "%1\thttps://github.com/o/a/issues/1\talpha beta gamma\n"
                          "%2\thttps://github.com/o/b/issues/2\talpha delta\n"
                          "\n"
                          "%1|%2\thttps://github.com/o/c/issues/3\tbeta delta epsilon\n"
                          "%3\thttps://github.com/o/d/issues/4\tzeta\n")
        .arg(kHang, kSlow, kOom)
        .toUtf8();
}

NeighbourModel parsed(const QByteArray& tsv)
{
    NeighbourModel model;
    QString error;
    if (!NeighbourModel::fromTsv(tsv, &model, &error)) qFatal("%s", qPrintable(error));
    return model;
}

} // namespace

class TestNeighbourModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nearestByIdfCosine();
    void votesBySquaredSimilarity();
    void malformedTablesAreRefused_data();
    void malformedTablesAreRefused();
    void voteMovesTheLogitByTheLogOfTheShare();
    void shippedReportsAreUsedAndShown();
};

void TestNeighbourModel::nearestByIdfCosine()
{
    const NeighbourModel model = parsed(fourReports());
    QCOMPARE(model.size(), 4);
    // By hand, with a = ln 2 and the query {alpha, beta} (norm sqrt(2) a):
    //   report 1 {alpha, beta, gamma}: norm sqrt(a^2 + a^2 + 4a^2) = sqrt(6) a, dot 2a^2,
    //     cosine 2 / sqrt(12) = 0.57735;
    //   report 2 {alpha, delta}: norm sqrt(2) a, dot a^2, cosine 1 / 2;
    //   report 3 {beta, delta, epsilon}: norm sqrt(6) a, dot a^2, cosine 1 / sqrt(12);
    //   report 4 shares nothing and is left out. An unknown token ("omega") changes nothing.
    const QStringList query{QStringLiteral("alpha"), QStringLiteral("beta"),
                            QStringLiteral("omega")};
    const QList<NeighbourReport> all = model.nearest(query, 10);
    QCOMPARE(all.size(), 3);
    QCOMPARE(all[0].link, QStringLiteral("https://github.com/o/a/issues/1"));
    QVERIFY(qAbs(all[0].similarity - 2.0 / std::sqrt(12.0)) < 1e-12);
    QCOMPARE(all[1].link, QStringLiteral("https://github.com/o/b/issues/2"));
    QVERIFY(qAbs(all[1].similarity - 0.5) < 1e-12);
    QCOMPARE(all[2].leaves, (QStringList{kHang, kSlow}));
    QVERIFY(qAbs(all[2].similarity - 1.0 / std::sqrt(12.0)) < 1e-12);
    QCOMPARE(model.nearest(query, 2).size(), 2);
    QCOMPARE(model.nearest(query, 2).last().link, all[1].link);
    QVERIFY(model.nearest({QStringLiteral("omega")}, 10).isEmpty());
    QVERIFY(model.nearest({}, 10).isEmpty());
    // A report identical to a labelled one is its nearest, at similarity 1.
    const QList<NeighbourReport> same =
        model.nearest({QStringLiteral("alpha"), QStringLiteral("delta")}, 1);
    QCOMPARE(same.size(), 1);
    QVERIFY(qAbs(same[0].similarity - 1.0) < 1e-12);
}

void TestNeighbourModel::votesBySquaredSimilarity()
{
    const NeighbourModel model = parsed(fourReports());
    const QMap<QString, double> shares =
        model.leafShares(model.nearest({QStringLiteral("alpha"), QStringLiteral("beta")}, 3));
    // By hand: votes 1/3 (report 1, hang), 1/4 (report 2, low efficiency), 1/12 split between
    // hang and low efficiency (report 3); total 2/3. Hang (1/3 + 1/24) / (2/3) = 9/16, low
    // efficiency (1/4 + 1/24) / (2/3) = 7/16.
    QCOMPARE(shares.size(), 2);
    QVERIFY(qAbs(shares.value(kHang) - 9.0 / 16.0) < 1e-12);
    QVERIFY(qAbs(shares.value(kSlow) - 7.0 / 16.0) < 1e-12);
    QVERIFY(model.leafShares({}).isEmpty());
    // The leaves' shares of the four reports: hang 1 + 1/2, low efficiency 1 + 1/2, OOM 1, of 4.
    QCOMPARE(model.leafPrior(kHang), 0.375);
    QCOMPARE(model.leafPrior(kOom), 0.25);
    // Divided by those shares (power 1): the query {zeta, alpha} (norm sqrt(5) a) is at cosine
    // 2 / sqrt(5) of report 4 (OOM), 1 / sqrt(30) of report 1 (hang), 1 / sqrt(10) of report 2
    // (low efficiency): votes 4/5, 1/30, 1/10; divided, 3.2, 0.0889, 0.2667 of 3.5556: OOM 0.9,
    // hang 0.025, low efficiency 0.075. Undivided OOM would have 0.8 / 0.9333 = 0.857.
    const QList<NeighbourReport> near =
        model.nearest({QStringLiteral("alpha"), QStringLiteral("zeta")}, 3);
    const QMap<QString, double> divided = model.leafShares(near, 1.0);
    QVERIFY(qAbs(divided.value(kOom) - 0.9) < 1e-12);
    QVERIFY(qAbs(divided.value(kHang) - 0.025) < 1e-12);
    QVERIFY(qAbs(divided.value(kSlow) - 0.075) < 1e-12);
    QVERIFY(qAbs(model.leafShares(near).value(kOom) - 0.8 / (0.8 + 1.0 / 30.0 + 0.1)) < 1e-12);
    QCOMPARE(neighbourListText(0.5625, model.nearest({QStringLiteral("alpha")}, 3), 1),
             QStringLiteral("0.56 of the vote: o/b#2 (0.71), 1 more"));
}

void TestNeighbourModel::malformedTablesAreRefused_data()
{
    QTest::addColumn<QByteArray>("tsv");
    QTest::newRow("two fields") << QByteArray("leaf\thttps://x\n");
    QTest::newRow("four fields") << QByteArray("leaf\tlink\talpha\textra\n");
    QTest::newRow("no leaf") << QByteArray("\tlink\talpha\n");
    QTest::newRow("no tokens") << QByteArray("leaf\tlink\t \n");
}

void TestNeighbourModel::malformedTablesAreRefused()
{
    QFETCH(QByteArray, tsv);
    NeighbourModel model;
    QString error;
    QVERIFY(!NeighbourModel::fromTsv(tsv, &model, &error));
    QVERIFY(error.contains(QLatin1String("line 1")));
}

void TestNeighbourModel::voteMovesTheLogitByTheLogOfTheShare()
{
    // Two classifiers that differ only in neighbourScale: the log-odds of two leaves move by
    // scale * n / (n + halfTokens) * (log(share + floor) - log(other share + floor)) /
    // temperature, n the report's tokens the labelled reports hold.
    RankerParameters p;
    p.temperature = 1.25;
    p.neighbourFloor = 0.05;
    p.neighbourCount = 3;
    p.neighbourHalfTokens = 6.0;
    p.neighbourMinTokens = 2;
    RankerParameters off = p;
    p.neighbourScale = 2.0;
    const SymptomClassifier with(SignatureSet::builtin(), p, {}, parsed(fourReports()));
    const SymptomClassifier without(SignatureSet::builtin(), off, {}, parsed(fourReports()));
    SymptomClassifier::Options all;
    all.maxCandidates = 100;
    const QByteArray text = "alpha beta omega\n"; // n = 2: no report holds "omega"
    QHash<QString, double> pa, pb;
    QHash<QString, Candidate> ca;
    for (const Candidate& c : with.classify(text, all)) {
        pa[c.symptom] = c.probability;
        ca[c.symptom] = c;
    }
    for (const Candidate& c : without.classify(text, all)) {
        pb[c.symptom] = c.probability;
        QCOMPARE(c.neighbourShare, 0.0);
        QVERIFY(c.neighbours.isEmpty());
    }
    const auto shift = [&](const QString& leaf) {
        return std::log(pa[leaf] / pa[kOom]) - std::log(pb[leaf] / pb[kOom]);
    };
    // By hand: the vote weighs 2 * 2 / (2 + 6) = 0.5; hang 0.5 * (ln(9/16 + 0.05) - ln 0.05) /
    // 1.25; low efficiency with 7/16.
    QVERIFY(qAbs(shift(kHang) - 0.5 * std::log((9.0 / 16.0 + 0.05) / 0.05) / 1.25) < 1e-9);
    QVERIFY(qAbs(shift(kSlow) - 0.5 * std::log((7.0 / 16.0 + 0.05) / 0.05) / 1.25) < 1e-9);
    QCOMPARE(pa.size(), pb.size());
    // Each candidate shows its share and the reports that gave it its leaf, nearest first.
    QVERIFY(qAbs(ca[kHang].neighbourShare - 9.0 / 16.0) < 1e-12);
    QCOMPARE(ca[kHang].neighbourTokens, 2);
    QCOMPARE(ca[kHang].neighbours.size(), 2);
    QCOMPARE(ca[kHang].neighbours.first().link, QStringLiteral("https://github.com/o/a/issues/1"));
    QCOMPARE(ca[kSlow].neighbours.size(), 2);
    QVERIFY(ca[kOom].neighbours.isEmpty());
    // Below neighbourMinTokens words, no report votes.
    RankerParameters strict = p;
    strict.neighbourMinTokens = 3;
    const SymptomClassifier fewWords(SignatureSet::builtin(), strict, {}, parsed(fourReports()));
    const QList<Candidate> few = fewWords.classify(text, all);
    const QList<Candidate> none = without.classify(text, all);
    QCOMPARE(few.size(), none.size());
    for (qsizetype i = 0; i < few.size(); ++i) {
        QCOMPARE(few[i].symptom, none[i].symptom);
        QCOMPARE(few[i].probability, none[i].probability);
        QVERIFY(few[i].neighbours.isEmpty());
    }
    // Pure log files (no cues) read no words, so no report votes.
    SymptomClassifier::Options logOnly = all;
    logOnly.useCues = false;
    for (const Candidate& c : with.classify(text, logOnly))
        QVERIFY(c.neighbours.isEmpty());
}

void TestNeighbourModel::shippedReportsAreUsedAndShown()
{
    // The shipped ranker weighs the shipped labelled reports: a vote with no weight would be dead.
    QFile f(QStringLiteral(":/taxonomy/ranker.json"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const double scale =
        QJsonDocument::fromJson(f.readAll()).object()[QLatin1String("neighbour_scale")].toDouble();
    QVERIFY(scale > 0.0);
    const SymptomClassifier& classifier = SymptomClassifier::instance();
    QCOMPARE(classifier.ranking().neighbourScale, scale);
    QVERIFY(classifier.neighbours().size() > 1000);
    // Every report the shipped file holds is labelled with leaves of the taxonomy.
    QFile shipped(QStringLiteral(":/taxonomy/neighbours.tsv"));
    QVERIFY(shipped.open(QIODevice::ReadOnly));
    int reports = 0;
    for (const QByteArray& line : shipped.readAll().split('\n')) {
        if (line.isEmpty() || line.startsWith('#')) continue;
        ++reports;
        for (const QByteArray& leaf : line.split('\t').value(0).split('|'))
            QVERIFY2(Taxonomy::instance().isLeafId(QString::fromUtf8(leaf)), line.constData());
    }
    QCOMPARE(reports, classifier.neighbours().size());
    // A report in words many labelled reports use gets a vote, and its first candidate shows it.
    const QList<Candidate> ranked = classifier.classify(
        "NCCL watchdog timeout during training\nThe job hangs after a few hundred steps on 8 "
        "GPUs and every rank is stuck in allreduce until the watchdog kills it.\n");
    double total = 0.0;
    bool shown = false;
    for (const Candidate& c : ranked) {
        total += c.neighbourShare;
        shown = shown || !c.neighbours.isEmpty();
    }
    QVERIFY(shown);
    QVERIFY(total > 0.0 && total <= 1.0 + 1e-9);
}

QTEST_GUILESS_MAIN(TestNeighbourModel)
#include "tst_neighbourmodel.moc"
