#include "model/trace/elasticerrorreader.h"
#include "model/trace/logreader.h"
#include "model/tracesession.h"
#include "tests/support/findings.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace rankscope;

class TestElasticError : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void errorFiles_data();
    void errorFiles();
    void legacyAndBad_data();
    void legacyAndBad();
    void launcherBox_data();
    void launcherBox();
    void signalEntry();
    void errorFileStandsInForAMissingLog();
};

static QString fixture(const QString& name)
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + name;
}

static QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

static void addScenarios()
{
    QTest::addColumn<QString>("scenario");
    for (const char* s : {"mismatched_collective", "hang_timeout", "setup_failure", "rank_crash",
                          "unused_parameters", "uneven_inputs"})
        QTest::newRow(s) << QString::fromLatin1(s);
}

void TestElasticError::errorFiles_data()
{
    addScenarios();
}

// Each error file says what the rank's exit_status in ground_truth.json says.
void TestElasticError::errorFiles()
{
    QFETCH(QString, scenario);
    const auto truth = nlohmann::json::parse(
        readFile(fixture(scenario) + QStringLiteral("/ground_truth.json")).toStdString());
    int files = 0;
    for (const auto& [rank, observed] : truth["observed"]["ranks"].items()) {
        if (observed["torchelastic_error_file"].is_null()) continue;
        ++files;
        QString error;
        const auto e = ElasticErrorReader::readErrorFile(
            readFile(
                fixture(scenario) + QLatin1Char('/') +
                QString::fromStdString(observed["torchelastic_error_file"].get<std::string>())),
            &error);
        QVERIFY2(e, qPrintable(error));
        // ground_truth.json cuts long messages; the file has all of it.
        QVERIFY(QString::fromStdString(e->exceptionType + ": " + e->message)
                    .simplified()
                    .startsWith(QString::fromStdString(observed["exit_status"].get<std::string>())
                                    .simplified()));
        QVERIFY(e->timestampS > 1'700'000'000);
        QVERIFY(QString::fromStdString(e->traceback).startsWith(QLatin1String("Traceback")));
    }
    QVERIFY(files > 0);
}

void TestElasticError::legacyAndBad_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("type"); // "!" + text: an error containing text
    QTest::newRow("legacy string")
        << QByteArray(R"({"message": "ValueError: bad lr", "errorTraits": {}})") << "ValueError";
    QTest::newRow("plain text message") << QByteArray(R"({"message": "worker died"})") << "";
    QTest::newRow("truncated") << QByteArray(R"({"message": {"message": "IndexError: x", "extraI)")
                               << "!not valid JSON";
    QTest::newRow("no message") << QByteArray(R"({"other": 1})") << "!no \"message\"";
    QTest::newRow("wrong type") << QByteArray(R"({"message": 3})") << "!neither";
    QTest::newRow("empty") << QByteArray() << "!not valid JSON";
    QTest::newRow("binary") << QByteArray("\x00\xff{", 3) << "!not valid JSON";
}

void TestElasticError::legacyAndBad()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, type);
    QString error;
    const auto e = ElasticErrorReader::readErrorFile(bytes, &error);
    if (type.startsWith(QLatin1Char('!'))) {
        QVERIFY(!e);
        QVERIFY2(error.contains(type.mid(1)), qPrintable(error));
        return;
    }
    QVERIFY2(e, qPrintable(error));
    QCOMPARE(QString::fromStdString(e->exceptionType), type);
}

void TestElasticError::launcherBox_data()
{
    addScenarios();
}

// The ChildFailedError box lists exactly the ranks the README names, with their exception.
void TestElasticError::launcherBox()
{
    QFETCH(QString, scenario);
    const auto truth = nlohmann::json::parse(
        readFile(fixture(scenario) + QStringLiteral("/ground_truth.json")).toStdString());
    const LogReader::Result r = LogReader::readFile(
        fixture(scenario) + QStringLiteral("/launcher.log"), QString(), 2, std::nullopt, true);
    const RankLog* launcher = nullptr;
    for (const RankLog& s : r.streams)
        if (!s.rank) launcher = &s;
    QVERIFY(launcher);
    const std::vector<ElasticError> entries = ElasticErrorReader::readLauncherLog(*launcher);
    QVERIFY(!entries.empty());
    const auto roots = std::count_if(entries.begin(), entries.end(), [](const ElasticError& e) {
        return e.origin == ElasticError::Origin::LauncherRootCause;
    });
    QCOMPARE(roots, 1);
    for (const ElasticError& e : entries) {
        QVERIFY(e.rank.has_value());
        QCOMPARE(e.host, std::string("localhost"));
        QCOMPARE(e.exitCode.value_or(0), 1);
        QVERIFY(e.pid.has_value());
        QVERIFY(QString::fromStdString(e.errorFile).endsWith(QLatin1String("error.json")));
        QVERIFY(!e.time.empty());
        // The box's time, read as the reader's seconds (its local time taken as UTC, as the
        // ranks' log stamps are), computed here by Qt from the text.
        QDateTime boxTime = QDateTime::fromString(QString::fromStdString(e.time),
                                                  QStringLiteral("yyyy-MM-dd_HH:mm:ss"));
        boxTime.setTimeSpec(Qt::UTC);
        QVERIFY(boxTime.isValid());
        QCOMPARE(e.timestampS, boxTime.toSecsSinceEpoch());
        QCOMPARE(e.sourceIndex, 2);
        QVERIFY(launcher->lineText(e.line).startsWith(QLatin1Char('[')));
        // The box repeats the rank's exception; it must agree with what the rank exited with.
        const auto& observed = truth["observed"]["ranks"][std::to_string(*e.rank)];
        QCOMPARE(QString::fromStdString(e.exceptionType + ": " + e.message).simplified().left(60),
                 QString::fromStdString(observed["exit_status"].get<std::string>())
                     .simplified()
                     .left(60));
    }
}

void TestElasticError::signalEntry()
{
    const QByteArray box = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                           "============================================================\n"
                           "train.py FAILED\n"
                           "------------------------------------------------------------\n"
                           "Failures:\n"
                           "  <NO_OTHER_FAILURES>\n"
                           "------------------------------------------------------------\n"
                           "Root Cause (first observed failure):\n"
                           "[0]:\n"
                           "  time      : 2024-05-01_10:00:00\n"
                           "  host      : gpu-node-9\n"
                           "  rank      : 5 (local_rank: 1)\n"
                           "  exitcode  : -9 (pid: 4242)\n"
                           "  error_file: <N/A>\n"
                           "  traceback : Signal 9 (SIGKILL) received by PID 4242\n"
                           "============================================================\n";
    const LogReader::Result r = LogReader::read(box, QString(), 0, std::nullopt, true);
    const std::vector<ElasticError> entries =
        ElasticErrorReader::readLauncherLog(r.streams.front());
    QCOMPARE(entries.size(), std::size_t(1));
    const ElasticError& e = entries.front();
    QCOMPARE(e.origin, ElasticError::Origin::LauncherRootCause);
    QCOMPARE(e.rank.value_or(-1), 5);
    QCOMPARE(e.localRank.value_or(-1), 1);
    QCOMPARE(e.exitCode.value_or(0), -9);
    QCOMPARE(e.pid.value_or(0), 4242);
    QCOMPARE(e.signal, std::string("SIGKILL"));
    QCOMPARE(e.host, std::string("gpu-node-9"));
    QVERIFY(e.errorFile.empty());
    QVERIFY(e.exceptionType.empty());
}

// The crashed rank's own log is gone (not copied, or never flushed): its torchelastic error file
// still says it failed first, and with what.
void TestElasticError::errorFileStandsInForAMissingLog()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QDir from(fixture(QStringLiteral("rank_crash_w4")));
    for (const QString& name : from.entryList(QDir::Files))
        if (name != QLatin1String("rank0.log") && name != QLatin1String("launcher.log"))
            QVERIFY(QFile::copy(from.filePath(name), dir.filePath(name)));
    const SessionPtr session = loadSession(dir.path());
    const Finding* top = test::topError(session->analysis);
    QVERIFY(top);
    QCOMPARE(top->kind, FindingKind::Crash);
    QCOMPARE(top->ranks, std::vector<int>{0});
    // The fault's loop step 2 is the trace's own ProfilerStep#1: PyTorch 1.13 names the first
    // two steps #0, and findings use the trace's numbers.
    QCOMPARE(top->step, 1);
    QVERIFY2(std::any_of(top->evidence.begin(), top->evidence.end(),
                         [](const Evidence& e) {
                             return e.path == "rank0.error.json" && e.text.find("IndexError") == 0;
                         }),
             top->summary.c_str());
}

QTEST_GUILESS_MAIN(TestElasticError)
#include "tst_elasticerror.moc"
