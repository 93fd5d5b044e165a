#pragma once

#include <QString>
#include <QStringList>

struct sqlite3;

namespace rankscope {

struct IssueResult {
    QString link, title, source;
    QStringList symptoms;    // leaf ids (study labels, or the classifier's top candidates)
    QStringList fixPatterns; // the study's fix-pattern labels as written in the CSV
};

// The study's labelled issues and how-to questions plus the user's imported reports, in SQLite
// with an FTS5 index. Created and filled from the CSV resources on first open; WAL journal;
// schema version in PRAGMA user_version.
class IssueCorpus {
public:
    static constexpr int kSchemaVersion = 1;

    IssueCorpus() = default;
    ~IssueCorpus();
    IssueCorpus(const IssueCorpus&) = delete;
    IssueCorpus& operator=(const IssueCorpus&) = delete;

    // $RANKSCOPE_DB, else <AppDataLocation>/issues.sqlite.
    static QString defaultPath();

    // Opens (creating and seeding if needed). False with error() on failure.
    bool open(const QString& path);
    QString error() const { return m_error; }

    // Imports a GitHub issue JSON array (REST API or `gh issue list --json ...`), or a folder of
    // .md/.txt reports; classifies each; all or nothing. Returns the number imported, -1 on error.
    int importPath(const QString& path);

    // Full-text search over titles, bodies, labels and link words; best match first.
    QList<IssueResult> search(const QString& query, int limit = 20);

    int count(const QString& origin) const; // "study", "howto" or "import"

private:
    bool exec(const char* sql);
    bool seed();
    bool insertIssue(const QString& link, const QString& title, const QString& body,
                     const QString& source, const QString& origin, const QStringList& symptoms,
                     const QStringList& fixes, const QString& labels);

    sqlite3* m_db = nullptr;
    QString m_error;
};

} // namespace rankscope
