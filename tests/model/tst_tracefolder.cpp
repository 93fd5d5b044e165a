#include "model/analysis/sessionanalysis.h"
#include "model/trace/logreader.h"
#include "model/trace/tracefolder.h"
#include "model/tracesession.h"
#include "tests/support/gzip.h"
#include "tests/support/testfiles.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

using namespace rankscope;

class TestTraceFolder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void scenarios_data();
    void scenarios();
    void rankFromFileName_data();
    void rankFromFileName();
    void sniffKind_data();
    void sniffKind();
    void missingFolderIsAnError();
    void fileIsNotAFolder();
    void unattributedIsNeverRankZero();
    void linkOutOfFolderIsNotFollowed();
    void emptyAndBinaryFilesAreListed();
    void attributeRank_data();
    void attributeRank();
    void duplicateRankIsWarned();
    void sessionReadsEveryFixtureSource_data();
    void sessionReadsEveryFixtureSource();
    void badFilesDoNotStopTheSession();
    void horovodTimeline();
    void horovodTimelineCutMidWrite();
    void horovodTimelineRankIsTheCoordinatorsWhateverItsName();
    void realTraceRanks_data();
    void realTraceRanks();
    void contentBeatsSwappedAndMisleadingNames();
    void tensorboardNamedPairGetsRanksFromContent();
    void namesClaimingAFormatTheContentIsNot();
    void formatsNotReadAreSkipped();
    void outOfRangeRanksAreUnattributedWithAReason();
    void everyUnattributedSourceSaysWhy();
    void unattributedReasons();
    void nonRegularFilesAreListedAndNeverBlock();
    void fileSwappedAfterDiscoveryIsNotFollowed();
    void oddlyEncodedLogsReachTheAnalysis_data();
    void oddlyEncodedLogsReachTheAnalysis();
};

static QString scenarioDir(const char* name)
{
    return QStringLiteral(RANKSCOPE_TEST_DATA "/traces/") + QLatin1String(name);
}

void TestTraceFolder::scenarios_data()
{
    QTest::addColumn<QString>("dir");
    QTest::addColumn<int>("worldSize");
    QTest::addColumn<int>("traces");
    QTest::addColumn<int>("errorFiles");
    QTest::addRow("healthy") << scenarioDir("healthy") << 2 << 2 << 0;
    QTest::addRow("straggler") << scenarioDir("straggler") << 3 << 3 << 0;
    QTest::addRow("hang_timeout") << scenarioDir("hang_timeout") << 3 << 3 << 2;
    QTest::addRow("setup_failure") << scenarioDir("setup_failure") << 2 << 0 << 2;
    QTest::addRow("rank_crash") << scenarioDir("rank_crash") << 3 << 3 << 3;
}

void TestTraceFolder::scenarios()
{
    QFETCH(QString, dir);
    QFETCH(int, worldSize);
    QFETCH(int, traces);
    QFETCH(int, errorFiles);
    const TraceFolder folder = TraceFolder::discover(dir);
    QVERIFY2(folder.isValid(), qPrintable(folder.error()));
    QCOMPARE(folder.worldSize(), worldSize);
    int kineto = 0, elastic = 0, logs = 0, launcher = 0;
    for (const SourceFile& s : folder.sources()) {
        kineto += s.kind == SourceKind::Kineto;
        elastic += s.kind == SourceKind::ElasticError;
        logs += s.kind == SourceKind::Log;
        if (s.kind == SourceKind::LauncherLog) {
            ++launcher;
            QVERIFY2(!s.rank, "the combined launcher log belongs to no single rank");
        }
        if (s.kind == SourceKind::Kineto || s.kind == SourceKind::Log) QVERIFY(s.rank.has_value());
    }
    QCOMPARE(kineto, traces);
    QCOMPARE(elastic, errorFiles);
    QCOMPARE(logs, worldSize);
    QCOMPARE(launcher, 1);
    for (int r = 0; r < worldSize; ++r) {
        const QList<SourceFile> files = folder.sourcesOfRank(r);
        QVERIFY(std::any_of(files.begin(), files.end(), [&](const SourceFile& f) {
            return f.relativePath == QStringLiteral("rank%1.log").arg(r);
        }));
    }
}

void TestTraceFolder::rankFromFileName_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("rank"); // -1: no rank
    QTest::addRow("plain") << "rank3.pt.trace.json" << 3;
    QTest::addRow("dash") << "rank-12.json" << 12;
    QTest::addRow("underscore") << "trace_rank_7.json.gz" << 7;
    QTest::addRow("tensorboard") << "rank5.1733140000123.pt.trace.json" << 5;
    QTest::addRow("worker") << "worker4.log" << 4;
    QTest::addRow("flight recorder") << "nccl_trace_rank_15" << 15;
    QTest::addRow("hostname_pid") << "node01_12345.pt.trace.json" << -1;
    QTest::addRow("HTA sampled") << "sampled_rank-1.json.gz" << 1;
    QTest::addRow("HTA dash") << "rank-3.json.gz" << 3;
    QTest::addRow("tensorboard worker_name")
        << "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz" << 34;
    QTest::addRow("tensorboard worker_name _") << "rank_3.1700000000123.pt.trace.json" << 3;
    QTest::addRow("tensorboard default")
        << "devgpu003_1234.1679055439123456789.pt.trace.json.gz" << -1;
    QTest::addRow("tensorboard default, pod host")
        << "train-worker-3_57.1733140000123456789.pt.trace.json.gz" << -1;
    QTest::addRow("frank is no rank") << "frank2.log" << -1;
    QTest::addRow("nothing") << "launcher.log" << -1;
}

void TestTraceFolder::rankFromFileName()
{
    QFETCH(QString, name);
    QFETCH(int, rank);
    const std::optional<int> got = TraceFolder::rankFromFileName(name);
    QCOMPARE(got.value_or(-1), rank);
}

void TestTraceFolder::sniffKind_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("kind");
    QTest::addRow("kineto object")
        << "x.json" << QByteArray(R"({"schemaVersion":1,"traceEvents":[)")
        << int(SourceKind::Kineto);
    QTest::addRow("legacy array") << "x.json" << QByteArray(R"([{"name": "a", "ph": "X"})")
                                  << int(SourceKind::Kineto);
    QTest::addRow("gzip in gzip") << "x.json.gz" << QByteArray("\x1f\x8b\x08\x00", 4)
                                  << int(SourceKind::Unknown);
    QTest::addRow("pickle") << "nccl_trace_rank_0" << QByteArray("\x80\x04\x95", 3)
                            << int(SourceKind::FlightRecorder);
    QTest::addRow("fr json") << "fr_0.json" << QByteArray(R"({"version": "2.5", "pg_config": {})")
                             << int(SourceKind::FlightRecorder);
    QTest::addRow("elastic") << "error.json"
                             << QByteArray(R"({"message": {"message": "E", "extraInfo": {}}})")
                             << int(SourceKind::ElasticError);
    QTest::addRow("horovod")
        << "timeline.json"
        << QByteArray(
               R"([{"name": "process_name", "ph": "M", "args": {"start_time_since_epoch_in_micros": 1}})")
        << int(SourceKind::HorovodTimeline);
    QTest::addRow("nccl log") << "nccl.log"
                              << QByteArray(
                                     "h:1:2 [0] NCCL INFO Bootstrap\nh:1:2 [0] NCCL INFO x\n")
                              << int(SourceKind::NcclLog);
    QTest::addRow("torchrun") << "console.txt"
                              << QByteArray("WARNING:torch.distributed.run:\n*****\n")
                              << int(SourceKind::LauncherLog);
    QTest::addRow("mpirun short tag")
        << "job.out" << QByteArray("[3]<stderr>:hello\n[2]<stdout>:x\n")
        << int(SourceKind::LauncherLog);
    QTest::addRow("torchrun rank prefix")
        << "console.log" << QByteArray("[rank1]:[W1218 x] y\n") << int(SourceKind::LauncherLog);
    QTest::addRow("plain log") << "rank0.log" << QByteArray("2026-01-01 step 0 loss 1\n")
                               << int(SourceKind::Log);
    QTest::addRow("bracketed timestamp log")
        << "rank2.log"
        << QByteArray("[2026-12-02 21:01:02,345] INFO train (rank 2): it 3/8 loss=0.5\n")
        << int(SourceKind::Log);
    QTest::addRow("glog bracket log")
        << "worker.txt" << QByteArray("[W socket.cpp:601] [c10d] The server socket failed\n")
        << int(SourceKind::Log);
    QTest::addRow("string array") << "names.json" << QByteArray(R"(["a", "b"])")
                                  << int(SourceKind::Unknown);
    QTest::addRow("binary") << "blob.bin" << QByteArray("\x00\x01\x02\x03", 4)
                            << int(SourceKind::Unknown);
    QTest::addRow("other json") << "config.json" << QByteArray(R"({"lr": 0.1})")
                                << int(SourceKind::Unknown);
}

void TestTraceFolder::sniffKind()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, head);
    QFETCH(int, kind);
    QCOMPARE(int(TraceFolder::sniffKind(name, head)), kind);
}

void TestTraceFolder::missingFolderIsAnError()
{
    const TraceFolder folder = TraceFolder::discover(QStringLiteral("/nonexistent/rankscope"));
    QVERIFY(!folder.isValid());
    QVERIFY(folder.error().contains(QLatin1String("no such folder")));
}

void TestTraceFolder::fileIsNotAFolder()
{
    const TraceFolder folder =
        TraceFolder::discover(scenarioDir("healthy") + QStringLiteral("/rank0.log"));
    QVERIFY(!folder.isValid());
    QVERIFY(folder.error().contains(QLatin1String("not a folder")));
}

// Two traces without a rank stay unattributed; a lone one is shown as rank 0, saying it is assumed.
void TestTraceFolder::unattributedIsNeverRankZero()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("host_123.pt.trace.json")),
              R"([{"ph": "X", "name": "a"}])");
    const TraceFolder lone = TraceFolder::discover(dir.path());
    QCOMPARE(lone.sources().size(), 1);
    QCOMPARE(lone.sources().first().rank.value_or(-1), 0);
    QVERIFY2(lone.sources().first().rankEvidence.startsWith(QLatin1String("assumed rank 0")),
             qPrintable(lone.sources().first().rankEvidence));
    QCOMPARE(lone.worldSize(), 1);

    writeFile(dir.filePath(QStringLiteral("host_456.pt.trace.json")),
              R"([{"ph": "X", "name": "b"}])");
    const TraceFolder two = TraceFolder::discover(dir.path());
    QCOMPARE(two.sources().size(), 2);
    QCOMPARE(two.unattributedSources().size(), 2);
    QCOMPARE(two.worldSize(), 0);
}

void TestTraceFolder::linkOutOfFolderIsNotFollowed()
{
    QTemporaryDir outside, inside;
    writeFile(outside.filePath(QStringLiteral("rank9.log")), "secret\n");
    writeFile(inside.filePath(QStringLiteral("rank0.log")), "step 0\n");
    QVERIFY(QFile::link(outside.filePath(QStringLiteral("rank9.log")),
                        inside.filePath(QStringLiteral("rank9.log"))));
    QVERIFY(QFile::link(outside.path(), inside.filePath(QStringLiteral("elsewhere"))));
    const TraceFolder folder = TraceFolder::discover(inside.path());
    QCOMPARE(folder.sources().size(), 3); // the link to a folder is listed, not followed
    for (const SourceFile& s : folder.sources()) {
        if (s.relativePath == QLatin1String("rank0.log")) {
            QCOMPARE(s.status, SourceStatus::Ok);
            continue;
        }
        if (s.relativePath == QLatin1String("elsewhere")) {
            QCOMPARE(s.status, SourceStatus::Error);
            QCOMPARE(s.message,
                     QStringLiteral("link to a folder outside the folder; not followed"));
            continue;
        }
        QCOMPARE(s.relativePath, QStringLiteral("rank9.log"));
        QCOMPARE(s.status, SourceStatus::Error);
        QVERIFY2(s.message.contains(QLatin1String("outside the folder")), qPrintable(s.message));
        QVERIFY(!s.descriptor);
    }
}

void TestTraceFolder::emptyAndBinaryFilesAreListed()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "");
    writeFile(dir.filePath(QStringLiteral("core.bin")), QByteArray("\x7f"
                                                                   "ELF\x00\x00",
                                                                   6));
    const TraceFolder folder = TraceFolder::discover(dir.path());
    QCOMPARE(folder.sources().size(), 2);
    for (const SourceFile& s : folder.sources()) {
        QVERIFY(!s.message.isEmpty());
        if (s.relativePath == QLatin1String("rank0.log")) {
            QCOMPARE(s.status, SourceStatus::Error);
        } else {
            QCOMPARE(s.kind, SourceKind::Unknown);
            QCOMPARE(s.status, SourceStatus::Skipped); // an ELF core, under no claiming name
        }
    }
}

void TestTraceFolder::attributeRank_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("rank");
    QTest::addColumn<int>("worldSize");
    QTest::addColumn<QString>("evidence");
    QTest::addRow("distributedInfo beats the name")
        << "rank9.pt.trace.json" << int(SourceKind::Kineto)
        << QByteArray(
               R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}, "traceEvents": [)")
        << 3 << 8 << "distributedInfo";
    QTest::addRow("kineto without distributedInfo")
        << "rank5.1733140000123.pt.trace.json" << int(SourceKind::Kineto)
        << QByteArray(R"({"traceEvents": [)") << 5 << 0 << "file name";
    QTest::addRow("hostname_pid") << "node01_12345.pt.trace.json" << int(SourceKind::Kineto)
                                  << QByteArray(R"({"traceEvents": [)") << -1 << 0 << "";
    QTest::addRow("flight recorder suffix")
        << "my_prefix7" << int(SourceKind::FlightRecorder) << QByteArray("\x80\x04", 2) << 7 << 0
        << "Flight Recorder";
    QTest::addRow("flight recorder json name")
        << "nccl_trace_rank_2.json" << int(SourceKind::FlightRecorder) << QByteArray("{") << 2 << 0
        << "file name";
    QTest::addRow("nccl log by init line")
        << "nccl.log" << int(SourceKind::NcclLog)
        << QByteArray("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 - Init COMPLETE\n"
                      "h:1:1 [0] NCCL INFO comm 0x2 rank 5 nranks 16 cudaDev 0 - Init COMPLETE\n")
        << 5 << 16 << "NCCL init";
    QTest::addRow("nccl log two world ranks")
        << "nccl.log" << int(SourceKind::NcclLog)
        << QByteArray("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 4\nh:2:2 [1] NCCL INFO comm 0x2 "
                      "rank 1 nranks 4\n")
        << -1 << 4 << "";
    QTest::addRow("log world_size")
        << "rank1.log" << int(SourceKind::Log) << QByteArray("starting: rank=1 world_size=6\n") << 1
        << 6 << "file name";
    QTest::addRow("launcher log has no rank") << "rank_console.log" << int(SourceKind::LauncherLog)
                                              << QByteArray("[rank0]: hi\n") << -1 << 0 << "";
}

void TestTraceFolder::attributeRank()
{
    QFETCH(QString, name);
    QFETCH(int, kind);
    QFETCH(QByteArray, head);
    QFETCH(int, rank);
    QFETCH(int, worldSize);
    QFETCH(QString, evidence);
    QString why;
    StatedJob stated;
    stated.worldSize = -1;
    const std::optional<int> got =
        TraceFolder::attributeRank(name, SourceKind(kind), head, {}, &why, &stated);
    QCOMPARE(got.value_or(-1), rank);
    QCOMPARE(stated.worldSize, worldSize);
    QVERIFY2(why.contains(evidence), qPrintable(why));
}

void TestTraceFolder::duplicateRankIsWarned()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank1.log")), "step 0\n");
    writeFile(dir.filePath(QStringLiteral("worker1.log")), "step 0\n");
    writeFile(dir.filePath(QStringLiteral("rank1.error.json")),
              R"({"message": {"message": "E: x", "extraInfo": {}}})");
    const TraceFolder folder = TraceFolder::discover(dir.path());
    QCOMPARE(folder.warnings().size(), 1); // the error file is another kind: no clash
    QVERIFY(folder.warnings().first().contains(QLatin1String("rank 1")));
    QVERIFY(folder.warnings().first().contains(QLatin1String("worker1.log")));
}

void TestTraceFolder::sessionReadsEveryFixtureSource_data()
{
    QTest::addColumn<QString>("dir");
    for (const char* s : {"healthy", "straggler", "mismatched_collective", "hang_timeout",
                          "setup_failure", "rank_crash", "unused_parameters", "uneven_inputs"})
        QTest::newRow(s) << scenarioDir(s);
}

// Every log, error file and launcher stream of a fixture ends up under the right rank.
void TestTraceFolder::sessionReadsEveryFixtureSource()
{
    QFETCH(QString, dir);
    const SessionPtr session = loadSession(dir);
    QVERIFY(session->warnings.isEmpty());
    const int world = session->folder.worldSize();
    std::map<int, int> perRank, launcherStreams;
    for (const RankLog& log : session->logs) {
        if (!log.rank) continue;
        QVERIFY(*log.rank >= 0 && *log.rank < world);
        (log.splitFromCombined ? launcherStreams : perRank)[*log.rank]++;
    }
    for (int r = 0; r < world; ++r) {
        QCOMPARE(perRank[r], 1);
        QCOMPARE(launcherStreams[r], 1);
    }
    for (const ElasticError& e : session->errors) {
        QVERIFY(e.rank.has_value());
        if (e.origin == ElasticError::Origin::ErrorFile)
            QCOMPARE(session->folder.sources()[e.sourceIndex].relativePath,
                     QStringLiteral("rank%1.error.json").arg(*e.rank));
    }
    for (const SourceFile& s : session->folder.sources())
        if (s.kind != SourceKind::Unknown && s.kind != SourceKind::Kineto)
            QCOMPARE(s.status, SourceStatus::Ok);
}

void TestTraceFolder::badFilesDoNotStopTheSession()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "");
    writeFile(dir.filePath(QStringLiteral("core.bin")), QByteArray("\x7f"
                                                                   "ELF\x00\x01",
                                                                   6));
    writeFile(dir.filePath(QStringLiteral("rank1.log")), "step 2 \xc3\x28 bad utf-8\n");
    writeFile(dir.filePath(QStringLiteral("nccl_trace_rank_2")),
              QByteArray("\x80\x04\x95\x10\x00", 5));
    writeFile(dir.filePath(QStringLiteral("nccl_trace_rank_3")),
              QByteArray("\x80\x02\x63os\nsystem\n.", 14));
    writeFile(dir.filePath(QStringLiteral("rank4.error.json")),
              R"({"message": {"message": "IndexError: x", "extra)");
    writeFile(dir.filePath(QStringLiteral("rank5.log")), "2026-01-01 00:00:00.000 step 7 loss 1\n");
    const SessionPtr session = loadSession(dir.path());
    QVERIFY(session->folder.isValid());
    std::map<QString, SourceStatus> status;
    for (const SourceFile& s : session->folder.sources()) {
        QVERIFY2(!s.message.isEmpty(), qPrintable(s.relativePath));
        QVERIFY(!s.message.contains(QLatin1Char('\n')));
        status[s.relativePath] = s.status;
    }
    QCOMPARE(status[QStringLiteral("rank0.log")], SourceStatus::Error);
    QCOMPARE(status[QStringLiteral("nccl_trace_rank_2")], SourceStatus::Error);
    QCOMPARE(status[QStringLiteral("nccl_trace_rank_3")], SourceStatus::Error);
    QCOMPARE(status[QStringLiteral("rank4.error.json")], SourceStatus::Error);
    QCOMPARE(status[QStringLiteral("rank1.log")], SourceStatus::Ok);
    QCOMPARE(status[QStringLiteral("rank5.log")], SourceStatus::Ok);
    QVERIFY(session->dumps.empty());
    std::map<int, int> lastStep;
    for (const RankLog& log : session->logs)
        if (log.rank) lastStep[*log.rank] = log.lastStep().value_or(-1);
    QCOMPARE(lastStep[1], 2);
    QCOMPARE(lastStep[5], 7);
}

// tests/data/horovod/stalled_tensor/README.md says what the hand-written timeline holds.
void TestTraceFolder::horovodTimeline()
{
    const QString dir = QStringLiteral(RANKSCOPE_TEST_DATA "/horovod/stalled_tensor");
    const SessionPtr session = loadSession(dir);
    const QList<SourceFile>& sources = session->folder.sources();
    const auto timeline = std::find_if(sources.begin(), sources.end(), [](const SourceFile& s) {
        return s.kind == SourceKind::HorovodTimeline;
    });
    QVERIFY(timeline != sources.end());
    QCOMPARE(timeline->rank.value_or(-1), 0);
    QVERIFY(timeline->rankEvidence.contains(QLatin1String("coordinator")));
    QCOMPARE(timeline->status, SourceStatus::Ok);
    QVERIFY2(timeline->message.contains(QLatin1String("2 events skipped")),
             qPrintable(timeline->message));

    const EventStore& store = session->events;
    QCOMPARE(store.lanes.size(), std::size_t(2));
    QCOMPARE(store.eventCount(), std::int64_t(54));
    for (const Lane& lane : store.lanes) {
        QCOMPARE(lane.rank, 0);
        QVERIFY(QString::fromStdString(lane.name).startsWith(
            QLatin1String("DistributedAdamOptimizer_Allreduce/")));
        QVERIFY(std::is_sorted(lane.startNs.begin(), lane.startNs.end()));
        QCOMPARE(int(lane.maxDepth), 1); // NCCL_ALLREDUCE in ALLREDUCE, a tick in NEGOTIATE_
    }
    // The open negotiation is the bias tensor's and is the lane's only unfinished event.
    const Lane& bias =
        store
            .lanes[QString::fromStdString(store.lanes[0].name).contains(QLatin1String("bias")) ? 0
                                                                                               : 1];
    QCOMPARE(bias.unfinished.size(), std::size_t(1));
    QCOMPARE(store.strings.view(bias.nameId[std::size_t(bias.unfinished[0])]),
             std::string_view("NEGOTIATE_ALLREDUCE"));

    QCOMPARE(store.collectives.size(), std::size_t(23));
    std::map<int, int> perRank;
    int open = 0;
    for (const CollectiveRecord& c : store.collectives) {
        ++perRank[c.rank];
        QCOMPARE(store.strings.view(c.op), std::string_view("all_reduce"));
        QVERIFY(c.seq >= 0 && c.seq <= 2);
        QVERIFY(c.issueStartNs > 1'764'682'894'000'000'000LL); // epoch from the pid 0 metadata
        const bool kernel =
            store.strings.view(c.processGroupName).find("kernel") != std::string_view::npos;
        if (c.state != CollectiveRecord::State::Completed) {
            ++open;
            QVERIFY(!kernel);
            QCOMPARE(c.seq, std::int64_t(2));
            QCOMPARE(c.inNelems, std::int64_t(-1));
            continue;
        }
        QCOMPARE(store.strings.view(c.dtype), std::string_view("float32"));
        QCOMPARE(c.inNelems, std::int64_t(kernel ? 784 * 128 : 128));
        // Only the coordinator's own execution is in the file.
        QCOMPARE(c.execStartNs >= 0, c.rank == 0);
        if (c.rank == 0) QVERIFY(c.execEndNs - c.execStartNs == 410'000);
    }
    QCOMPARE(open, 3);
    QCOMPARE(perRank, (std::map<int, int>{{0, 6}, {1, 6}, {2, 5}, {3, 6}}));
    QCOMPARE(session->folder.worldSize(), 4); // the ticks name ranks no file stands for

    // The matcher sees the tensor's negotiations as a group: rank 2 never joined the third.
    const auto& findings = session->analysis.findings;
    const auto stalled = std::find_if(findings.begin(), findings.end(), [](const Finding& f) {
        return (f.kind == FindingKind::Desync || f.kind == FindingKind::Hang) &&
               f.ranks == std::vector<int>{2};
    });
    QVERIFY2(stalled != findings.end(), "no hang/desync blaming rank 2");
    QVERIFY(stalled->processGroup.find("bias") != std::string::npos);
}

// Horovod rewrites the closing bracket after every event; a job killed mid-write leaves a cut
// object. Everything before it is kept and the source says where the cut is.
void TestTraceFolder::horovodTimelineCutMidWrite()
{
    QFile in(QStringLiteral(RANKSCOPE_TEST_DATA "/horovod/stalled_tensor/horovod_timeline.json"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    const QByteArray whole = in.readAll();
    const qsizetype cut = whole.lastIndexOf("{\"ph\": \"X\"") + 10;
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("timeline.json")), whole.left(cut));
    const SessionPtr session = loadSession(dir.path());
    QCOMPARE(session->folder.sources().size(), qsizetype(1));
    const SourceFile& s = session->folder.sources().front();
    QCOMPARE(s.kind, SourceKind::HorovodTimeline);
    QCOMPARE(s.status, SourceStatus::Truncated);
    QVERIFY2(s.message.contains(QStringLiteral("cut at byte %1").arg(cut - 10)),
             qPrintable(s.message));
    QCOMPARE(session->events.eventCount(), std::int64_t(53));
    QCOMPARE(session->events.collectives.size(), std::size_t(22));
}

static QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Only the coordinator writes a Horovod timeline, so a timeline saved as rank3_... is still
// rank 0's, and says the name disagrees; the ranks it names are those of its readiness ticks
// (zero-length X events named by a rank number), counted here from the raw file.
void TestTraceFolder::horovodTimelineRankIsTheCoordinatorsWhateverItsName()
{
    const QByteArray raw = readAll(
        QStringLiteral(RANKSCOPE_TEST_DATA "/horovod/stalled_tensor/horovod_timeline.json"));
    QVERIFY(!raw.isEmpty());
    std::map<int, int> ticks;
    for (const nlohmann::json& e : nlohmann::json::parse(raw.toStdString())) {
        const std::string name = e.value("name", std::string());
        if (e.value("ph", std::string()) == "X" && !name.empty() &&
            std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
            ++ticks[std::stoi(name)];
    }
    QVERIFY(ticks.size() > 1);
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank3_horovod_timeline.json")), raw);
    const SessionPtr session = loadSession(dir.path());
    QCOMPARE(session->folder.sources().size(), qsizetype(1));
    const SourceFile& s = session->folder.sources().front();
    QCOMPARE(s.kind, SourceKind::HorovodTimeline);
    QCOMPARE(s.rank.value_or(-1), 0);
    QCOMPARE(
        s.rankEvidence,
        QStringLiteral("Horovod timeline, written by the coordinator (rank 0) (file name says 3)"));
    for (const Lane& lane : session->events.lanes)
        QCOMPARE(lane.rank, 0);
    std::map<int, int> records;
    for (const CollectiveRecord& c : session->events.collectives)
        ++records[c.rank];
    QCOMPARE(records, ticks);
    QCOMPARE(session->folder.worldSize(), ticks.rbegin()->first + 1);
}

static QByteArray gunzip(const QByteArray& gz)
{
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return {};
    QByteArray out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.constData()));
    z.avail_in = uInt(gz.size());
    char buf[1 << 16];
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, qsizetype(sizeof buf - z.avail_out));
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : QByteArray();
}

// distributedInfo.rank as the JSON states it, read with nlohmann_json (-1: none).
static int statedRank(const QByteArray& json)
{
    const auto doc =
        nlohmann::json::parse(json.constData(), json.constData() + json.size(), nullptr, false);
    if (!doc.is_object() || !doc.contains("distributedInfo")) return -1;
    const auto& info = doc["distributedInfo"];
    return info.is_object() && info.contains("rank") && info["rank"].is_number_integer()
               ? info["rank"].get<int>()
               : -1;
}

static const SourceFile* sourceNamed(const TraceFolder& folder, const QString& relativePath)
{
    for (const SourceFile& s : folder.sources())
        if (s.relativePath == relativePath) return &s;
    return nullptr;
}

void TestTraceFolder::realTraceRanks_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("nameRank"); // what the original name says; -1: nothing
    const auto add = [](const char* file, int nameRank) {
        QTest::newRow(file) << QStringLiteral(RANKSCOPE_TEST_DATA "/") + QLatin1String(file)
                            << nameRank;
    };
    // distributedInfo at the end of a compressed file, after 860 KB of events
    add("kineto-real-hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz", -1);
    add("kineto-real-hta/trace_file_list/inference_rank_1.json.gz", 1);
    add("kineto-real-hta/execution_trace/benchmark_simple_add_trace.json.gz", -1);
    add("kineto-real-hta/call_stack/backward_thread.json", -1); // plain, at the end
    add("kineto-real-hta/trace_compare/base/base.json.gz", -1);
    add("kineto-real-hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34);
    add("kineto-real-hta/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz", 70);
    add("kineto-real-hta/rank_unavailable/rank_not_found.json.gz", -1); // "rank" missing
    add("kineto-gpu-samples/sampled_128rank_rank1.json.gz", 1);
    add("kineto-gpu-samples/nccl_2rank_rank0.json.gz", 0);
}

// Each real trace, alone in a folder under its own name, a tensorboard_trace_handler name, and
// compressed the other way: the rank its JSON states wherever it sits, else its name's, else
// an assumed 0 that says so; its events carry that rank.
void TestTraceFolder::realTraceRanks()
{
    QFETCH(QString, file);
    QFETCH(int, nameRank);
    const QByteArray original = readAll(file);
    QVERIFY(!original.isEmpty());
    const bool compressed = file.endsWith(QLatin1String(".gz"));
    const QByteArray json = compressed ? gunzip(original) : original;
    QVERIFY(!json.isEmpty());
    const int stated = statedRank(json);
    const QString name = file.section(QLatin1Char('/'), -1);
    const QString tensorboard = QStringLiteral("devgpu003_1234.1679055439123456789.pt.trace.json");
    const QList<std::pair<QString, QByteArray>> variants = {
        {name, original},
        {tensorboard + QStringLiteral(".gz"), compressed ? original : gzip(original)},
        {tensorboard, json},
    };
    for (const auto& [fileName, bytes] : variants) {
        QTemporaryDir dir;
        writeFile(dir.filePath(fileName), bytes);
        const SessionPtr session = loadSession(dir.path());
        QCOMPARE(session->folder.sources().size(), 1);
        const SourceFile& s = session->folder.sources().front();
        const QByteArray what = (fileName + QStringLiteral(": ") + s.rankEvidence).toUtf8();
        QCOMPARE(s.kind, SourceKind::Kineto);
        QVERIFY2(s.status != SourceStatus::Error, qPrintable(s.message));
        const int fromName = fileName == name ? nameRank : -1;
        const int expected = stated >= 0 ? stated : fromName >= 0 ? fromName : 0;
        QVERIFY2(s.rank.value_or(-1) == expected, what.constData());
        if (stated >= 0)
            QVERIFY2(
                s.rankEvidence.startsWith(QStringLiteral("distributedInfo.rank %1").arg(stated)),
                what.constData());
        else if (fromName < 0)
            QVERIFY2(s.rankEvidence.startsWith(QLatin1String("assumed rank 0")), what.constData());
        QVERIFY(!session->events.lanes.empty());
        for (const Lane& lane : session->events.lanes)
            QCOMPARE(lane.rank, expected);
    }
}

// worker_0/worker_1 holding ranks 1/0, and a rank-1 trace that says so only at its end, named
// worker_0: the content wins and the evidence says what the name claimed.
void TestTraceFolder::contentBeatsSwappedAndMisleadingNames()
{
    const QString data = QStringLiteral(RANKSCOPE_TEST_DATA);
    QTemporaryDir swapped;
    const QByteArray r0 =
        readAll(data + QStringLiteral("/kineto-gpu-samples/sampled_128rank_rank0.json.gz"));
    const QByteArray r1 =
        readAll(data + QStringLiteral("/kineto-gpu-samples/sampled_128rank_rank1.json.gz"));
    writeFile(swapped.filePath(QStringLiteral("worker_1.json.gz")), r0);
    writeFile(swapped.filePath(QStringLiteral("worker_0.json")), gunzip(r1));
    const TraceFolder folder = TraceFolder::discover(swapped.path());
    const SourceFile* w1 = sourceNamed(folder, QStringLiteral("worker_1.json.gz"));
    const SourceFile* w0 = sourceNamed(folder, QStringLiteral("worker_0.json"));
    QVERIFY(w0 && w1);
    QCOMPARE(w1->rank.value_or(-1), statedRank(gunzip(r0)));
    QCOMPARE(w0->rank.value_or(-1), statedRank(gunzip(r1)));
    QCOMPARE(w1->rankEvidence, QStringLiteral("distributedInfo.rank 0 (file name says 1)"));
    QCOMPARE(w0->rankEvidence, QStringLiteral("distributedInfo.rank 1 (file name says 0)"));
    QVERIFY(folder.warnings().isEmpty());

    // distributedInfo after the events of a compressed file: the reader finds it.
    QTemporaryDir tail;
    const QByteArray late =
        readAll(data + QStringLiteral("/kineto-real-hta/trace_file_list/inference_rank_1.json.gz"));
    QCOMPARE(statedRank(gunzip(late)), 1);
    writeFile(tail.filePath(QStringLiteral("worker_0.pt.trace.json.gz")), late);
    writeFile(tail.filePath(QStringLiteral("rank0.log")), "step 0\n");
    const SessionPtr session = loadSession(tail.path());
    const SourceFile* trace =
        sourceNamed(session->folder, QStringLiteral("worker_0.pt.trace.json.gz"));
    QVERIFY(trace);
    QCOMPARE(trace->rank.value_or(-1), 1);
    QCOMPARE(trace->rankEvidence, QStringLiteral("distributedInfo.rank 1 (file name says 0)"));
    QCOMPARE(session->folder.ranks(), (QList<int>{0, 1}));
    for (const Lane& lane : session->events.lanes)
        QCOMPARE(lane.rank, 1);
}

// PyTorch's tensorboard_trace_handler names ({host}_{pid}.{time_ns}.pt.trace.json.gz) carry no
// rank: two ranks saved that way are told apart by their content.
void TestTraceFolder::tensorboardNamedPairGetsRanksFromContent()
{
    QTemporaryDir dir;
    std::map<QString, int> expected;
    for (int r = 0; r < 2; ++r) {
        const QByteArray bytes = readAll(
            QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-gpu-samples/sampled_128rank_rank%1.json.gz")
                .arg(r));
        const QString name =
            QStringLiteral("node-a_%1.17331400001234567%1.pt.trace.json.gz").arg(4100 + r);
        writeFile(dir.filePath(name), bytes);
        expected[name] = statedRank(gunzip(bytes));
    }
    const SessionPtr session = loadSession(dir.path());
    for (const auto& [name, rank] : expected) {
        const SourceFile* s = sourceNamed(session->folder, name);
        QVERIFY(s);
        QCOMPARE(s->rank.value_or(-1), rank);
    }
    QCOMPARE(session->folder.ranks(), (QList<int>{0, 1}));
    QVERIFY(session->folder.warnings().isEmpty());
}

void TestTraceFolder::namesClaimingAFormatTheContentIsNot()
{
    QTemporaryDir dir;
    QByteArray random(4096, Qt::Uninitialized);
    quint32 x = 12345;
    for (char& c : random) {
        x = x * 1103515245u + 12345u;
        c = char(x >> 24);
    }
    random[0] = '\x9c'; // neither gzip's nor pickle's first byte
    writeFile(dir.filePath(QStringLiteral("rank1.pt.trace.json")), random);
    writeFile(dir.filePath(QStringLiteral("rank2.json.gz")), "2026-01-01 step 0 loss 1\n");
    writeFile(dir.filePath(QStringLiteral("nccl_trace_rank_3")), "hello\n");
    writeFile(dir.filePath(QStringLiteral("rank4.pkl")), random);
    writeFile(dir.filePath(QStringLiteral("rank5.log")), random);
    writeFile(dir.filePath(QStringLiteral("rank6.pt.trace.json")), R"({"lr": 0.1})");
    writeFile(dir.filePath(QStringLiteral("rank7.json.gz")), gzip(random));
    writeFile(dir.filePath(QStringLiteral("rank8.json.gz")), QByteArray("\x1f\x8b") + random);
    const QString et = QStringLiteral("benchmark_simple_add_et.json.gz");
    QVERIFY(
        QFile::copy(QStringLiteral(RANKSCOPE_TEST_DATA "/kineto-real-hta/execution_trace/") + et,
                    dir.filePath(et)));
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 3\n");
    const SessionPtr session = loadSession(dir.path());
    const std::map<QString, QString> reasons = {
        {QStringLiteral("rank1.pt.trace.json"), QStringLiteral("binary data, not JSON")},
        {QStringLiteral("rank2.json.gz"), QStringLiteral("not gzip: text")},
        {QStringLiteral("nccl_trace_rank_3"), QStringLiteral("not a Flight Recorder dump")},
        {QStringLiteral("rank4.pkl"), QStringLiteral("not a Flight Recorder dump")},
        {QStringLiteral("rank5.log"), QStringLiteral("binary data, not a text log")},
        {QStringLiteral("rank6.pt.trace.json"), QStringLiteral("JSON without traceEvents")},
        {QStringLiteral("rank7.json.gz"), QStringLiteral("binary data, not JSON")},
        {QStringLiteral("rank8.json.gz"), QStringLiteral("corrupt gzip: ")},
        {et, QStringLiteral("Chakra execution trace: not a timeline; skipped")},
    };
    for (const auto& [name, reason] : reasons) {
        const SourceFile* s = sourceNamed(session->folder, name);
        QVERIFY2(s, qPrintable(name));
        QVERIFY2(s->status == SourceStatus::Error, qPrintable(name));
        QCOMPARE(s->kind, SourceKind::Unknown);
        QVERIFY2(s->message.startsWith(reason),
                 qPrintable(name + QStringLiteral(": ") + s->message));
        QVERIFY(!s->message.contains(QLatin1Char('\n')));
        QVERIFY(!s->rank);
    }
    const SourceFile* good = sourceNamed(session->folder, QStringLiteral("rank0.log"));
    QVERIFY(good);
    QCOMPARE(good->status, SourceStatus::Ok);
    QCOMPARE(session->folder.ranks(), QList<int>{0});
    QCOMPARE(session->logs.size(), std::size_t(1));
    QCOMPARE(session->logs.front().lastStep().value_or(-1), 3);
}

// The first bytes of `bytes` as the reason of a skipped file names them ("0x89 0x50 ...").
static QString hexStart(const QByteArray& bytes)
{
    QStringList hex;
    for (int i = 0; i < 4; ++i)
        hex << QStringLiteral("0x") + QString::number(uchar(bytes[i]), 16).rightJustified(2, u'0');
    return hex.join(u' ');
}

// Files of formats RankScope does not read, under names that claim none it reads, beside a rank's
// trace: each is listed as skipped with what its content is, none gets a rank or counts as read,
// and the trace loads. A folder of such files only is "nothing readable".
void TestTraceFolder::formatsNotReadAreSkipped()
{
    QTemporaryDir dir;
    QByteArray png("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06"
                   "\x00\x00\x00",
                   33);
    png += QByteArray(200, '\x11');
    writeFile(dir.filePath(QStringLiteral("loss_curve.png")), png);
    QByteArray random(4096, Qt::Uninitialized);
    quint32 x = 777;
    for (char& c : random) {
        x = x * 1103515245u + 12345u;
        c = char(x >> 24);
    }
    random[0] = '\x9c'; // neither gzip's nor pickle's first byte
    random[1] = '\x00'; // binary whatever the generator gives
    writeFile(dir.filePath(QStringLiteral("core.4242")), random);
    writeFile(dir.filePath(QStringLiteral("activations.raw.gz")), gzip(random));
    // What the profiler's export_memory_timeline writes: gzip of [[device, action, bytes, ...]].
    QByteArray timeline = "[";
    for (int i = 0; i < 500; ++i)
        timeline +=
            (i ? ", " : "") + QByteArray("[-1, 1, ") + QByteArray::number(512 * (i + 1)) + ", 7]";
    timeline += "]";
    writeFile(dir.filePath(QStringLiteral("memory_timeline.raw.gz")), gzip(timeline));
    constexpr int kEvents = 12;
    QByteArray trace = R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)";
    for (int i = 0; i < kEvents; ++i)
        trace += (i ? "," : "") + QByteArray(R"({"ph": "X", "name": "aten::mm", "pid": 1, )") +
                 R"("tid": 1, "ts": )" + QByteArray::number(100 * i) + R"(, "dur": 50})";
    trace += "]}";
    writeFile(dir.filePath(QStringLiteral("rank0.pt.trace.json")), trace);

    const QString notRead = QStringLiteral(": not a trace, dump or log that RankScope reads");
    const std::map<QString, QString> skipped = {
        {QStringLiteral("loss_curve.png"),
         QStringLiteral("binary data (starts %1)").arg(hexStart(png)) + notRead},
        {QStringLiteral("core.4242"),
         QStringLiteral("binary data (starts %1)").arg(hexStart(random)) + notRead},
        {QStringLiteral("activations.raw.gz"),
         QStringLiteral("gzip of binary data (starts %1)").arg(hexStart(random)) + notRead},
        {QStringLiteral("memory_timeline.raw.gz"),
         QStringLiteral("gzip of JSON (starts '%1')").arg(QString::fromLatin1(timeline.left(24))) +
             notRead},
    };
    const SessionPtr session = loadSession(dir.path());
    QCOMPARE(session->folder.sources().size(), qsizetype(skipped.size() + 1));
    for (const auto& [name, reason] : skipped) {
        const SourceFile* s = sourceNamed(session->folder, name);
        QVERIFY2(s, qPrintable(name));
        QCOMPARE(sourceStatusName(s->status), QStringLiteral("skipped"));
        QCOMPARE(s->kind, SourceKind::Unknown);
        QCOMPARE(s->message, reason);
        QVERIFY2(!s->rank, qPrintable(name));
    }
    const SourceFile* good = sourceNamed(session->folder, QStringLiteral("rank0.pt.trace.json"));
    QVERIFY(good);
    QCOMPARE(good->status, SourceStatus::Ok);
    QCOMPARE(good->kind, SourceKind::Kineto);
    QCOMPARE(good->rank.value_or(-1), 0);
    QCOMPARE(session->folder.ranks(), QList<int>{0});
    QCOMPARE(session->events.eventCountOfRank(0), std::int64_t(kEvents));
    QCOMPARE(nothingReadableReason(*session), std::string());

    // Without the trace nothing was read: not "no fault found".
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("rank0.pt.trace.json"))));
    const SessionPtr rest = loadSession(dir.path());
    QCOMPARE(rest->folder.sources().size(), qsizetype(skipped.size()));
    for (const SourceFile& s : rest->folder.sources())
        QCOMPARE(s.status, SourceStatus::Skipped);
    QVERIFY(rest->folder.ranks().isEmpty());
    QVERIFY(!nothingReadableReason(*rest).empty());
}

void TestTraceFolder::outOfRangeRanksAreUnattributedWithAReason()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank99999999999.log")), "step 0\n");
    writeFile(dir.filePath(QStringLiteral("rank2147483648.log")), "step 0\n");
    writeFile(
        dir.filePath(QStringLiteral("minus.pt.trace.json")),
        R"({"distributedInfo": {"rank": -1}, "traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]})");
    writeFile(dir.filePath(QStringLiteral("big.pt.trace.json")),
              R"({"distributedInfo": {"rank": 2147483648}, "traceEvents": []})");
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 1\n");
    const TraceFolder folder = TraceFolder::discover(dir.path());
    QCOMPARE(folder.ranks(), QList<int>{0});
    for (const SourceFile& s : folder.sources()) {
        if (s.relativePath == QLatin1String("rank0.log")) continue;
        QVERIFY2(!s.rank, qPrintable(s.relativePath));
        QVERIFY2(s.rankEvidence.contains(QLatin1String("out of range")),
                 qPrintable(s.rankEvidence));
    }
    QCOMPARE(sourceNamed(folder, QStringLiteral("rank99999999999.log"))->rankEvidence,
             QStringLiteral(
                 "no rank: rank 99999999999 in the file name is out of range (0 to 1000000)"));
    QVERIFY(sourceNamed(folder, QStringLiteral("minus.pt.trace.json"))
                ->rankEvidence.contains(QLatin1String("distributedInfo.rank -1")));
}

// Every folder of the test data, each as a user would open it: a source that gets no rank says
// why, at discovery and (for the real traces, read whole) after reading.
void TestTraceFolder::everyUnattributedSourceSaysWhy()
{
    const QString root = QStringLiteral(RANKSCOPE_TEST_DATA);
    QStringList dirs{root};
    for (QDirIterator it(root, QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
         it.hasNext();)
        dirs << it.next();
    int unattributed = 0;
    for (const QString& dir : dirs) {
        const TraceFolder folder = TraceFolder::discover(dir);
        for (const SourceFile& s : folder.unattributedSources()) {
            ++unattributed;
            QVERIFY2(!s.rankEvidence.isEmpty(),
                     qPrintable(dir + QLatin1Char('/') + s.relativePath));
        }
    }
    QVERIFY(unattributed > 50); // the check ran over something
    for (const QString& dir : dirs) {
        if (!dir.contains(QLatin1String("/kineto-"))) continue;
        const SessionPtr session = loadSession(dir);
        for (const SourceFile& s : session->folder.unattributedSources())
            QVERIFY2(!s.rankEvidence.isEmpty(),
                     qPrintable(dir + QLatin1Char('/') + s.relativePath));
    }
    // HTA's trace whose distributedInfo has no rank, beside one that has a rank: it says so.
    const SessionPtr mixed = loadSession(root + QStringLiteral("/kineto-real-hta/mixed_files"));
    const SourceFile* notFound =
        sourceNamed(mixed->folder, QStringLiteral("rank_not_found.json.gz"));
    QVERIFY(notFound);
    QVERIFY(!notFound->rank);
    QCOMPARE(notFound->rankEvidence,
             QStringLiteral("states no rank: distributedInfo has no rank, no rank in its name"));
}

// The reason of each way a source can be left without a rank, word for word.
void TestTraceFolder::unattributedReasons()
{
    QTemporaryDir dir;
    const QByteArray events = R"("traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}])";
    writeFile(dir.filePath(QStringLiteral("a.pt.trace.json")), "{" + events + "}");
    writeFile(dir.filePath(QStringLiteral("b.pt.trace.json")),
              R"({"distributedInfo": {"backend": "nccl"}, )" + events + "}");
    writeFile(dir.filePath(QStringLiteral("worker_3.pt.trace.json")),
              R"({"distributedInfo": {"rank": -1}, )" + events + "}");
    writeFile(dir.filePath(QStringLiteral("worker_0.pt.trace.json")),
              R"({"distributedInfo": {"rank": 1}, )" + events + "}");
    writeFile(dir.filePath(QStringLiteral("rank_2000000.log")), "step 0\n");
    writeFile(dir.filePath(QStringLiteral("notes.log")), "step 0\nstep 1\n");
    writeFile(dir.filePath(QStringLiteral("nccl.log")),
              "host:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 - Init COMPLETE\n"
              "host:2:2 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 - Init COMPLETE\n");
    writeFile(dir.filePath(QStringLiteral("empty.log")), "");
    writeFile(dir.filePath(QStringLiteral("data.bin")), QByteArray("\x01\x02\x00\x03", 4));
    // distributedInfo without a rank after 300 KiB of events inflated: past what discovery
    // inflates, read by the Kineto reader.
    QByteArray deep = "{" + events.chopped(1);
    while (deep.size() < 300 * 1024)
        deep += R"(, {"ph": "X", "name": "b", "ts": 2, "dur": 1})";
    deep += R"(], "distributedInfo": {"backend": "nccl", "world_size": 2}})";
    writeFile(dir.filePath(QStringLiteral("deep.pt.trace.json.gz")), gzip(deep));

    const std::map<QString, QString> atDiscovery = {
        {QStringLiteral("a.pt.trace.json"),
         QStringLiteral("states no rank: no distributedInfo, no rank in its name")},
        {QStringLiteral("b.pt.trace.json"),
         QStringLiteral("states no rank: distributedInfo has no rank, no rank in its name")},
        {QStringLiteral("worker_3.pt.trace.json"),
         QStringLiteral("no rank: distributedInfo.rank -1 is out of range (0 to 1000000); the "
                        "file name's rank 3 is not taken over the content")},
        {QStringLiteral("rank_2000000.log"),
         QStringLiteral("no rank: rank 2000000 in the file name is out of range (0 to 1000000)")},
        {QStringLiteral("notes.log"),
         QStringLiteral(
             "states no rank: a plain log states no rank that is read, no rank in its name")},
        {QStringLiteral("nccl.log"),
         QStringLiteral("states no rank: no single rank in its NCCL init lines ('rank N nranks "
                        "M'), no rank in its name")},
        {QStringLiteral("empty.log"), QStringLiteral("no rank: an empty file")},
        {QStringLiteral("data.bin"),
         QStringLiteral("no rank: not a trace, dump or log that RankScope reads")},
        {QStringLiteral("deep.pt.trace.json.gz"),
         QStringLiteral("states no rank: no distributedInfo, no rank in its name")},
    };
    const TraceFolder folder = TraceFolder::discover(dir.path());
    for (const auto& [name, reason] : atDiscovery) {
        const SourceFile* s = sourceNamed(folder, name);
        QVERIFY2(s, qPrintable(name));
        QVERIFY2(!s->rank, qPrintable(name));
        QCOMPARE(s->rankEvidence, reason);
    }
    // Name and content disagree: the content's rank, and the evidence says what the name said.
    const SourceFile* swapped = sourceNamed(folder, QStringLiteral("worker_0.pt.trace.json"));
    QVERIFY(swapped);
    QCOMPARE(swapped->rank.value_or(-1), 1);
    QCOMPARE(swapped->rankEvidence, QStringLiteral("distributedInfo.rank 1 (file name says 0)"));

    // Read whole, the deep trace's distributedInfo turns up: still no rank, and now it says so.
    const SessionPtr session = loadSession(dir.path());
    const SourceFile* deepRead =
        sourceNamed(session->folder, QStringLiteral("deep.pt.trace.json.gz"));
    QVERIFY(deepRead);
    QVERIFY(!deepRead->rank);
    QCOMPARE(deepRead->rankEvidence,
             QStringLiteral("states no rank: distributedInfo has no rank, no rank in its name"));
    for (const SourceFile& s : session->folder.unattributedSources())
        QVERIFY2(!s.rankEvidence.isEmpty(), qPrintable(s.relativePath));
}

static void makeFifo(const QString& path)
{
    QCOMPARE(::mkfifo(QFile::encodeName(path).constData(), 0600), 0);
}

// A FIFO, a socket, a device, a link to a FIFO, links out of the folder, links to folders, a
// link loop and a dangling link are listed with a reason and never opened for reading (a blocking
// open of a FIFO would hang here for ever); the rank beside them loads.
void TestTraceFolder::nonRegularFilesAreListedAndNeverBlock()
{
    QTemporaryDir outside, dir;
    writeFile(outside.filePath(QStringLiteral("rank5.log")), "NCCL WARN secret outside\n");
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 4\n");
    makeFifo(dir.filePath(QStringLiteral("rank1.log")));
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("sub")));
    makeFifo(dir.filePath(QStringLiteral("sub/pipe")));
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("sub/pipe")),
                        dir.filePath(QStringLiteral("rank2.log"))));
    QVERIFY(QFile::link(outside.filePath(QStringLiteral("rank5.log")),
                        dir.filePath(QStringLiteral("rank3.log"))));
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("loop_b")),
                        dir.filePath(QStringLiteral("loop_a"))));
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("loop_a")),
                        dir.filePath(QStringLiteral("loop_b"))));
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("gone")),
                        dir.filePath(QStringLiteral("rank4.log"))));
    QVERIFY(
        QFile::link(dir.filePath(QStringLiteral("sub")), dir.filePath(QStringLiteral("sub_link"))));
    QVERIFY(QFile::link(outside.path(), dir.filePath(QStringLiteral("outside_dir"))));
    QVERIFY(QFile::link(dir.path(), dir.filePath(QStringLiteral("sub/up"))));
    // A socket: bound into the folder (sun_path holds the temporary folder's short path).
    const QByteArray socketPath = QFile::encodeName(dir.filePath(QStringLiteral("rank6.log")));
    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    QVERIFY(sock >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    QVERIFY(std::size_t(socketPath.size()) < sizeof(address.sun_path));
    std::memcpy(address.sun_path, socketPath.constData(), std::size_t(socketPath.size()));
    QCOMPARE(::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    ::close(sock);
    std::map<QString, QString> reasons = {
        {QStringLiteral("rank1.log"), QStringLiteral("a FIFO (named pipe): not read")},
        {QStringLiteral("sub/pipe"), QStringLiteral("a FIFO (named pipe): not read")},
        {QStringLiteral("rank2.log"), QStringLiteral("link to a FIFO (named pipe): not read")},
        {QStringLiteral("rank3.log"),
         QStringLiteral("link to a file outside the folder; not followed")},
        {QStringLiteral("loop_a"), QStringLiteral("link loop; not followed")},
        {QStringLiteral("loop_b"), QStringLiteral("link loop; not followed")},
        {QStringLiteral("rank4.log"), QStringLiteral("link to nothing; not followed")},
        {QStringLiteral("rank6.log"), QStringLiteral("a socket: not read")},
        {QStringLiteral("sub_link"),
         QStringLiteral("link to a folder inside the folder; not followed")},
        {QStringLiteral("outside_dir"),
         QStringLiteral("link to a folder outside the folder; not followed")},
        {QStringLiteral("sub/up"), QStringLiteral("link to the folder itself; not followed")},
    };
    // A device node (root may make one; where the system refuses, the case is left out).
    if (::mknod(QFile::encodeName(dir.filePath(QStringLiteral("rank7.log"))).constData(),
                S_IFCHR | 0600, makedev(1, 3)) == 0)
        reasons[QStringLiteral("rank7.log")] = QStringLiteral("a character device: not read");
    const SessionPtr session = loadSession(dir.path());
    QCOMPARE(session->folder.sources().size(), qsizetype(reasons.size() + 1));
    for (const auto& [name, reason] : reasons) {
        const SourceFile* s = sourceNamed(session->folder, name);
        QVERIFY2(s, qPrintable(name));
        QCOMPARE(s->status, SourceStatus::Error);
        QCOMPARE(s->message, reason);
        QVERIFY(!s->descriptor);
        QCOMPARE(s->rankEvidence, QStringLiteral("no rank: not read"));
    }
    QCOMPARE(session->folder.ranks(), QList<int>{0}); // nothing attributed from a refused file
    QCOMPARE(session->logs.size(), std::size_t(1));
    QCOMPARE(session->logs.front().lastStep().value_or(-1), 4);
    QCOMPARE(sourceNamed(session->folder, QStringLiteral("rank0.log"))->status, SourceStatus::Ok);
}

// After discovery, rank1.log is replaced by a link to a file outside the folder and rank2.log by
// a FIFO: the readers read the files discovery opened, not what the names lead to now.
void TestTraceFolder::fileSwappedAfterDiscoveryIsNotFollowed()
{
    QTemporaryDir outside, dir;
    writeFile(outside.filePath(QStringLiteral("secret.log")), "NCCL WARN secret outside\n");
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 4\n");
    writeFile(dir.filePath(QStringLiteral("rank1.log")), "step 5\n");
    writeFile(dir.filePath(QStringLiteral("rank2.log")), "step 6\n");
    const TraceFolder folder = TraceFolder::discover(dir.path());
    QCOMPARE(folder.ranks(), (QList<int>{0, 1, 2}));
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("rank1.log"))));
    QVERIFY(QFile::link(outside.filePath(QStringLiteral("secret.log")),
                        dir.filePath(QStringLiteral("rank1.log"))));
    QVERIFY(QFile::remove(dir.filePath(QStringLiteral("rank2.log"))));
    makeFifo(dir.filePath(QStringLiteral("rank2.log")));
    for (const SourceFile& s : folder.sources()) {
        const LogReader::Result r = LogReader::readSource(s, 0, false, {});
        QVERIFY2(r.ok, qPrintable(r.message));
        QCOMPARE(r.streams.size(), std::size_t(1));
        QCOMPARE(r.streams.front().lastStep().value_or(-1), 4 + *s.rank);
        for (int i = 0; i < r.streams.front().lineCount(); ++i)
            QVERIFY(!r.streams.front().lineText(i).contains(QLatin1String("secret")));
    }
}

void TestTraceFolder::oddlyEncodedLogsReachTheAnalysis_data()
{
    QByteArray steps;
    for (int i = 0; i < 40; ++i)
        steps += "2026-01-01 12:00:" + QByteArray::number(10 + i) + " INFO train: step " +
                 QByteArray::number(i) + " loss 1.0\n";
    const QByteArray warn = "node1:100:100 [1] NCCL WARN NET/Socket : peer 10.0.0.2<54321> "
                            "connection closed by remote peer (unhandled system error)\n";
    const QByteArray plain = steps + warn;
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("note"); // what the source message says was done
    QByteArray coloured;
    for (const QByteArray& line : plain.split('\n'))
        if (!line.isEmpty())
            coloured += (line.contains("WARN") ? "\x1b[1;31m" : "\x1b[32m") + line + "\x1b[0m\n";
    QTest::newRow("ansi") << coloured << QStringLiteral("ANSI escape sequences removed");
    QTest::newRow("nul tail") << plain + QByteArray(100000, '\0')
                              << QStringLiteral("100000 NUL or other binary bytes skipped");
    QByteArray junk(300, Qt::Uninitialized);
    quint32 x = 7;
    for (char& c : junk) {
        x = x * 1103515245u + 12345u;
        c = char(0x80 | (x >> 24)); // high bytes: never a line break or a NUL
    }
    QTest::newRow("junk start") << junk + "\x01\x02\n" + plain
                                << QStringLiteral("2 NUL or other binary bytes skipped");
    const QString text = QString::fromUtf8(plain);
    QByteArray le("\xFF\xFE");
    for (const QChar c : text)
        le += char(c.unicode() & 0xff), le += char(c.unicode() >> 8);
    QTest::newRow("utf-16le bom") << le << QStringLiteral("decoded from UTF-16");
    QByteArray be;
    for (const QChar c : text)
        be += char(c.unicode() >> 8), be += char(c.unicode() & 0xff);
    QTest::newRow("utf-16be") << be << QStringLiteral("decoded from UTF-16");
}

// Named rank1.log, each is a log of rank 1 whose NCCL warning reaches the analysis as text.
void TestTraceFolder::oddlyEncodedLogsReachTheAnalysis()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, note);
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("rank1.log")), bytes);
    writeFile(dir.filePath(QStringLiteral("rank0.log")), "step 3\n");
    const SessionPtr session = loadSession(dir.path());
    const SourceFile* s = sourceNamed(session->folder, QStringLiteral("rank1.log"));
    QVERIFY(s);
    QCOMPARE(s->kind, SourceKind::Log);
    QCOMPARE(s->rank.value_or(-1), 1);
    QCOMPARE(s->status, SourceStatus::Ok);
    QVERIFY2(s->message.contains(note), qPrintable(s->message));
    QCOMPARE(session->folder.ranks(), (QList<int>{0, 1}));
    const auto log = std::find_if(session->logs.begin(), session->logs.end(),
                                  [](const RankLog& l) { return l.rank == 1; });
    QVERIFY(log != session->logs.end());
    QCOMPARE(log->lastStep().value_or(-1), 39);
    const auto warns = log->factsOfKind(LogFactKind::NcclWarn);
    QCOMPARE(warns.size(), std::size_t(1));
    QCOMPARE(log->lineText(warns.front()->line),
             QStringLiteral("node1:100:100 [1] NCCL WARN NET/Socket : peer 10.0.0.2<54321> "
                            "connection closed by remote peer (unhandled system error)"));
}

QTEST_GUILESS_MAIN(TestTraceFolder)
#include "tst_tracefolder.moc"
