#include "model/analysis/autocheckevaluator.h"
#include "model/analysis/sessionanalysis.h"
#include "model/kb/taxonomy.h"
#include "model/tracesession.h"
#include "tests/support/rankconsole.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <set>

using namespace rankscope;
using rankscope::testing::RankLines;
using rankscope::testing::stepTrace;

Q_DECLARE_METATYPE(rankscope::AutoCheckOutcome)

namespace {

using Files = QMap<QString, QByteArray>;

Files logsOf(const QList<RankLines>& ranks)
{
    Files files;
    for (const RankLines& r : ranks)
        files.insert(QStringLiteral("rank%1.log").arg(r.rank), r.text());
    return files;
}

QList<RankLines> pair()
{
    RankLines r0;
    RankLines r1;
    r1.rank = 1;
    return {r0, r1};
}

} // namespace

class TestAutoCheckEvaluator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyDeclaredCheckIsEvaluated();
    void synthetic_data();
    void synthetic();
    void fixtures_data();
    void fixtures();
    void rootCauseFromTheTraces_data();
    void rootCauseFromTheTraces();
    void evidenceText();
    void oneCheckSeesTheAnalysedJobOnly();
};

void TestAutoCheckEvaluator::everyDeclaredCheckIsEvaluated()
{
    QSet<QString> declared;
    for (const AutoCheck& c : Taxonomy::instance().autoChecks())
        declared.insert(c.id);
    const QStringList ids = AutoCheckEvaluator::checkIds();
    QCOMPARE(QSet<QString>(ids.begin(), ids.end()), declared);
    for (const Walkthrough& w : Taxonomy::instance().walkthroughs())
        for (const WalkthroughStep& s : w.steps)
            if (!s.autoCheck.isEmpty())
                QVERIFY2(AutoCheckEvaluator::canEvaluate(s.autoCheck), qPrintable(s.autoCheck));
}

void TestAutoCheckEvaluator::synthetic_data()
{
    QTest::addColumn<QString>("check");
    QTest::addColumn<Files>("files");
    QTest::addColumn<AutoCheckOutcome>("outcome");
    QTest::addColumn<QString>("says"); // in the summary, the missing facts or the evidence

    const auto P = AutoCheckOutcome::Passed;
    const auto F = AutoCheckOutcome::Failed;
    const auto U = AutoCheckOutcome::Unknown;
    const QString v = QStringLiteral("same_framework_version");
    QTest::newRow("versions pass")
        << v << logsOf(pair()) << P << QStringLiteral("torch version 2.1.0");
    {
        auto r = pair();
        r[1].torch = QStringLiteral("2.0.1");
        QTest::newRow("versions fail torch")
            << v << logsOf(r) << F << QStringLiteral("2.0.1 on rank 1");
    }
    {
        auto r = pair();
        r[1].nccl = QStringLiteral("2.14.3+cuda12.1");
        QTest::newRow("versions fail nccl")
            << v << logsOf(r) << F << QStringLiteral("NCCL version differs");
    }
    {
        auto r = pair();
        r[1].nccl.clear();
        QTest::newRow("versions unknown")
            << v << logsOf(r) << U << QStringLiteral("rank.nccl_version absent on rank 1");
    }

    const QString env = QStringLiteral("rendezvous_env_consistent");
    QTest::newRow("env pass") << env << logsOf(pair()) << P << QStringLiteral("MASTER_PORT 29500");
    {
        auto r = pair();
        r[1].masterPort = QStringLiteral("29501");
        QTest::newRow("env fail port")
            << env << logsOf(r) << F << QStringLiteral("29501 on rank 1");
    }
    {
        auto r = pair();
        r[0].world = r[1].world = 4;
        // Their communicators of 4 completed: ranks 2 and 3 started, they only left no file
        // here (all_ranks_present says so); the environment itself is consistent.
        QTest::newRow("env pass world") << env << logsOf(r) << P << QStringLiteral("WORLD_SIZE 4");
        QTest::newRow("present fail world")
            << QStringLiteral("all_ranks_present") << logsOf(r) << F
            << QStringLiteral("WORLD_SIZE is 4 but ranks 2, 3 left no log, trace or dump");
        // No rank got past the rendezvous: the ranks WORLD_SIZE names beyond them never started.
        for (RankLines& l : r) {
            l.ncclOutput = false;
            l.lastStep = -1;
        }
        QTest::newRow("env fail world")
            << env << logsOf(r) << F
            << QStringLiteral("WORLD_SIZE is 4 but only ranks 0, 1 started (ranks 2, 3 left no "
                              "file");
    }
    {
        auto r = pair();
        r[0].masterAddr.clear();
        QTest::newRow("env unknown")
            << env << logsOf(r) << U << QStringLiteral("rank.env.MASTER_ADDR absent on rank 0");
    }

    const QString present = QStringLiteral("all_ranks_present");
    QTest::newRow("present pass") << present << logsOf(pair()) << P
                                  << QStringLiteral("All 2 ranks");
    {
        auto r = pair();
        r[0].world = r[1].world = 3;
        QTest::newRow("present fail absent")
            << present << logsOf(r) << F << QStringLiteral("rank 2 left no log");
    }
    {
        auto r = pair();
        r[1].initComplete = false;
        QTest::newRow("present fail init")
            << present << logsOf(r) << F << QStringLiteral("rank 1 logged NCCL output");
    }
    {
        auto r = pair();
        r[1].ncclOutput = false;
        QTest::newRow("present unknown")
            << present << logsOf(r) << U
            << QStringLiteral("rank.nccl.init_complete absent on rank 1");
    }

    const QString iface = QStringLiteral("same_nccl_interface");
    QTest::newRow("iface pass") << iface << logsOf(pair()) << P << QStringLiteral("Socket eth0");
    {
        auto r = pair();
        r[1].net = QStringLiteral("Socket : Using [0]ens5:10.0.0.2<0>");
        QTest::newRow("iface fail")
            << iface << logsOf(r) << F << QStringLiteral("Socket ens5 on rank 1");
    }
    {
        auto r = pair();
        r[0].net.clear();
        QTest::newRow("iface unknown")
            << iface << logsOf(r) << U
            << QStringLiteral("rank.nccl.net_interface absent on rank 0");
    }

    const QString socket = QStringLiteral("nccl_transport_not_socket");
    {
        auto r = pair();
        r[0].net = r[1].net = QStringLiteral("IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>");
        QTest::newRow("socket pass") << socket << logsOf(r) << P << QStringLiteral("InfiniBand");
        r[1].net = QStringLiteral("Socket : Using [0]eth0:10.0.0.2<0>");
        QTest::newRow("socket fail")
            << socket << logsOf(r) << F << QStringLiteral("rank 1 fell back to NET/Socket");
        r[1].net.clear();
        QTest::newRow("socket unknown")
            << socket << logsOf(r) << U
            << QStringLiteral("rank.nccl.net_transport absent on rank 1");
    }

    const QString port = QStringLiteral("no_port_in_use");
    QTest::newRow("port pass") << port << logsOf(pair()) << P << QStringLiteral("No bind failure");
    {
        auto r = pair();
        r[0].extra << QStringLiteral(
            "00.000 ERROR c10d: The server socket has failed to bind to [::]:29500 (errno: 98 - "
            "Address already in use).");
        QTest::newRow("port fail") << port << logsOf(r) << F << QStringLiteral("rank0.log:");
    }
    {
        auto r = pair();
        r.removeLast();
        r[0].world = 2;
        Files files = logsOf(r);
        files.insert(QStringLiteral("rank1.pt.trace.json"), stepTrace(1, 2, 1000));
        QTest::newRow("port unknown")
            << port << files << U << QStringLiteral("rank.log.bind_errors absent on rank 1");
    }

    const QString oom = QStringLiteral("no_oom_before_hang");
    const QString timeout = QStringLiteral(
        "30.000 ERROR torch.distributed: [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600010 milliseconds "
        "before timing out.");
    const QString cudaOom = QStringLiteral(
        "%1 ERROR train: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
        "GiB (GPU 1; 15.78 GiB total capacity)");
    QTest::newRow("oom pass") << oom << logsOf(pair()) << P << QStringLiteral("No rank reported");
    {
        auto r = pair();
        r[0].extra << timeout;
        r[1].extra << cudaOom.arg(QStringLiteral("10.000"));
        QTest::newRow("oom fail") << oom << logsOf(r) << F << QStringLiteral("CUDA out of memory");
        r[1].extra = {cudaOom.arg(QStringLiteral("50.000"))};
        QTest::newRow("oom after hang passes")
            << oom << logsOf(r) << P << QStringLiteral("only after the first");
    }
    {
        auto r = pair();
        r.removeLast();
        Files files = logsOf(r);
        files.insert(QStringLiteral("rank1.pt.trace.json"), stepTrace(1, 2, 1000));
        QTest::newRow("oom unknown")
            << oom << files << U << QStringLiteral("rank.errors.kind absent on rank 1");
    }

    const QString steps = QStringLiteral("all_ranks_same_step_count");
    QTest::newRow("steps pass") << steps << logsOf(pair()) << P << QStringLiteral("last step 9");
    {
        auto r = pair();
        r[1].lastStep = 5;
        QTest::newRow("steps fail") << steps << logsOf(r) << F << QStringLiteral("5 on rank 1");
        r[1].lastStep = -1;
        QTest::newRow("steps unknown")
            << steps << logsOf(r) << U << QStringLiteral("rank.step_count absent on rank 1");
    }

    const QString gpu = QStringLiteral("unique_gpu_per_rank");
    QTest::newRow("gpu pass") << gpu << logsOf(pair()) << P << QStringLiteral("GPU of its own");
    {
        auto r = pair();
        r[1].device = 0;
        QTest::newRow("gpu fail") << gpu << logsOf(r) << F
                                  << QStringLiteral("share device 0 on node1");
        r[1].host = QStringLiteral("node2");
        QTest::newRow("gpu other host passes")
            << gpu << logsOf(r) << P << QStringLiteral("GPU of its own");
        r[1].ncclOutput = false;
        QTest::newRow("gpu unknown")
            << gpu << logsOf(r) << U << QStringLiteral("rank.cuda_device absent on rank 1");
    }

    // Who the others wait for is StragglerDetector's decision (tested on real runs below):
    // step spans without collectives give it nothing to compare.
    const QString straggler = QStringLiteral("no_straggler_rank");
    {
        Files files = logsOf(pair());
        files.insert(QStringLiteral("rank0.pt.trace.json"), stepTrace(0, 5, 10'000));
        files.insert(QStringLiteral("rank1.pt.trace.json"), stepTrace(1, 5, 20'000));
        QTest::newRow("straggler unknown")
            << straggler << files << U << QStringLiteral("rank.collectives.arrival absent");
    }

    const QString root = QStringLiteral("root_error_before_cascade");
    const QString cascade = QStringLiteral(
        "05.000 ERROR c10d: HorovodInternalError: Horovod has been shut down. This was caused by "
        "an exception on one of the ranks");
    {
        auto r = pair();
        r[0].extra << cudaOom.arg(QStringLiteral("01.000"));
        r[1].extra << cascade;
        QTest::newRow("root pass")
            << root << logsOf(r) << P << QStringLiteral("root error is in the logs: rank 0");
        // The root is LogTriage's: a cascade line stamped before the OOM does not make it one.
        r[0].extra = {cudaOom.arg(QStringLiteral("09.000"))};
        QTest::newRow("root despite an earlier cascade")
            << root << logsOf(r) << P << QStringLiteral("root error is in the logs: rank 0");
        r[0].extra.clear();
        QTest::newRow("root fail") << root << logsOf(r) << F << QStringLiteral("only consequences");
        r[0].extra = {timeout};
        r[1].extra.clear();
        QTest::newRow("root fail timeout")
            << root << logsOf(r) << F << QStringLiteral("timeouts waiting for a peer");
        QTest::newRow("root unknown no errors")
            << root << logsOf(pair()) << U << QStringLiteral("No rank logged an error");
    }
}

static SessionPtr loadFiles(const QTemporaryDir& dir, const Files& files)
{
    for (auto it = files.begin(); it != files.end(); ++it) {
        QFile f(dir.filePath(it.key()));
        if (!f.open(QIODevice::WriteOnly) || f.write(it.value()) != it.value().size()) return {};
    }
    return loadSession(dir.path());
}

static const AutoCheckResult* resultOf(const TraceSession& session, const QString& id)
{
    for (const AutoCheckResult& r : session.autoChecks)
        if (r.checkId == id) return &r;
    return nullptr;
}

void TestAutoCheckEvaluator::synthetic()
{
    QFETCH(QString, check);
    QFETCH(Files, files);
    QFETCH(AutoCheckOutcome, outcome);
    QFETCH(QString, says);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const SessionPtr session = loadFiles(dir, files);
    QVERIFY(session);
    // The loader evaluates every check once; it must agree with a direct evaluation.
    QCOMPARE(session->autoChecks.size(), std::size_t(AutoCheckEvaluator::checkIds().size()));
    const AutoCheckResult* r = resultOf(*session, check);
    QVERIFY(r);
    const QString text = r->evidenceText();
    QVERIFY2(r->outcome == outcome,
             qPrintable(autoCheckOutcomeLabel(r->outcome) + QLatin1Char('\n') + text));
    QVERIFY2(text.contains(says), qPrintable(text));
    if (outcome == AutoCheckOutcome::Unknown)
        QVERIFY2(!r->missing.isEmpty() || r->summary.contains(QLatin1String("No rank")),
                 qPrintable(text));
    if (outcome == AutoCheckOutcome::Failed) QVERIFY2(!r->evidence.empty(), qPrintable(text));
    QSet<QString> cited;
    for (const Evidence& e : r->evidence) {
        QVERIFY2(!e.path.empty(), qPrintable(text));
        const QString key = QStringLiteral("%1:%2:%3")
                                .arg(QString::fromStdString(e.path))
                                .arg(e.line)
                                .arg(e.timeNs);
        QVERIFY2(!cited.contains(key), qPrintable(text)); // each line cited once
        cited.insert(key);
    }
}

void TestAutoCheckEvaluator::fixtures_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("check");
    QTest::addColumn<AutoCheckOutcome>("outcome");
    const auto P = AutoCheckOutcome::Passed;
    const auto F = AutoCheckOutcome::Failed;
    const auto U = AutoCheckOutcome::Unknown;
    QTest::newRow("healthy collectives")
        << QStringLiteral("healthy") << QStringLiteral("same_collective_sequence") << P;
    QTest::newRow("mismatch collectives") << QStringLiteral("mismatched_collective")
                                          << QStringLiteral("same_collective_sequence") << F;
    QTest::newRow("no traces collectives")
        << QStringLiteral("setup_failure") << QStringLiteral("same_collective_sequence") << U;
    QTest::newRow("straggler steps")
        << QStringLiteral("straggler") << QStringLiteral("no_straggler_rank") << F;
    QTest::newRow("healthy steps")
        << QStringLiteral("healthy") << QStringLiteral("no_straggler_rank") << P;
    // A hang is not a straggler: ranks that waited differ by sub-millisecond step times.
    QTest::newRow("hang is no straggler")
        << QStringLiteral("hang_timeout") << QStringLiteral("no_straggler_rank") << P;
    QTest::newRow("straggler w4 steps")
        << QStringLiteral("straggler_w4") << QStringLiteral("no_straggler_rank") << F;
    // The headline's cause and the checklist agree: WORLD_SIZE names a rank never launched.
    QTest::newRow("world size not launched") << QStringLiteral("world_size_mismatch_w3")
                                             << QStringLiteral("rendezvous_env_consistent") << F;
    QTest::newRow("healthy env") << QStringLiteral("healthy")
                                 << QStringLiteral("rendezvous_env_consistent") << P;
    QTest::newRow("gloo has no nccl version")
        << QStringLiteral("healthy") << QStringLiteral("same_framework_version") << U;
    // Rank 1's shard had fewer batches: every rank's last step is the one where it ran out, but
    // rank 1 left its loop for a barrier while the others trained on (ground_truth.json).
    QTest::newRow("uneven inputs steps")
        << QStringLiteral("uneven_inputs") << QStringLiteral("all_ranks_same_step_count") << F;
    QTest::newRow("healthy step count")
        << QStringLiteral("healthy") << QStringLiteral("all_ranks_same_step_count") << P;
}

void TestAutoCheckEvaluator::fixtures()
{
    QFETCH(QString, folder);
    QFETCH(QString, check);
    QFETCH(AutoCheckOutcome, outcome);
    const SessionPtr session = loadSession(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + folder);
    QVERIFY(session);
    const AutoCheckResult* r = resultOf(*session, check);
    QVERIFY(r);
    QVERIFY2(r->outcome == outcome,
             qPrintable(autoCheckOutcomeLabel(r->outcome) + QLatin1Char('\n') + r->evidenceText()));
}

void TestAutoCheckEvaluator::rootCauseFromTheTraces_data()
{
    QTest::addColumn<QString>("folder");
    for (const char* run : {"hang_timeout", "hang_timeout_w2", "hang_timeout_w3_step0",
                            "hang_timeout_w4", "hang_timeout_w5"})
        QTest::newRow(run) << QString::fromLatin1(run);
}

// A rank that stalled logs no error; the others log only their timeouts. The traces name the
// stalled rank (ground_truth.json's faulty ranks), so the checklist's "find the failing rank" step
// passes and says the cause is the trace's: it must not read "Failed" beside that finding.
void TestAutoCheckEvaluator::rootCauseFromTheTraces()
{
    QFETCH(QString, folder);
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + folder;
    QFile truthFile(dir + QStringLiteral("/ground_truth.json"));
    QVERIFY(truthFile.open(QIODevice::ReadOnly));
    std::vector<int> faulty;
    for (const QJsonValue& v : QJsonDocument::fromJson(truthFile.readAll())
                                   .object()[QLatin1String("faulty_ranks")]
                                   .toArray())
        faulty.push_back(v.toInt());
    QVERIFY(!faulty.empty());
    const SessionPtr session = loadSession(dir);
    const Finding* culprit = nullptr;
    for (const Finding& f : session->analysis.findings)
        if (f.severity == Severity::Error && f.ranks == faulty) {
            culprit = &f;
            break;
        }
    QVERIFY(culprit);
    const AutoCheckResult* r = resultOf(*session, QStringLiteral("root_error_before_cascade"));
    QVERIFY(r);
    const QString text = r->evidenceText();
    QVERIFY2(r->outcome == AutoCheckOutcome::Passed, qPrintable(text));
    QVERIFY2(r->summary.contains(QStringLiteral("from the traces")), qPrintable(text));
    QVERIFY2(r->summary.contains(QString::fromStdString(culprit->id)), qPrintable(text));
    for (const Evidence& e : r->evidence)
        QVERIFY2(e.line < 0, qPrintable(text)); // the trace's events, not the waiting lines
}

void TestAutoCheckEvaluator::evidenceText()
{
    AutoCheckResult r;
    r.summary = QStringLiteral("MASTER_PORT differs.");
    r.missing << QStringLiteral("rank.env.WORLD_SIZE absent on rank 3");
    Evidence e;
    e.path = "rank1.log";
    e.line = 4;
    e.text = "MASTER_PORT=29501";
    r.evidence.push_back(e);
    QCOMPARE(r.evidenceText(), QStringLiteral("MASTER_PORT differs.\nMissing: rank.env.WORLD_SIZE "
                                              "absent on rank 3\nrank1.log:4: MASTER_PORT=29501"));
}

QTEST_GUILESS_MAIN(TestAutoCheckEvaluator)
// Two real runs in subfolders (the healthy 2-rank run in a/, the 3-rank straggler run in b/, their
// logs naming different master ports): diagnose() analyses b/ alone. A check evaluated on its own
// must see what the loader's checks saw: the same outcome and evidence, none from a/'s files.
void TestAutoCheckEvaluator::oneCheckSeesTheAnalysedJobOnly()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::set<std::string> otherRun; // a/'s files, as the folder lists them
    for (const auto& [sub, run] : {std::pair{"a", "healthy"}, std::pair{"b", "straggler"}}) {
        QVERIFY(QDir(dir.path()).mkdir(QString::fromLatin1(sub)));
        for (const QString& name :
             QDir(data + QString::fromLatin1(run))
                 .entryList({QStringLiteral("rank*"), QStringLiteral("launcher.log")},
                            QDir::Files)) {
            const QString to = QString::fromLatin1(sub) + u'/' + name;
            QVERIFY(QFile::copy(data + QString::fromLatin1(run) + u'/' + name, dir.filePath(to)));
            if (std::string(sub) == "a") otherRun.insert(to.toStdString());
        }
    }
    QVERIFY(otherRun.size() >= 4);
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session);
    QCOMPARE(session->autoChecks.size(), std::size_t(AutoCheckEvaluator::checkIds().size()));
    const AnalysedJob job(*session);
    const std::vector<Evidence> logs = classifyLogs(job.read());
    for (const AutoCheckResult& all : session->autoChecks) {
        const AutoCheckResult one = AutoCheckEvaluator::evaluate(
            job.read(), job.facts(), session->analysis, all.checkId, logs);
        const QString text = all.checkId + u'\n' + all.evidenceText() + QStringLiteral("\n---\n") +
                             one.evidenceText();
        QVERIFY2(one.outcome == all.outcome, qPrintable(text));
        QVERIFY2(one.summary == all.summary, qPrintable(text));
        QCOMPARE(one.evidence.size(), all.evidence.size());
        for (const Evidence& e : one.evidence)
            QVERIFY2(!otherRun.count(e.path), qPrintable(text));
    }
}

#include "tst_autocheckevaluator.moc"
