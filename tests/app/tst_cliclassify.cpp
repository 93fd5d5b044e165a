#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

// Runs the real binary for `classify` and `issues`: exit codes and documents are the contract.
class TestCliClassify : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void classifyJson();
    void classifyStdinNothingMatched();
    void classifyText();
    void classifyErrors_data();
    void classifyErrors();
};

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

static Run run(const QStringList& args, const QByteArray& input = {},
               const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(RANKSCOPE_BINARY), args);
    p.write(input);
    p.closeWriteChannel();
    Run r;
    if (!p.waitForFinished(60000)) return r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

void TestCliClassify::classifyJson()
{
    const Run r =
        run({QStringLiteral("classify"),
             QStringLiteral(RANKSCOPE_TEST_DATA "/classifier/ddp-checkpoint-module-prefix.md"),
             QStringLiteral("--json"), QStringLiteral("--top"), QStringLiteral("2")});
    QCOMPARE(r.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(doc[QLatin1String("schema")].toString(), QStringLiteral("rankscope.classification/1"));
    const QJsonArray candidates = doc[QLatin1String("candidates")].toArray();
    QVERIFY(!candidates.isEmpty() && candidates.size() <= 2);
    const QJsonObject best = candidates.first().toObject();
    QCOMPARE(best[QLatin1String("symptom")].toString(),
             QStringLiteral("training-and-evaluation/program-failure/checkpoint-unfunctioning"));
    const double score = best[QLatin1String("score")].toDouble();
    QVERIFY(score > 0.5 && score <= 1.0);
    const QJsonObject ev = best[QLatin1String("evidence")].toArray().first().toObject();
    QVERIFY(ev[QLatin1String("line")].toInt() >= 1);
    QVERIFY(!ev[QLatin1String("text")].toString().isEmpty());
    QVERIFY(!ev[QLatin1String("signature")].toString().isEmpty());
    if (candidates.size() == 2)
        QVERIFY(candidates[1].toObject()[QLatin1String("score")].toDouble() <= score);
}

void TestCliClassify::classifyStdinNothingMatched()
{
    const Run r = run({QStringLiteral("classify"), QStringLiteral("-"), QStringLiteral("--json")},
                      "epoch 1 done\nepoch 2 done\n");
    QCOMPARE(r.exitCode, 0);
    const QJsonObject doc = QJsonDocument::fromJson(r.out).object();
    QVERIFY(doc[QLatin1String("candidates")].isArray());
    QVERIFY(doc[QLatin1String("candidates")].toArray().isEmpty());
}

void TestCliClassify::classifyText()
{
    const Run r = run({QStringLiteral("classify")}, "Segmentation fault (core dumped)\n");
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("training-and-evaluation/program-failure/segmentation-fault"));
    QVERIFY(r.out.contains("line 1"));
}

void TestCliClassify::classifyErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("exitCode");
    QTest::addRow("two-files") << QStringList{QStringLiteral("a"), QStringLiteral("b")} << 2;
    QTest::addRow("bad-top") << QStringList{QStringLiteral("--top"), QStringLiteral("x")} << 2;
    QTest::addRow("unknown-option") << QStringList{QStringLiteral("--bogus")} << 2;
    QTest::addRow("missing-file") << QStringList{QStringLiteral("/nonexistent/report.md")} << 3;
}

void TestCliClassify::classifyErrors()
{
    QFETCH(QStringList, args);
    QFETCH(int, exitCode);
    const Run r = run(QStringList{QStringLiteral("classify")} + args);
    QCOMPARE(r.exitCode, exitCode);
    QVERIFY(r.err.startsWith("rankscope: "));
}

QTEST_GUILESS_MAIN(TestCliClassify)
#include "tst_cliclassify.moc"
