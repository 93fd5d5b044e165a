#include "model/tracesession.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>

using namespace rankscope;

// The analysis on the real runs of tests/data/traces: what each folder's ground_truth.json says
// was injected must be what the top finding says. Only this test reads ground_truth.json.
class TestAnalyzerFixtures : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fixture_data();
    void fixture();
};

namespace {

QString tracesDir()
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/traces");
}

// The finding kind that names each injected fault.
QString expectedKind(const QString& scenario)
{
    if (scenario == QLatin1String("straggler")) return QStringLiteral("straggler");
    if (scenario == QLatin1String("hang_timeout")) return QStringLiteral("hang");
    if (scenario == QLatin1String("uneven_inputs")) return QStringLiteral("desync");
    if (scenario == QLatin1String("mismatched_collective"))
        return QStringLiteral("collective_mismatch");
    if (scenario == QLatin1String("setup_failure")) return QStringLiteral("setup_failure");
    if (scenario == QLatin1String("rank_crash")) return QStringLiteral("crash");
    return {};
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
        if (f.severity == "error") errors.push_back(&f);
    // Every line of every rank's own log went through the classifier (the launcher's console
    // repeats them and is not read twice).
    qsizetype rankLogLines = 0;
    for (const QString& name : QDir(path).entryList({QStringLiteral("rank*.log")}, QDir::Files)) {
        QFile log(path + QLatin1Char('/') + name);
        QVERIFY(log.open(QIODevice::ReadOnly));
        rankLogLines += log.readAll().count('\n');
    }
    QCOMPARE(qsizetype(res.logLineCount), rankLogLines);

    if (faulty.empty()) {
        for (const Finding* f : errors)
            QVERIFY2(false, f->summary.c_str());
        return;
    }
    const QString kind = expectedKind(scenario);
    const Finding* top = nullptr;
    if (kind == QLatin1String("straggler")) {
        // A slow rank fails nothing: no error, and the straggler warning comes first.
        for (const Finding* f : errors)
            QVERIFY2(false, f->summary.c_str());
        QVERIFY(!res.findings.empty());
        top = &res.findings.front();
    } else {
        QVERIFY2(!errors.empty(), qPrintable(scenario));
        top = errors.front();
    }
    const std::string what = top->kind + " " + top->summary;
    if (!kind.isEmpty()) QVERIFY2(top->kind == kind.toStdString(), what.c_str());
    if (top->kind == "collective_mismatch" && world == 2) {
        // Two fingerprints that differ cannot say which rank deviates from the majority.
        QVERIFY2(std::includes(top->ranks.begin(), top->ranks.end(), faulty.begin(), faulty.end()),
                 what.c_str());
    } else {
        QVERIFY2(top->ranks == faulty, what.c_str());
    }
    if (faultStep >= 0 && kind != QLatin1String("straggler")) {
        QCOMPARE(top->step, faultStep);
    }
}

QTEST_GUILESS_MAIN(TestAnalyzerFixtures)
#include "tst_analyzer_fixtures.moc"
