#include "model/investigation/investigationstore.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLockFile>
#include <QStandardPaths>
#include <QThread>
#include <sqlite3.h>

namespace rankscope {

QString stepStatusKey(StepStatus status)
{
    switch (status) {
    case StepStatus::ToDo:
        return QStringLiteral("todo");
    case StepStatus::Done:
        return QStringLiteral("done");
    case StepStatus::Skipped:
        return QStringLiteral("skipped");
    case StepStatus::Failed:
        return QStringLiteral("failed");
    }
    return QStringLiteral("todo");
}

StepStatus stepStatusFromKey(const QString& key)
{
    if (key == QLatin1String("done")) return StepStatus::Done;
    if (key == QLatin1String("skipped")) return StepStatus::Skipped;
    if (key == QLatin1String("failed")) return StepStatus::Failed;
    return StepStatus::ToDo;
}

QString stepStatusLabel(StepStatus status)
{
    switch (status) {
    case StepStatus::ToDo:
        return QStringLiteral("To do");
    case StepStatus::Done:
        return QStringLiteral("Done");
    case StepStatus::Skipped:
        return QStringLiteral("Skipped");
    case StepStatus::Failed:
        return QStringLiteral("Failed");
    }
    return QStringLiteral("To do");
}

namespace {

// A prepared statement that finalizes itself; bind() is 1-based like SQLite.
class Stmt {
public:
    Stmt(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
    ~Stmt() { sqlite3_finalize(m_stmt); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    bool ok() const { return m_rc == SQLITE_OK && m_stmt; }
    Stmt& bind(int i, qint64 v)
    {
        sqlite3_bind_int64(m_stmt, i, v);
        return *this;
    }
    Stmt& bind(int i, const QString& v)
    {
        const QByteArray utf8 = v.toUtf8();
        sqlite3_bind_text(m_stmt, i, utf8.constData(), int(utf8.size()), SQLITE_TRANSIENT);
        return *this;
    }
    Stmt& bindBlobText(int i, const QByteArray& v)
    {
        sqlite3_bind_text(m_stmt, i, v.constData(), int(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    int step() { return sqlite3_step(m_stmt); }
    bool row() { return step() == SQLITE_ROW; }
    bool done() { return step() == SQLITE_DONE; }
    qint64 int64(int col) const { return sqlite3_column_int64(m_stmt, col); }
    QString text(int col) const
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, col));
        return p ? QString::fromUtf8(p, sqlite3_column_bytes(m_stmt, col)) : QString();
    }
    QByteArray bytes(int col) const
    {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, col));
        return p ? QByteArray(p, sqlite3_column_bytes(m_stmt, col)) : QByteArray();
    }

private:
    sqlite3_stmt* m_stmt = nullptr;
    int m_rc = SQLITE_ERROR;
};

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}
QDateTime fromMs(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms);
}

const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS investigations(
  id INTEGER PRIMARY KEY,
  folder TEXT NOT NULL UNIQUE,
  opened_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  findings_json TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  current_pattern TEXT NOT NULL DEFAULT '',
  current_step INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS checklist(
  investigation_id INTEGER NOT NULL REFERENCES investigations(id) ON DELETE CASCADE,
  pattern_id TEXT NOT NULL,
  step_index INTEGER NOT NULL,
  status TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY(investigation_id, pattern_id, step_index));
CREATE TABLE IF NOT EXISTS bookmarks(
  id INTEGER PRIMARY KEY,
  investigation_id INTEGER NOT NULL REFERENCES investigations(id) ON DELETE CASCADE,
  t0_ns INTEGER NOT NULL,
  t1_ns INTEGER NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL);
)sql";

} // namespace

QString InvestigationStore::defaultDirectory()
{
    const QString env = qEnvironmentVariable("RANKSCOPE_DB_DIR");
    if (!env.isEmpty()) return env;
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
}

InvestigationStore::InvestigationStore(const QString& directory)
    : m_thread(QThread::currentThread())
{
    if (!QDir().mkpath(directory)) {
        m_error = QStringLiteral("Cannot create the directory %1").arg(directory);
        return;
    }
    const QString usual = QDir(directory).filePath(fileName());
    Health health = openAt(usual);
    if (health == Health::Newer) {
        // The newer program keeps its file; we work beside it in a file of our own version.
        const QString beside = QDir(directory).filePath(
            QStringLiteral("investigations-schema%1.sqlite").arg(kSchemaVersion));
        m_notice = QStringLiteral("The investigation database %1 was written by a newer version "
                                  "of RankScope. It is left untouched; this version keeps its "
                                  "investigations in %2.")
                       .arg(usual, beside);
        health = openAt(beside);
        if (health == Health::Corrupt || health == Health::Newer) {
            m_error = QStringLiteral("The database %1 cannot be used either").arg(beside);
            closeDb();
            return;
        }
    } else if (health == Health::Corrupt) {
        const QString kept =
            usual + QStringLiteral(".corrupt-") +
            QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMddThhmmss"));
        bool moved = QFile::rename(usual, kept);
        for (const char* suffix : {"-wal", "-shm"}) {
            const QString side = usual + QLatin1String(suffix);
            if (QFile::exists(side))
                moved = QFile::rename(side, kept + QLatin1String(suffix)) && moved;
        }
        if (!moved) {
            m_error = QStringLiteral("The investigation database %1 is damaged and could not be "
                                     "moved aside")
                          .arg(usual);
            return;
        }
        m_notice = QStringLiteral("The investigation database %1 is damaged. It was kept as %2 and "
                                  "a fresh database was started; earlier investigations are not "
                                  "listed.")
                       .arg(usual, kept);
        health = openAt(usual);
    }
    if (health != Health::Ok) closeDb();
}

InvestigationStore::~InvestigationStore()
{
    closeDb();
}

void InvestigationStore::closeDb()
{
    if (m_db) sqlite3_close(m_db);
    m_db = nullptr;
}

bool InvestigationStore::usable() const
{
    if (QThread::currentThread() != m_thread) {
        // SQLite connections are not to be shared across threads here: open another store.
        m_error = QStringLiteral("InvestigationStore used from a thread other than its own");
        qWarning("InvestigationStore: %s", qPrintable(m_error));
        return false;
    }
    return m_db != nullptr;
}

InvestigationStore::Health InvestigationStore::openAt(const QString& path)
{
    closeDb();
    m_path = path;
    const QByteArray native = QFile::encodeName(path);
    if (sqlite3_open_v2(native.constData(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
        m_error = QString::fromUtf8(m_db ? sqlite3_errmsg(m_db) : "out of memory");
        closeDb();
        return Health::Failed;
    }
    sqlite3_busy_timeout(m_db, 3000);
    // Only damage counts as corrupt; a busy or unreadable file must never be moved aside.
    const auto damaged = [](int rc) { return rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT; };
    int version = -1;
    {
        Stmt q(m_db, "PRAGMA user_version");
        const int rc = q.ok() ? q.step() : sqlite3_errcode(m_db);
        if (rc == SQLITE_ROW) {
            version = int(q.int64(0));
        } else {
            m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
            // Closed before the caller renames the file, so SQLite never touches the new name.
            closeDb();
            return damaged(rc) ? Health::Corrupt : Health::Failed;
        }
    }
    if (version > kSchemaVersion) {
        closeDb();
        return Health::Newer;
    }
    {
        Stmt check(m_db, "PRAGMA quick_check");
        const int rc = check.ok() ? check.step() : sqlite3_errcode(m_db);
        if (rc != SQLITE_ROW || check.text(0) != QLatin1String("ok")) {
            m_error = rc == SQLITE_ROW ? check.text(0) : QString::fromUtf8(sqlite3_errmsg(m_db));
            closeDb();
            return rc == SQLITE_ROW || damaged(rc) ? Health::Corrupt : Health::Failed;
        }
    }
    if (!exec("PRAGMA journal_mode=WAL") || !exec("PRAGMA synchronous=FULL") ||
        !exec("PRAGMA foreign_keys=ON"))
        return Health::Failed;
    if (version < kSchemaVersion) {
        if (!exec("BEGIN IMMEDIATE")) return Health::Failed;
        if (!exec(kSchema) || !exec("PRAGMA user_version=1") || !exec("COMMIT")) {
            exec("ROLLBACK");
            return Health::Failed;
        }
    }
    return Health::Ok;
}

bool InvestigationStore::exec(const char* sql) const
{
    if (!m_db) return false;
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        m_error = QString::fromUtf8(message ? message : sqlite3_errmsg(m_db));
        sqlite3_free(message);
        return false;
    }
    return true;
}

bool InvestigationStore::touch(qint64 id) const
{
    Stmt q(m_db, "UPDATE investigations SET updated_ms=?1 WHERE id=?2");
    return q.ok() && q.bind(1, nowMs()).bind(2, id).done();
}

qint64 InvestigationStore::openInvestigation(const QString& folder)
{
    if (!usable()) return -1;
    const QFileInfo info(folder);
    const QString key =
        info.canonicalFilePath().isEmpty() ? info.absoluteFilePath() : info.canonicalFilePath();
    const qint64 now = nowMs();
    Stmt upsert(m_db, "INSERT INTO investigations(folder, opened_ms, updated_ms) VALUES(?1,?2,?2) "
                      "ON CONFLICT(folder) DO UPDATE SET opened_ms=?2, updated_ms=?2");
    if (!upsert.ok() || !upsert.bind(1, key).bind(2, now).done()) {
        m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        return -1;
    }
    Stmt q(m_db, "SELECT id FROM investigations WHERE folder=?1");
    const qint64 id = q.ok() && q.bind(1, key).row() ? q.int64(0) : -1;
    if (id >= 0) lock(id);
    return id;
}

void InvestigationStore::lock(qint64 id)
{
    if (m_locks.count(id)) return;
    auto lock = std::make_unique<QLockFile>(m_path + QStringLiteral(".%1.lock").arg(id));
    lock->setStaleLockTime(0); // stale only when its process is gone, however old
    if (lock->tryLock(0)) {
        m_readOnly.erase(id);
        m_locks[id] = std::move(lock);
        return;
    }
    qint64 pid = 0;
    QString host, app;
    const QString holder = lock->getLockInfo(&pid, &host, &app)
                               ? QStringLiteral("%1 (pid %2 on %3)").arg(app).arg(pid).arg(host)
                               : QStringLiteral("another program");
    m_readOnly[id] = lock->error() == QLockFile::LockFailedError
                         ? QStringLiteral("opened read-only: %1 is editing this investigation; "
                                          "changes made here are not saved")
                               .arg(holder)
                         : QStringLiteral("opened read-only: the lock %1.%2.lock cannot be "
                                          "created; changes made here are not saved")
                               .arg(m_path)
                               .arg(id);
}

void InvestigationStore::closeInvestigation(qint64 id)
{
    m_locks.erase(id);
    m_readOnly.erase(id);
}

QString InvestigationStore::readOnlyReason(qint64 id) const
{
    const auto it = m_readOnly.find(id);
    return it == m_readOnly.end() ? QString() : it->second;
}

bool InvestigationStore::writable(qint64 id)
{
    if (!usable()) return false;
    // A write to an investigation this store did not open takes its lock first.
    if (!m_locks.count(id) && !m_readOnly.count(id)) lock(id);
    const QString reason = readOnlyReason(id);
    if (reason.isEmpty()) return true;
    m_error = reason;
    return false;
}

qint64 InvestigationStore::bookmarkOwner(qint64 bookmarkId) const
{
    Stmt q(m_db, "SELECT investigation_id FROM bookmarks WHERE id=?1");
    return q.ok() && q.bind(1, bookmarkId).row() ? q.int64(0) : -1;
}

static const char* const kSummarySelect =
    "SELECT i.id, i.folder, i.opened_ms, i.updated_ms,"
    " (SELECT count(*) FROM checklist c WHERE c.investigation_id=i.id AND c.status='done'),"
    " (SELECT count(*) FROM checklist c WHERE c.investigation_id=i.id AND"
    "  (c.status<>'todo' OR c.note<>''))"
    " FROM investigations i ";

std::optional<InvestigationSummary> InvestigationStore::investigation(qint64 id) const
{
    if (!usable()) return std::nullopt;
    const QByteArray sql = QByteArray(kSummarySelect) + "WHERE i.id=?1";
    Stmt q(m_db, sql.constData());
    if (!q.ok() || !q.bind(1, id).row()) return std::nullopt;
    return InvestigationSummary{q.int64(0),         q.text(1),       fromMs(q.int64(2)),
                                fromMs(q.int64(3)), int(q.int64(4)), int(q.int64(5))};
}

QList<InvestigationSummary> InvestigationStore::recentInvestigations(int limit) const
{
    QList<InvestigationSummary> out;
    if (!usable()) return out;
    const QByteArray sql =
        QByteArray(kSummarySelect) + "ORDER BY i.updated_ms DESC, i.id DESC LIMIT ?1";
    Stmt q(m_db, sql.constData());
    if (!q.ok()) return out;
    q.bind(1, qint64(limit));
    while (q.row())
        out.append({q.int64(0), q.text(1), fromMs(q.int64(2)), fromMs(q.int64(3)), int(q.int64(4)),
                    int(q.int64(5))});
    return out;
}

bool InvestigationStore::removeInvestigation(qint64 id)
{
    if (!writable(id)) return false;
    Stmt q(m_db, "DELETE FROM investigations WHERE id=?1");
    return q.ok() && q.bind(1, id).done() && sqlite3_changes(m_db) > 0;
}

bool InvestigationStore::setFindingsJson(qint64 id, const QByteArray& json)
{
    if (!writable(id)) return false;
    Stmt q(m_db, "UPDATE investigations SET findings_json=?1, updated_ms=?2 WHERE id=?3");
    return q.ok() && q.bindBlobText(1, json).bind(2, nowMs()).bind(3, id).done() &&
           sqlite3_changes(m_db) > 0;
}

QByteArray InvestigationStore::findingsJson(qint64 id) const
{
    if (!usable()) return {};
    Stmt q(m_db, "SELECT findings_json FROM investigations WHERE id=?1");
    return q.ok() && q.bind(1, id).row() ? q.bytes(0) : QByteArray();
}

bool InvestigationStore::setNotes(qint64 id, const QString& notes)
{
    if (!writable(id)) return false;
    Stmt q(m_db, "UPDATE investigations SET notes=?1, updated_ms=?2 WHERE id=?3");
    return q.ok() && q.bind(1, notes).bind(2, nowMs()).bind(3, id).done() &&
           sqlite3_changes(m_db) > 0;
}

QString InvestigationStore::notes(qint64 id) const
{
    if (!usable()) return {};
    Stmt q(m_db, "SELECT notes FROM investigations WHERE id=?1");
    return q.ok() && q.bind(1, id).row() ? q.text(0) : QString();
}

bool InvestigationStore::setStepState(qint64 id, const QString& patternId, int stepIndex,
                                      StepStatus status, const QString& note)
{
    if (!writable(id) || !exec("BEGIN IMMEDIATE")) return false;
    bool ok = false;
    {
        Stmt q(m_db, "INSERT INTO checklist(investigation_id, pattern_id, step_index, status, "
                     "note, updated_ms) VALUES(?1,?2,?3,?4,?5,?6) "
                     "ON CONFLICT(investigation_id, pattern_id, step_index) DO UPDATE SET "
                     "status=?4, note=?5, updated_ms=?6");
        ok = q.ok() && q.bind(1, id)
                           .bind(2, patternId)
                           .bind(3, qint64(stepIndex))
                           .bind(4, stepStatusKey(status))
                           .bind(5, note)
                           .bind(6, nowMs())
                           .done();
        if (!ok) m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
    }
    ok = ok && touch(id);
    if (!ok) {
        exec("ROLLBACK");
        return false;
    }
    return exec("COMMIT");
}

QHash<int, StepState> InvestigationStore::checklist(qint64 id, const QString& patternId) const
{
    QHash<int, StepState> out;
    if (!usable()) return out;
    Stmt q(m_db, "SELECT step_index, status, note, updated_ms FROM checklist "
                 "WHERE investigation_id=?1 AND pattern_id=?2");
    if (!q.ok()) return out;
    q.bind(1, id).bind(2, patternId);
    while (q.row())
        out.insert(int(q.int64(0)), {stepStatusFromKey(q.text(1)), q.text(2), fromMs(q.int64(3))});
    return out;
}

bool InvestigationStore::setCurrentStep(qint64 id, const QString& patternId, int stepIndex)
{
    if (!writable(id)) return false;
    Stmt q(m_db, "UPDATE investigations SET current_pattern=?1, current_step=?2 WHERE id=?3");
    return q.ok() && q.bind(1, patternId).bind(2, qint64(stepIndex)).bind(3, id).done() &&
           sqlite3_changes(m_db) > 0;
}

std::pair<QString, int> InvestigationStore::currentStep(qint64 id) const
{
    if (!usable()) return {};
    Stmt q(m_db, "SELECT current_pattern, current_step FROM investigations WHERE id=?1");
    if (!q.ok() || !q.bind(1, id).row()) return {};
    return {q.text(0), int(q.int64(1))};
}

qint64 InvestigationStore::addBookmark(qint64 id, qint64 t0Ns, qint64 t1Ns, const QString& label)
{
    if (!writable(id)) return -1;
    Stmt q(m_db, "INSERT INTO bookmarks(investigation_id, t0_ns, t1_ns, label, created_ms) "
                 "VALUES(?1,?2,?3,?4,?5)");
    if (!q.ok() ||
        !q.bind(1, id).bind(2, t0Ns).bind(3, t1Ns).bind(4, label).bind(5, nowMs()).done()) {
        m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        return -1;
    }
    const qint64 bookmarkId = sqlite3_last_insert_rowid(m_db);
    touch(id);
    return bookmarkId;
}

bool InvestigationStore::removeBookmark(qint64 bookmarkId)
{
    if (!usable()) return false;
    const qint64 owner = bookmarkOwner(bookmarkId);
    if (owner < 0 || !writable(owner)) return false;
    Stmt q(m_db, "DELETE FROM bookmarks WHERE id=?1");
    return q.ok() && q.bind(1, bookmarkId).done() && sqlite3_changes(m_db) > 0;
}

bool InvestigationStore::renameBookmark(qint64 bookmarkId, const QString& label)
{
    if (!usable()) return false;
    const qint64 owner = bookmarkOwner(bookmarkId);
    if (owner < 0 || !writable(owner)) return false;
    Stmt q(m_db, "UPDATE bookmarks SET label=?1 WHERE id=?2");
    if (!q.ok() || !q.bind(1, label).bind(2, bookmarkId).done()) {
        m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        return false;
    }
    if (sqlite3_changes(m_db) == 0) return false;
    // A renamed bookmark is work on the investigation: the start page lists it as recent.
    return touch(owner);
}

QList<TimelineBookmark> InvestigationStore::bookmarks(qint64 id) const
{
    QList<TimelineBookmark> out;
    if (!usable()) return out;
    Stmt q(m_db, "SELECT id, t0_ns, t1_ns, label FROM bookmarks WHERE investigation_id=?1 "
                 "ORDER BY t0_ns, id");
    if (!q.ok()) return out;
    q.bind(1, id);
    while (q.row())
        out.append({q.int64(0), q.int64(1), q.int64(2), q.text(3)});
    return out;
}

} // namespace rankscope
