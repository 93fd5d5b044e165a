#include "model/trace/tracefolder.h"
#include "model/tracesession.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <map>

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
    QTest::addRow("gzip") << "x.json.gz" << QByteArray("\x1f\x8b\x08\x00", 4)
                          << int(SourceKind::Kineto);
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

static void writeFile(const QString& path, const QByteArray& content)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
}

void TestTraceFolder::unattributedIsNeverRankZero()
{
    QTemporaryDir dir;
    writeFile(dir.filePath(QStringLiteral("host_123.pt.trace.json")),
              R"([{"ph": "X", "name": "a"}])");
    const TraceFolder folder = TraceFolder::discover(dir.path());
    QCOMPARE(folder.sources().size(), 1);
    QVERIFY(!folder.sources().first().rank.has_value());
    QCOMPARE(folder.unattributedSources().size(), 1);
    QCOMPARE(folder.worldSize(), 0);
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
    QCOMPARE(folder.sources().size(), 1);
    QCOMPARE(folder.sources().first().relativePath, QStringLiteral("rank0.log"));
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
        if (s.relativePath == QLatin1String("rank0.log"))
            QCOMPARE(s.status, SourceStatus::Error);
        else
            QCOMPARE(s.kind, SourceKind::Unknown);
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
    int stated = -1;
    const std::optional<int> got =
        TraceFolder::attributeRank(name, SourceKind(kind), head, &why, &stated);
    QCOMPARE(got.value_or(-1), rank);
    QCOMPARE(stated, worldSize);
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
        return (f.kind == "desync" || f.kind == "hang") && f.ranks == std::vector<int>{2};
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

QTEST_GUILESS_MAIN(TestTraceFolder)
#include "tst_tracefolder.moc"
