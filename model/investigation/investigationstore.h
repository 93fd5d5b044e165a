#pragma once

#include "model/investigation/investigation.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QString>
#include <map>
#include <memory>
#include <optional>
#include <utility>

struct sqlite3;
class QLockFile;
class QThread;

namespace rankscope {

// The investigations of every opened folder, kept in one SQLite database
// (investigations.sqlite in QStandardPaths::AppDataLocation, or in $RANKSCOPE_DB_DIR).
//
// Every write is its own transaction in WAL mode, so a crash or a kill loses at most the write in
// flight. The schema is versioned with PRAGMA user_version: a database written by a newer
// RankScope is left untouched and a fresh one is used beside it (investigations-schemaN.sqlite);
// a corrupt one is renamed aside (investigations.sqlite.corrupt-<time>) and a fresh one created.
// Either way notice() says what happened, for the GUI to show.
//
// One writer per investigation: openInvestigation() takes a lock file next to the database
// (investigations.sqlite.<id>.lock, QLockFile: a lock whose process is gone is taken over). When
// another instance holds it, this one opens the investigation read-only: readOnlyReason() says
// who holds it, and every write to it fails with that reason, so neither overwrites the other's
// checklist and notes. The lock is held until closeInvestigation() or the store's end.
//
// An instance owns one connection and works only on the thread that created it (calls from another
// thread fail and set lastError()); another thread opens its own InvestigationStore on the same
// directory.
class InvestigationStore {
public:
    static constexpr int kSchemaVersion = 1;
    static QString defaultDirectory();
    static QString fileName() { return QStringLiteral("investigations.sqlite"); }

    explicit InvestigationStore(const QString& directory = defaultDirectory());
    ~InvestigationStore();
    InvestigationStore(const InvestigationStore&) = delete;
    InvestigationStore& operator=(const InvestigationStore&) = delete;

    bool isOpen() const { return m_db != nullptr; }
    QString databasePath() const { return m_path; }
    // Set when the usual database could not be used and another was opened instead.
    QString notice() const { return m_notice; }
    QString lastError() const { return m_error; }

    // Creates the investigation of a folder (keyed by its canonical path) or reopens it, and
    // stamps its opened time. Returns its id, or -1 on failure.
    qint64 openInvestigation(const QString& folder);
    // Releases the lock openInvestigation() took (no-op when read-only or not open here).
    void closeInvestigation(qint64 id);
    // Empty when this store may write investigation `id`; otherwise why not (another RankScope
    // is editing it).
    QString readOnlyReason(qint64 id) const;
    bool isReadOnly(qint64 id) const { return !readOnlyReason(id).isEmpty(); }
    std::optional<InvestigationSummary> investigation(qint64 id) const;
    // Most recently updated first.
    QList<InvestigationSummary> recentInvestigations(int limit = 20) const;
    bool removeInvestigation(qint64 id);

    bool setFindingsJson(qint64 id, const QByteArray& json);
    QByteArray findingsJson(qint64 id) const;
    bool setNotes(qint64 id, const QString& notes);
    QString notes(qint64 id) const;

    bool setStepState(qint64 id, const QString& patternId, int stepIndex, StepStatus status,
                      const QString& note);
    // Step index -> state; steps never touched are absent.
    QHash<int, StepState> checklist(qint64 id, const QString& patternId) const;
    // The checklist and step the user was on, to resume there.
    bool setCurrentStep(qint64 id, const QString& patternId, int stepIndex);
    std::pair<QString, int> currentStep(qint64 id) const;

    qint64 addBookmark(qint64 id, qint64 t0Ns, qint64 t1Ns, const QString& label);
    bool removeBookmark(qint64 bookmarkId);
    // False when there is no such bookmark.
    bool renameBookmark(qint64 bookmarkId, const QString& label);
    QList<TimelineBookmark> bookmarks(qint64 id) const;

private:
    enum class Health { Ok, Newer, Corrupt, Failed };
    Health openAt(const QString& path);
    bool exec(const char* sql) const;
    bool touch(qint64 id) const;
    void closeDb();
    bool usable() const; // open, and called on the thread that created it
    // Takes the lock of investigation `id`, or notes why it is read-only.
    void lock(qint64 id);
    bool writable(qint64 id); // usable() and not read-only (else lastError() says why)
    qint64 bookmarkOwner(qint64 bookmarkId) const;

    sqlite3* m_db = nullptr;
    QString m_path;
    QString m_notice;
    mutable QString m_error;
    QThread* m_thread = nullptr;
    std::map<qint64, std::unique_ptr<QLockFile>> m_locks; // the investigations this one writes
    std::map<qint64, QString> m_readOnly;                 // the others it opened: why not
};

} // namespace rankscope
