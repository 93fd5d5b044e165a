#include "model/investigation/investigationstore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <csignal>
#include <memory>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace rankscope;

// Runs `body` in a child process, kills it there and waits for it; what `body` leaves on the heap
// is never destroyed, as in a crash.
template <typename Fn> bool killedChild(Fn&& body)
{
    const pid_t child = fork();
    if (child < 0) return false;
    if (child == 0) {
        body();
        raise(SIGKILL);
    }
    int status = 0;
    return waitpid(child, &status, 0) == child && WIFSIGNALED(status) &&
           WTERMSIG(status) == SIGKILL;
}

class TestInvestigationStore : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void oneInvestigationPerCanonicalFolder();
    void checklistRoundTripsAcrossReopen();
    void notesFindingsAndBookmarks();
    void bookmarkRenameAndDeleteSurviveReopening();
    void recentIsMostRecentlyUpdatedFirst();
    void newerSchemaIsLeftAloneAndAFreshOneUsedBeside();
    void corruptDatabaseIsKeptAndAFreshOneStarted_data();
    void corruptDatabaseIsKeptAndAFreshOneStarted();
    void writesUseWal();
    void aLockedDatabaseIsNotTakenForCorrupt();
    void aKilledWriterLosesNothingCommitted();
    void environmentOverridesTheDirectory();
    void oneConnectionPerThread();
    void aSecondStoreOpensItReadOnly();
    void aLockWhoseProcessIsGoneIsTakenOver();
};

void TestInvestigationStore::oneInvestigationPerCanonicalFolder()
{
    QTemporaryDir db, folder;
    QDir(folder.path()).mkdir(QStringLiteral("job"));
    InvestigationStore store(db.path());
    QVERIFY2(store.isOpen(), qPrintable(store.lastError()));
    QVERIFY(store.notice().isEmpty());
    const qint64 a = store.openInvestigation(folder.path() + QStringLiteral("/job"));
    const qint64 b = store.openInvestigation(folder.path() + QStringLiteral("/job/../job/"));
    QVERIFY(a > 0);
    QCOMPARE(b, a);
    QVERIFY(QFile::link(folder.path() + QStringLiteral("/job"),
                        folder.path() + QStringLiteral("/alias")));
    QCOMPARE(store.openInvestigation(folder.path() + QStringLiteral("/alias")), a);
    QCOMPARE(store.recentInvestigations().size(), 1);
    QCOMPARE(store.investigation(a)->folder,
             QDir(folder.path() + QStringLiteral("/job")).canonicalPath());
}

void TestInvestigationStore::checklistRoundTripsAcrossReopen()
{
    QTemporaryDir db;
    qint64 id = -1;
    {
        InvestigationStore store(db.path());
        id = store.openInvestigation(db.path());
        QVERIFY(store.setStepState(id, QStringLiteral("fix-x"), 0, StepStatus::Done,
                                   QStringLiteral("ok")));
        QVERIFY(store.setStepState(id, QStringLiteral("fix-x"), 2, StepStatus::Failed, QString()));
        QVERIFY(store.setStepState(id, QStringLiteral("fix-x"), 2, StepStatus::Skipped,
                                   QStringLiteral("n/a")));
        QVERIFY(store.setStepState(id, QStringLiteral("fix-y"), 0, StepStatus::Done, QString()));
        QVERIFY(store.setCurrentStep(id, QStringLiteral("fix-x"), 2));
    }
    InvestigationStore store(db.path());
    QCOMPARE(store.openInvestigation(db.path()), id);
    const QHash<int, StepState> x = store.checklist(id, QStringLiteral("fix-x"));
    QCOMPARE(x.size(), 2);
    QCOMPARE(x.value(0).status, StepStatus::Done);
    QCOMPARE(x.value(0).note, QStringLiteral("ok"));
    QCOMPARE(x.value(2).status, StepStatus::Skipped);
    QCOMPARE(x.value(2).note, QStringLiteral("n/a"));
    QVERIFY(x.value(2).updatedAt.isValid());
    QCOMPARE(store.checklist(id, QStringLiteral("fix-y")).size(), 1);
    QCOMPARE(store.currentStep(id), std::make_pair(QStringLiteral("fix-x"), 2));
    QCOMPARE(store.investigation(id)->stepsDone, 2);
    QCOMPARE(store.investigation(id)->stepsTouched, 3);
}

void TestInvestigationStore::notesFindingsAndBookmarks()
{
    QTemporaryDir db;
    InvestigationStore store(db.path());
    const qint64 id = store.openInvestigation(db.path());
    const QByteArray findings = R"([{"id":"F1","symptom":"a/b/c","summary":"rank 1 \u00e9"}])";
    QVERIFY(store.setFindingsJson(id, findings));
    QCOMPARE(store.findingsJson(id), findings);
    QVERIFY(store.setNotes(id, QStringLiteral("tried NCCL_P2P_DISABLE=1 — no change")));
    QCOMPARE(store.notes(id), QStringLiteral("tried NCCL_P2P_DISABLE=1 — no change"));
    const qint64 late =
        store.addBookmark(id, 5'000'000'000, 6'000'000'000, QStringLiteral("stall"));
    const qint64 early = store.addBookmark(id, 1, 2, QStringLiteral("start"));
    QVERIFY(late > 0 && early > 0);
    QList<TimelineBookmark> marks = store.bookmarks(id);
    QCOMPARE(marks.size(), 2);
    QCOMPARE(marks.at(0).label, QStringLiteral("start"));
    QCOMPARE(marks.at(1).t1Ns, qint64(6'000'000'000));
    QVERIFY(store.removeBookmark(early));
    QVERIFY(!store.removeBookmark(early));
    QCOMPARE(store.bookmarks(id).size(), 1);
    QVERIFY(!store.setNotes(id + 100, QStringLiteral("nobody")));
    QVERIFY(store.removeInvestigation(id));
    QVERIFY(store.bookmarks(id).isEmpty());
    QVERIFY(!store.investigation(id));
}

void TestInvestigationStore::bookmarkRenameAndDeleteSurviveReopening()
{
    QTemporaryDir db;
    qint64 id = -1, kept = -1, gone = -1;
    {
        InvestigationStore store(db.path());
        id = store.openInvestigation(db.path());
        kept = store.addBookmark(id, 10, 20, QStringLiteral("10 – 20 ms"));
        gone = store.addBookmark(id, 30, 40, QStringLiteral("30 – 40 ms"));
        const QDateTime before = store.investigation(id)->updatedAt;
        QTest::qWait(5); // updated_ms has millisecond resolution
        QVERIFY(store.renameBookmark(kept, QStringLiteral("rank 2 stalls here — «NCCL»")));
        QVERIFY(store.investigation(id)->updatedAt > before);
        QVERIFY(store.removeBookmark(gone));
        QVERIFY(!store.renameBookmark(gone, QStringLiteral("deleted")));
        QVERIFY(!store.renameBookmark(kept + gone + 100, QStringLiteral("never existed")));
    }
    InvestigationStore reopened(db.path());
    QCOMPARE(reopened.openInvestigation(db.path()), id);
    const QList<TimelineBookmark> marks = reopened.bookmarks(id);
    QCOMPARE(marks.size(), 1);
    QCOMPARE(marks.at(0).id, kept);
    QCOMPARE(marks.at(0).label, QStringLiteral("rank 2 stalls here — «NCCL»"));
    QCOMPARE(marks.at(0).t0Ns, qint64(10));
    QCOMPARE(marks.at(0).t1Ns, qint64(20));
}

void TestInvestigationStore::recentIsMostRecentlyUpdatedFirst()
{
    QTemporaryDir db, a, b;
    InvestigationStore store(db.path());
    const qint64 ia = store.openInvestigation(a.path());
    QTest::qWait(5);
    const qint64 ib = store.openInvestigation(b.path());
    QCOMPARE(store.recentInvestigations().first().id, ib);
    QTest::qWait(5);
    QVERIFY(store.setStepState(ia, QStringLiteral("p"), 0, StepStatus::Done, QString()));
    const QList<InvestigationSummary> recent = store.recentInvestigations();
    QCOMPARE(recent.size(), 2);
    QCOMPARE(recent.first().id, ia);
    QCOMPARE(store.recentInvestigations(1).size(), 1);
}

void TestInvestigationStore::newerSchemaIsLeftAloneAndAFreshOneUsedBeside()
{
    QTemporaryDir db;
    const QString usual = QDir(db.path()).filePath(InvestigationStore::fileName());
    {
        InvestigationStore store(db.path());
        store.openInvestigation(db.path());
    }
    {
        sqlite3* raw = nullptr;
        QCOMPARE(sqlite3_open(QFile::encodeName(usual).constData(), &raw), SQLITE_OK);
        QCOMPARE(sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
        sqlite3_close(raw);
    }
    const QByteArray before = [&] {
        QFile f(usual);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    InvestigationStore store(db.path());
    QVERIFY2(store.isOpen(), qPrintable(store.lastError()));
    QVERIFY(store.notice().contains(QLatin1String("newer version")));
    QVERIFY(store.databasePath() != usual);
    QVERIFY(store.recentInvestigations().isEmpty());
    QVERIFY(store.openInvestigation(db.path()) > 0);
    QFile f(usual);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), before);

    // The next start finds its own file again, with what it wrote.
    InvestigationStore again(db.path());
    QCOMPARE(again.databasePath(), store.databasePath());
    QCOMPARE(again.recentInvestigations().size(), 1);
}

void TestInvestigationStore::corruptDatabaseIsKeptAndAFreshOneStarted_data()
{
    QTest::addColumn<bool>("keepHeader");
    QTest::addRow("not-a-database") << false;
    QTest::addRow("damaged-pages") << true;
}

void TestInvestigationStore::corruptDatabaseIsKeptAndAFreshOneStarted()
{
    QFETCH(bool, keepHeader);
    QTemporaryDir db;
    const QString usual = QDir(db.path()).filePath(InvestigationStore::fileName());
    {
        InvestigationStore store(db.path());
        const qint64 id = store.openInvestigation(db.path());
        for (int i = 0; i < 200; ++i)
            store.setStepState(id, QStringLiteral("pattern-%1").arg(i), i, StepStatus::Done,
                               QString(200, QLatin1Char('x')));
    }
    QByteArray damaged;
    {
        QFile f(usual);
        QVERIFY(f.open(QIODevice::ReadOnly));
        damaged = f.readAll();
    }
    QVERIFY(damaged.size() > 8192);
    // Either the whole file is garbage, or the header survives and the b-tree pages do not.
    const qsizetype from = keepHeader ? 4096 : 0;
    for (qsizetype i = from; i < damaged.size(); ++i)
        damaged[i] = char((i * 131) & 0xff);
    {
        QFile f(usual);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(damaged);
    }
    QFile::remove(usual + QStringLiteral("-wal"));
    QFile::remove(usual + QStringLiteral("-shm"));

    InvestigationStore store(db.path());
    QVERIFY2(store.isOpen(), qPrintable(store.lastError()));
    QVERIFY(store.notice().contains(QLatin1String("damaged")));
    QCOMPARE(store.databasePath(), usual);
    QVERIFY(store.recentInvestigations().isEmpty());
    QStringList kept =
        QDir(db.path()).entryList({InvestigationStore::fileName() + QStringLiteral(".corrupt-*")});
    // Its -wal and -shm companions, when SQLite left any, are kept with it.
    kept.removeIf([](const QString& name) {
        return name.endsWith(QLatin1String("-wal")) || name.endsWith(QLatin1String("-shm"));
    });
    QCOMPARE(kept.size(), 1);
    QFile keptFile(QDir(db.path()).filePath(kept.first()));
    QVERIFY(keptFile.open(QIODevice::ReadOnly));
    QCOMPARE(keptFile.readAll(), damaged);
}

void TestInvestigationStore::writesUseWal()
{
    QTemporaryDir db;
    InvestigationStore store(db.path());
    const qint64 id = store.openInvestigation(db.path());
    QVERIFY(store.setStepState(id, QStringLiteral("p"), 1, StepStatus::Done, QString()));
    QVERIFY(QFile::exists(store.databasePath() + QStringLiteral("-wal")));
    // A second connection (another thread or process) sees the committed write at once.
    InvestigationStore reader(db.path());
    QCOMPARE(reader.checklist(id, QStringLiteral("p")).value(1).status, StepStatus::Done);
}

void TestInvestigationStore::aLockedDatabaseIsNotTakenForCorrupt()
{
    QTemporaryDir db;
    const QString usual = QDir(db.path()).filePath(InvestigationStore::fileName());
    {
        InvestigationStore store(db.path());
        store.openInvestigation(db.path());
    }
    sqlite3* holder = nullptr;
    QCOMPARE(sqlite3_open(QFile::encodeName(usual).constData(), &holder), SQLITE_OK);
    QCOMPARE(sqlite3_exec(holder, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;", nullptr,
                          nullptr, nullptr),
             SQLITE_OK);
    {
        InvestigationStore store(db.path());
        QVERIFY(!store.isOpen());
        QVERIFY(store.notice().isEmpty());
        QVERIFY(store.lastError().contains(QLatin1String("locked")));
        QVERIFY(QDir(db.path()).entryList({QStringLiteral("*.corrupt-*")}).isEmpty());
    }
    sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
    InvestigationStore store(db.path());
    QVERIFY(store.isOpen());
    QCOMPARE(store.recentInvestigations().size(), 1);
}

void TestInvestigationStore::aKilledWriterLosesNothingCommitted()
{
    QTemporaryDir db;
    qint64 id = -1;
    {
        InvestigationStore store(db.path());
        id = store.openInvestigation(db.path());
    }
    // The child writes and is killed with its connection open: no close, no checkpoint.
    QVERIFY(killedChild([&] {
        auto* store = new InvestigationStore(db.path()); // never closed: the kill ends it
        for (int i = 0; i < 20; ++i)
            store->setStepState(id, QStringLiteral("p"), i, StepStatus::Done,
                                QStringLiteral("n%1").arg(i));
        store->setNotes(id, QStringLiteral("written before the kill"));
    }));
    InvestigationStore store(db.path());
    QVERIFY(store.notice().isEmpty());
    const QHash<int, StepState> steps = store.checklist(id, QStringLiteral("p"));
    QCOMPARE(steps.size(), 20);
    QCOMPARE(steps.value(19).note, QStringLiteral("n19"));
    QCOMPARE(store.notes(id), QStringLiteral("written before the kill"));
}

void TestInvestigationStore::environmentOverridesTheDirectory()
{
    QTemporaryDir db;
    qputenv("RANKSCOPE_DB_DIR", db.path().toUtf8());
    QCOMPARE(InvestigationStore::defaultDirectory(), db.path());
    InvestigationStore store;
    QCOMPARE(store.databasePath(), QDir(db.path()).filePath(InvestigationStore::fileName()));
    qunsetenv("RANKSCOPE_DB_DIR");
}

void TestInvestigationStore::oneConnectionPerThread()
{
    QTemporaryDir db;
    InvestigationStore store(db.path());
    const qint64 id = store.openInvestigation(db.path());
    QVERIFY(store.setNotes(id, QStringLiteral("main")));
    store.closeInvestigation(id); // the worker's own store writes it next
    bool borrowedWorked = true;
    QString borrowedError;
    QString ownRead;
    bool ownWrote = false;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("other than its own")));
    std::unique_ptr<QThread> worker(QThread::create([&] {
        borrowedWorked = store.setNotes(id, QStringLiteral("from the worker"));
        borrowedError = store.lastError();
        InvestigationStore own(db.path());
        ownRead = own.notes(id);
        ownWrote = own.setStepState(id, QStringLiteral("p"), 0, StepStatus::Done, QString());
    }));
    worker->start();
    QVERIFY(worker->wait(10000));
    QVERIFY(!borrowedWorked);
    QVERIFY(borrowedError.contains(QLatin1String("thread")));
    QCOMPARE(ownRead, QStringLiteral("main"));
    QVERIFY(ownWrote);
    QCOMPARE(store.checklist(id, QStringLiteral("p")).value(0).status, StepStatus::Done);
}

void TestInvestigationStore::aSecondStoreOpensItReadOnly()
{
    QTemporaryDir db, folder;
    auto first = std::make_unique<InvestigationStore>(db.path());
    InvestigationStore second(db.path());
    const qint64 id = first->openInvestigation(folder.path());
    QVERIFY(!first->isReadOnly(id));
    QVERIFY(first->setNotes(id, QStringLiteral("first's notes")));
    QVERIFY(first->setStepState(id, QStringLiteral("p"), 0, StepStatus::Done, QStringLiteral("a")));

    QCOMPARE(second.openInvestigation(folder.path()), id);
    QVERIFY(second.isReadOnly(id));
    QVERIFY2(
        second.readOnlyReason(id).contains(QString::number(QCoreApplication::applicationPid())),
        qPrintable(second.readOnlyReason(id)));
    // The second reads what the first saved and cannot overwrite any of it.
    QCOMPARE(second.notes(id), QStringLiteral("first's notes"));
    QVERIFY(!second.setNotes(id, QStringLiteral("stale notes")));
    QVERIFY(second.lastError().contains(QLatin1String("read-only")));
    QVERIFY(!second.setStepState(id, QStringLiteral("p"), 0, StepStatus::Failed, QString()));
    QVERIFY(!second.setCurrentStep(id, QStringLiteral("p"), 3));
    QVERIFY(!second.setFindingsJson(id, "{}"));
    QCOMPARE(second.addBookmark(id, 0, 10, QStringLiteral("b")), qint64(-1));
    const qint64 mark = first->addBookmark(id, 0, 10, QStringLiteral("first's"));
    QVERIFY(mark > 0);
    QVERIFY(!second.renameBookmark(mark, QStringLiteral("renamed")));
    QVERIFY(!second.removeBookmark(mark));
    QVERIFY(!second.removeInvestigation(id));
    QCOMPARE(first->notes(id), QStringLiteral("first's notes"));
    QCOMPARE(first->checklist(id, QStringLiteral("p")).value(0).status, StepStatus::Done);
    QCOMPARE(first->bookmarks(id).value(0).label, QStringLiteral("first's"));

    // Once the first has quit, opening it again makes the second its writer.
    first.reset();
    QCOMPARE(second.openInvestigation(folder.path()), id);
    QVERIFY(!second.isReadOnly(id));
    QVERIFY(second.setNotes(id, QStringLiteral("second's notes")));
    QCOMPARE(second.notes(id), QStringLiteral("second's notes"));
}

void TestInvestigationStore::aLockWhoseProcessIsGoneIsTakenOver()
{
    QTemporaryDir db, folder;
    qint64 id = -1;
    {
        InvestigationStore store(db.path());
        id = store.openInvestigation(folder.path());
    }
    // A child opens the investigation and dies holding its lock (no destructor runs).
    QVERIFY(killedChild([&] {
        auto* store = new InvestigationStore(db.path()); // never closed: the kill ends it
        store->openInvestigation(folder.path());
    }));
    const QStringList locks =
        QDir(db.path()).entryList({QStringLiteral("*.lock")}, QDir::Files | QDir::Hidden);
    QCOMPARE(locks.size(), 1); // left behind by the child
    InvestigationStore store(db.path());
    QCOMPARE(store.openInvestigation(folder.path()), id);
    QVERIFY2(!store.isReadOnly(id), qPrintable(store.readOnlyReason(id)));
    QVERIFY(store.setNotes(id, QStringLiteral("after the crash")));
}

QTEST_GUILESS_MAIN(TestInvestigationStore)
#include "tst_investigationstore.moc"
