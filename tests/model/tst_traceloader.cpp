#include "model/traceloader.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace rankscope;

class TestTraceLoader : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loadsOffTheCallingThread();
    void missingFolderFails();
    void cancelReportsCanceledAndNoResult();
    void newerStartSupersedesOlder();
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

QTEST_GUILESS_MAIN(TestTraceLoader)
#include "tst_traceloader.moc"
