#include "model/traceloader.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <map>
#include <thread>

using namespace rankscope;

class TestTraceLoader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loadsOffTheCallingThread();
    void missingFolderFails();
    void cancelReportsCanceledAndNoResult();
    void newerStartSupersedesOlder();
    void perFileProgressReachesEveryFile();
    void cancelDuringLogHeavyLoadIsPromptAndKeepsNothing();
    void cancelDuringLargeTraceAndLogLoadEnds();
    void cancelAfterReadingSkipsTheAnalysis();
    void cliLoadSkipsLaneLods();
    void readComesBeforeTheDiagnosis();
    void cancelDuringTheDiagnosisEndsIt();
};

static const QString kHealthy = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/healthy");
static const QString kStraggler = QStringLiteral(RANKSCOPE_TEST_DATA "/traces/straggler");

void TestTraceLoader::loadsOffTheCallingThread()
{
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.start(kHealthy);
    QVERIFY(loaded.wait(10000));
    const auto session = loaded.first().first().value<SessionPtr>();
    QVERIFY(session);
    QCOMPARE(session->folder.worldSize(), 2);
}

void TestTraceLoader::missingFolderFails()
{
    TraceLoader loader;
    QSignalSpy failed(&loader, &TraceLoader::failed);
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.start(QStringLiteral("/nonexistent/rankscope-folder"));
    QVERIFY(failed.wait(10000));
    QVERIFY(failed.first().first().toString().contains(QLatin1String("no such folder")));
    QCOMPARE(loaded.size(), 0);
}

void TestTraceLoader::cancelReportsCanceledAndNoResult()
{
    // Enough files that the load is still running when cancel() follows start().
    QTemporaryDir dir;
    for (int i = 0; i < 4000; ++i) {
        QFile f(dir.filePath(QStringLiteral("rank%1.log").arg(i)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("step 0 loss 1.0\n");
    }
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy canceled(&loader, &TraceLoader::canceled);
    loader.start(dir.path());
    loader.cancel();
    QVERIFY(canceled.wait(10000));
    QTest::qWait(50);
    QCOMPARE(loaded.size(), 0);
    QVERIFY(!loader.isRunning());
}

void TestTraceLoader::newerStartSupersedesOlder()
{
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.start(kHealthy);
    loader.start(kStraggler);
    QVERIFY(loaded.wait(10000));
    QTest::qWait(100);
    QCOMPARE(loaded.size(), 1);
    QCOMPARE(loaded.first().first().value<SessionPtr>()->folder.worldSize(), 3);
}

// Every trace and log of the folder reports its own bytes, ending at its size, and the folder's
// progress ends at the folder's size.
void TestTraceLoader::perFileProgressReachesEveryFile()
{
    std::map<int, std::pair<qint64, qint64>> last;
    LoadOptions options;
    options.fileProgress = [&](int source, const QString&, qint64 done, qint64 total) {
        QVERIFY(done <= total);
        QVERIFY(done >= last[source].first);
        last[source] = {done, total};
    };
    qint64 folderDone = 0, folderTotal = -1;
    const SessionPtr session = loadSession(
        kStraggler,
        [&](qint64 done, qint64 total) {
            folderDone = done;
            folderTotal = total;
        },
        {}, options);
    QVERIFY(!session->cancelled);
    int files = 0;
    const QList<SourceFile>& sources = session->folder.sources();
    for (int i = 0; i < sources.size(); ++i) {
        const SourceKind k = sources[i].kind;
        if (k != SourceKind::Kineto && k != SourceKind::Log && k != SourceKind::LauncherLog &&
            k != SourceKind::NcclLog)
            continue;
        ++files;
        QVERIFY2(last.count(i), qPrintable(sources[i].relativePath));
        QCOMPARE(last[i].first, sources[i].sizeBytes);
        QCOMPARE(last[i].second, sources[i].sizeBytes);
    }
    QVERIFY(files >= 6); // three traces, three rank logs, the launcher log
    QCOMPARE(folderDone, session->folder.totalBytes());
    QCOMPARE(folderTotal, session->folder.totalBytes());
    QVERIFY(!session->logs.empty());
    QVERIFY(!session->laneLods.empty());
}

// Four logs of 24 MB: the cancel comes at the first bytes a worker reports, and the load must
// come back within a fraction of the time the rest would take, with nothing of any file kept.
void TestTraceLoader::cancelDuringLogHeavyLoadIsPromptAndKeepsNothing()
{
    QTemporaryDir dir;
    QByteArray block;
    for (int i = 0; i < 64; ++i)
        block += "node1:100:100 [0] NCCL INFO AllReduce: opCount " + QByteArray::number(i, 16) +
                 " sendbuff 0x7f00 recvbuff 0x7f00 count 6792 datatype 7 op 0 root 0 comm "
                 "0x55d5c8a0 [nranks=4] stream 0x5600\n"
                 "2026-12-02 13:41:34.916 [rank0] INFO train: step 12 loss=33.9 lr=0.1\n";
    QByteArray content;
    while (content.size() < 24 * 1024 * 1024)
        content += block;
    for (int r = 0; r < 4; ++r) {
        QFile f(dir.filePath(QStringLiteral("rank%1.log").arg(r)));
        QVERIFY(f.open(QIODevice::WriteOnly));
        QCOMPARE(f.write(content), content.size());
    }
    std::atomic<bool> cancel{false};
    std::map<int, qint64> doneByFile;
    const auto sum = [&] {
        qint64 n = 0;
        for (const auto& [file, done] : doneByFile)
            n += done;
        return n;
    };
    qint64 doneAtCancel = -1;
    LoadOptions options;
    options.fileProgress = [&](int source, const QString&, qint64 done, qint64 total) {
        doneByFile[source] = done;
        if (!cancel.load() && done > 0 && done < total) {
            doneAtCancel = sum();
            cancel = true;
        }
    };
    const SessionPtr session = loadSession(
        dir.path(), {}, [&] { return cancel.load(); }, options);
    QVERIFY2(doneAtCancel > 0, "no file reported progress part-way");
    // Within a few MB, not within some time: a loaded machine may not run the workers at all
    // for a while, but each of the two stops at its next 1 MB poll.
    const qint64 after = sum() - doneAtCancel;
    QVERIFY2(after < 8 * 1024 * 1024,
             qPrintable(QStringLiteral("%1 MB read after the cancel").arg(after / 1e6)));
    QVERIFY(session->cancelled);
    QVERIFY(session->logs.empty());
    QCOMPARE(session->events.lanes.size(), std::size_t(0));
    QVERIFY(session->errors.empty());
    QVERIFY(session->laneLods.empty());
}

namespace {

// A folder with a Kineto trace and a rank log of about `megabytes` each, large enough that the
// load is still reading when a cancel comes.
void writeLargeTraceAndLog(const QTemporaryDir& dir, int megabytes)
{
    QByteArray trace = R"({"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":1},)"
                       R"("traceEvents":[)";
    for (qint64 i = 0; trace.size() < qint64(megabytes) << 20; ++i)
        trace += R"({"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":7,)"
                 R"("ts":)" +
                 QByteArray::number(1000 + 10 * i) + R"(,"dur":5,"args":{"stream":7}},)";
    trace += R"({"ph":"X","cat":"cpu_op","name":"end","pid":0,"tid":1,"ts":1,"dur":1}]})";
    QByteArray log;
    while (log.size() < qint64(megabytes) << 20)
        log += "2026-12-02 13:41:34.916 [rank0] INFO train: step 12 loss 33.91161\n"
               "node7:12345:12400 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n";
    for (const auto& [name, bytes] : {std::pair{QStringLiteral("rank0.pt.trace.json"), trace},
                                      std::pair{QStringLiteral("rank0.log"), log}}) {
        QFile f(dir.filePath(name));
        QVERIFY(f.open(QIODevice::WriteOnly));
        QCOMPARE(f.write(bytes), bytes.size());
    }
}

} // namespace

// The GUI's path: a cancel while a large trace and a large log are being read ends the load
// (canceled, no session reported, nothing running). The latency is measured by
// bench/cancel_bench, not here.
void TestTraceLoader::cancelDuringLargeTraceAndLogLoadEnds()
{
    QTemporaryDir dir;
    writeLargeTraceAndLog(dir, 64);
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy canceled(&loader, &TraceLoader::canceled);
    bool cancelledWhileReading = false;
    connect(&loader, &TraceLoader::progressChanged, this, [&](int permille) {
        if (!cancelledWhileReading && permille > 0 && permille < 1000) {
            cancelledWhileReading = true;
            loader.cancel();
        }
    });
    loader.start(dir.path());
    QVERIFY(canceled.wait(120000));
    QVERIFY(cancelledWhileReading);
    QTest::qWait(50);
    QCOMPARE(loaded.size(), 0);
    QVERIFY(!loader.isRunning());
}

// A cancel that comes once every file is read (the last progress report) still ends the load:
// the session is marked cancelled and holds nothing, the analysis is not run.
void TestTraceLoader::cancelAfterReadingSkipsTheAnalysis()
{
    QTemporaryDir dir;
    writeLargeTraceAndLog(dir, 8);
    std::atomic<bool> cancel{false};
    const SessionPtr session = loadSession(
        dir.path(),
        [&](qint64 done, qint64 total) {
            if (done == total) cancel = true;
        },
        [&] { return cancel.load(); });
    QVERIFY(cancel.load());
    QVERIFY(session->cancelled);
    QVERIFY(session->logs.empty());
    QVERIFY(session->events.lanes.empty());
    QVERIFY(session->analysis.findings.empty());
}

// The headless commands never draw a timeline, so they do not pay for its pyramids.
void TestTraceLoader::cliLoadSkipsLaneLods()
{
    LoadOptions options;
    options.buildLaneLods = false;
    const SessionPtr session = loadSession(kHealthy, {}, {}, options);
    QVERIFY(!session->events.lanes.empty());
    QVERIFY(session->laneLods.empty());
    QCOMPARE(loadSession(kHealthy)->laneLods.size(), session->events.lanes.size());
}

// The timeline can be shown once the folder is read: `read` comes first, with the session's
// events and no diagnosis yet, then `loaded` with the same session, diagnosed.
void TestTraceLoader::readComesBeforeTheDiagnosis()
{
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    bool undiagnosedAtRead = false;
    SessionPtr atRead;
    connect(&loader, &TraceLoader::read, this, [&](const SessionPtr& s) {
        atRead = s;
        undiagnosedAtRead = s->analysis.findings.empty() && s->autoChecks.empty() &&
                            !s->events.lanes.empty() &&
                            s->laneLods.size() == s->events.lanes.size();
        QCOMPARE(loaded.size(), 0);
    });
    loader.start(QStringLiteral(RANKSCOPE_TEST_DATA "/traces/hang_timeout"));
    QVERIFY(loaded.wait(30000));
    QVERIFY(atRead);
    QVERIFY(undiagnosedAtRead);
    const auto session = loaded.first().first().value<SessionPtr>();
    QCOMPARE(session.get(), atRead.get());
    QVERIFY(!session->analysis.findings.empty() && !session->autoChecks.empty());
}

// A cancel once the folder is read stops the diagnosis: `canceled`, never `loaded`.
void TestTraceLoader::cancelDuringTheDiagnosisEndsIt()
{
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy canceled(&loader, &TraceLoader::canceled);
    QSignalSpy read(&loader, &TraceLoader::read);
    connect(&loader, &TraceLoader::read, &loader, &TraceLoader::cancel);
    // A log whose classification takes far longer than the queued `read` takes to arrive.
    QTemporaryDir dir;
    writeLargeTraceAndLog(dir, 32);
    loader.start(dir.path());
    QVERIFY(canceled.wait(30000));
    QCOMPARE(read.size(), 1);
    QTest::qWait(50);
    QCOMPARE(loaded.size(), 0);
    QVERIFY(!loader.isRunning());
}

QTEST_GUILESS_MAIN(TestTraceLoader)
#include "tst_traceloader.moc"
