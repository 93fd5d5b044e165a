// Loads that race with the folder, through the window: a FIFO swapped in after discovery, a file
// replaced by a link out of the folder during the load (once at a known point, then by a thread
// that keeps swapping), a link to a FIFO; and Cancel and closing the window during a long load.
// Each asserts the source's status and message, that the good rank beside it loads, and that no
// text of the file outside the folder reaches the session. Elapsed times are printed; the only
// bound asserted is that Cancel and close return at all (within 10 s).
#include "app/mainwindow.h"
#include "model/traceloader.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>
#include <cstdio>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace rankscope;

namespace {

const QByteArray kSecret = "NCCL WARN OUTSIDE-SECRET-TEXT";

void write(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

bool makeFifo(const QString& path)
{
    return ::mkfifo(QFile::encodeName(path).constData(), 0600) == 0;
}

bool renameOver(const QString& from, const QString& to)
{
    return std::rename(QFile::encodeName(from).constData(), QFile::encodeName(to).constData()) == 0;
}

// `lines` lines "step N" (N = 1..lines): the last step names the file that was read.
QByteArray steps(int lines)
{
    QByteArray out;
    for (int i = 1; i <= lines; ++i)
        out += "step " + QByteArray::number(i) + "\n";
    return out;
}

const SourceFile* sourceNamed(const TraceSession& session, const QString& name)
{
    for (const SourceFile& s : session.folder.sources())
        if (s.relativePath == name) return &s;
    return nullptr;
}

const RankLog* logOfRank(const TraceSession& session, int rank)
{
    for (const RankLog& log : session.logs)
        if (log.rank == rank) return &log;
    return nullptr;
}

// Whether any log line or source message of the session holds `text`.
bool sessionHolds(const TraceSession& session, const QByteArray& text)
{
    const QString t = QString::fromUtf8(text);
    for (const SourceFile& s : session.folder.sources())
        if (s.message.contains(t)) return true;
    for (const RankLog& log : session.logs)
        for (int i = 0; i < log.lineCount(); ++i)
            if (log.lineText(i).contains(t)) return true;
    return false;
}

TraceLoader* loaderOf(MainWindow& window)
{
    return window.findChild<TraceLoader*>();
}

// Opens `folder` and waits until it is read (sessionChanged); false after 30 s.
bool load(MainWindow& window, const QString& folder)
{
    QSignalSpy changed(&window, &MainWindow::sessionChanged);
    window.openFolder(folder);
    return changed.wait(30000);
}

QPushButton* cancelButton(MainWindow& window)
{
    for (QPushButton* b : window.statusBar()->findChildren<QPushButton*>())
        if (b->text() == QLatin1String("Cancel")) return b;
    return nullptr;
}

} // namespace

class TestLoadRaces : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void fifoSwappedInAfterDiscovery();
    void fileReplacedByAnOutsideLinkDuringTheLoad();
    void linkToAFifo();
    void cancelAndCloseReturn();

private:
    QTemporaryDir m_db;
};

void TestLoadRaces::initTestCase()
{
    QVERIFY(m_db.isValid());
    qputenv("RANKSCOPE_DB_DIR", m_db.path().toUtf8());
}

// rank1.log (200,000 lines) is replaced by a FIFO as soon as the load reports its progress in MB,
// which it does only once discovery has opened every file: the load ends, rank1.log is read whole
// from the file discovery opened. The next load finds the FIFO and says so, without blocking.
void TestLoadRaces::fifoSwappedInAfterDiscovery()
{
    QTemporaryDir outside, dir;
    write(dir.filePath(QStringLiteral("rank0.log")), steps(4));
    write(dir.filePath(QStringLiteral("rank1.log")), steps(200'000));
    // Made beside the folder (so discovery never lists it), then moved over rank1.log.
    const QString fifo = outside.filePath(QStringLiteral("pipe"));
    QVERIFY(makeFifo(fifo));
    MainWindow window;
    window.show();
    bool swapped = false;
    connect(loaderOf(window), &TraceLoader::progressChanged, &window,
            [&](int, const QString& text) {
                if (!swapped && text.contains(QLatin1String(" MB")))
                    swapped = renameOver(fifo, dir.filePath(QStringLiteral("rank1.log")));
            });
    QVERIFY(load(window, dir.path()));
    QVERIFY(swapped);
    const SessionPtr first = window.session();
    const SourceFile* rank1 = sourceNamed(*first, QStringLiteral("rank1.log"));
    QVERIFY(rank1);
    QCOMPARE(rank1->status, SourceStatus::Ok);
    QVERIFY2(rank1->message.startsWith(QLatin1String("200000 lines")), qPrintable(rank1->message));
    QVERIFY(logOfRank(*first, 1));
    QCOMPARE(logOfRank(*first, 1)->lastStep().value_or(-1), 200'000);
    QCOMPARE(sourceNamed(*first, QStringLiteral("rank0.log"))->status, SourceStatus::Ok);
    QCOMPARE(logOfRank(*first, 0)->lastStep().value_or(-1), 4);

    QVERIFY(load(window, dir.path()));
    const SessionPtr second = window.session();
    rank1 = sourceNamed(*second, QStringLiteral("rank1.log"));
    QVERIFY(rank1);
    QCOMPARE(rank1->status, SourceStatus::Error);
    QCOMPARE(rank1->message, QStringLiteral("a FIFO (named pipe): not read"));
    QVERIFY(!logOfRank(*second, 1));
    QCOMPARE(logOfRank(*second, 0)->lastStep().value_or(-1), 4);
}

// rank1.log is replaced by a link to a file outside the folder during the load (at its first
// progress), then by a thread that swaps file and link back and forth through five loads. A
// load reads either the file discovery opened or refuses the link; the outside text is never read.
void TestLoadRaces::fileReplacedByAnOutsideLinkDuringTheLoad()
{
    QTemporaryDir outside, dir;
    const QString secret = outside.filePath(QStringLiteral("secret.log"));
    write(secret, kSecret + "\n" + steps(99));
    write(dir.filePath(QStringLiteral("rank0.log")), steps(4));
    const QString rank1 = dir.filePath(QStringLiteral("rank1.log"));
    write(rank1, steps(200'000));
    // The link is made outside the folder (so discovery never lists it) and moved in.
    const QString link = outside.filePath(QStringLiteral("link"));
    QVERIFY(QFile::link(secret, link));

    MainWindow window;
    window.show();
    bool swapped = false;
    const auto connection = connect(loaderOf(window), &TraceLoader::progressChanged, &window,
                                    [&](int, const QString& text) {
                                        if (!swapped && text.contains(QLatin1String(" MB")))
                                            swapped = renameOver(link, rank1);
                                    });
    QVERIFY(load(window, dir.path()));
    disconnect(connection);
    QVERIFY(swapped);
    QVERIFY(QFileInfo(rank1).isSymLink());
    SessionPtr session = window.session();
    QCOMPARE(sourceNamed(*session, QStringLiteral("rank1.log"))->status, SourceStatus::Ok);
    QCOMPARE(logOfRank(*session, 1)->lastStep().value_or(-1), 200'000);
    QVERIFY(!sessionHolds(*session, kSecret));

    // A thread keeps swapping: a small file, then the link, each made beside the folder and
    // renamed over rank1.log (never a moment without it).
    std::atomic<bool> stop{false};
    std::atomic<int> swaps{0};
    const QString tmpFile = outside.filePath(QStringLiteral("file"));
    std::thread swapper([&] {
        while (!stop.load()) {
            QFile f(tmpFile);
            if (f.open(QIODevice::WriteOnly)) f.write("INFO rank 1 fine\nstep 7\n");
            f.close();
            renameOver(tmpFile, rank1);
            QThread::usleep(1000);
            QFile::link(secret, link);
            renameOver(link, rank1);
            ++swaps;
            QThread::usleep(1000);
        }
    });
    const auto join = qScopeGuard([&] {
        stop = true;
        swapper.join();
    });
    int refused = 0, read = 0;
    for (int run = 0; run < 5; ++run) {
        QVERIFY(load(window, dir.path()));
        session = window.session();
        const SourceFile* s = sourceNamed(*session, QStringLiteral("rank1.log"));
        QVERIFY(s);
        if (s->status == SourceStatus::Ok) {
            ++read;
            QCOMPARE(logOfRank(*session, 1)->lastStep().value_or(-1), 7);
        } else {
            ++refused;
            QCOMPARE(s->status, SourceStatus::Error);
            // Refused either way: found as the link, or as a regular file that is a link by the
            // time it is opened (the swap fell between the folder's listing and the open).
            QVERIFY2(s->message ==
                             QStringLiteral("link to a file outside the folder; not followed") ||
                         s->message == QStringLiteral("a link: not read"),
                     qPrintable(s->message));
            QVERIFY(!logOfRank(*session, 1));
        }
        QVERIFY(!sessionHolds(*session, kSecret));
        QCOMPARE(sourceNamed(*session, QStringLiteral("rank0.log"))->status, SourceStatus::Ok);
        QCOMPARE(logOfRank(*session, 0)->lastStep().value_or(-1), 4);
    }
    qInfo("5 loads while rank1.log was swapped %d times: %d read the file, %d refused the link",
          swaps.load(), read, refused);
}

// A link to a FIFO inside the folder is listed and never opened; the good rank loads.
void TestLoadRaces::linkToAFifo()
{
    QTemporaryDir dir;
    write(dir.filePath(QStringLiteral("rank0.log")), steps(4));
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("sub")));
    QVERIFY(makeFifo(dir.filePath(QStringLiteral("sub/pipe"))));
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("sub/pipe")),
                        dir.filePath(QStringLiteral("rank2.log"))));
    MainWindow window;
    window.show();
    QElapsedTimer timer;
    timer.start();
    QVERIFY(load(window, dir.path()));
    qInfo("loaded in %lld ms", timer.elapsed());
    const SessionPtr session = window.session();
    const SourceFile* link = sourceNamed(*session, QStringLiteral("rank2.log"));
    QVERIFY(link);
    QCOMPARE(link->status, SourceStatus::Error);
    QCOMPARE(link->message, QStringLiteral("link to a FIFO (named pipe): not read"));
    const SourceFile* pipe = sourceNamed(*session, QStringLiteral("sub/pipe"));
    QVERIFY(pipe);
    QCOMPARE(pipe->message, QStringLiteral("a FIFO (named pipe): not read"));
    QCOMPARE(session->folder.ranks(), QList<int>{0});
    QCOMPARE(sourceNamed(*session, QStringLiteral("rank0.log"))->status, SourceStatus::Ok);
    QCOMPARE(logOfRank(*session, 0)->lastStep().value_or(-1), 4);
}

// A folder of a 160 MB log beside a FIFO and a link to it: Cancel during the load, and closing
// the window during the load, return (asserted: within 10 s; the times are printed).
void TestLoadRaces::cancelAndCloseReturn()
{
    QTemporaryDir dir;
    {
        QFile big(dir.filePath(QStringLiteral("rank1.log")));
        QVERIFY(big.open(QIODevice::WriteOnly));
        const QByteArray block = steps(100'000); // ~1.1 MB
        while (big.size() < (qint64(160) << 20))
            QCOMPARE(big.write(block), block.size());
    }
    write(dir.filePath(QStringLiteral("rank0.log")), steps(4));
    QVERIFY(makeFifo(dir.filePath(QStringLiteral("rank2.log"))));
    QVERIFY(QFile::link(dir.filePath(QStringLiteral("rank2.log")),
                        dir.filePath(QStringLiteral("rank3.log"))));

    {
        MainWindow window;
        window.show();
        TraceLoader* loader = loaderOf(window);
        QSignalSpy progress(loader, &TraceLoader::progressChanged);
        QSignalSpy canceled(loader, &TraceLoader::canceled);
        QSignalSpy read(loader, &TraceLoader::read);
        window.openFolder(dir.path());
        QVERIFY(progress.wait(30000));
        QPushButton* cancel = cancelButton(window);
        QVERIFY(cancel);
        QVERIFY(cancel->isVisible());
        QElapsedTimer timer;
        timer.start();
        cancel->click();
        QVERIFY(canceled.count() > 0 || canceled.wait(10000));
        const qint64 ms = timer.elapsed();
        qInfo("Cancel returned after %lld ms (read stage reached: %s)", ms,
              read.isEmpty() ? "no" : "yes");
        QVERIFY(ms < 10000);
        QVERIFY(!loader->isRunning());
    }
    auto* window = new MainWindow;
    window->show();
    QSignalSpy progress(loaderOf(*window), &TraceLoader::progressChanged);
    window->openFolder(dir.path());
    QVERIFY(progress.wait(30000));
    QElapsedTimer timer;
    timer.start();
    window->close();
    delete window; // waits for the loader's thread
    const qint64 ms = timer.elapsed();
    qInfo("closing the window returned after %lld ms", ms);
    QVERIFY(ms < 10000);
}

QTEST_MAIN(TestLoadRaces)
#include "tst_loadraces.moc"
