#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>

struct sqlite3;

namespace rankscope {

struct IssueResult {
    QString link, title, source;
    QStringList symptoms;    // leaf ids (study labels, or the classifier's top candidates)
    QStringList fixPatterns; // the study's fix-pattern labels as written in the CSV
};

// What the issue browser filters on; an empty field matches everything.
struct IssueFilter {
    enum class Distributed { Any, Yes, No };
    QString text; // full-text words, all required, each also matching as a prefix
    QString framework;
    QString source;
    QString stage; // a stage id, or IssueCorpus::kHowToStage for the issues with a how-to topic
    QString leaf;
    QString fixPattern;
    Distributed distributed = Distributed::Any;
};

// One study label row of a fault issue (an issue may carry several).
struct IssueLabel {
    QString stage, innerCategory, leaf; // as the study spells them
    QString symptom;                    // the leaf id
    QString fixLabel;                   // the raw fix label
};

struct IssueCandidate {
    QString symptom;
    double score = 0;
};

struct IssueRecord {
    qint64 id = 0;
    QString link, title, source;
    QString origin; // "study", "howto" or "import"
    QStringList frameworks;
    QStringList symptoms;    // leaf ids
    QStringList fixPatterns; // pattern ids
    std::optional<bool> distributedSpecific;
    // Filled by IssueCorpus::record() only (the table does not need them):
    QString body;
    QStringList labels; // GitHub labels of an import
    QList<IssueLabel> studyLabels;
    QStringList howTo; // "topic / subtopic"
    QList<IssueCandidate> candidates;
    // Filled when the record was read with a search text: an excerpt with the matched words
    // between kSnippetOpen and kSnippetClose.
    QString snippet;
};

// Distinct values of the corpus for the browser's filters.
struct IssueFacets {
    QStringList frameworks, sources, stages, leaves, fixPatterns; // sorted; ids for the last three
    bool hasHowTo = false;
    bool hasDistributedLabels = false;
};

// The study's labelled issues and how-to questions plus the user's imported reports, in SQLite
// with an FTS5 index. Created and filled from the CSV resources on first open; WAL journal;
// schema version in PRAGMA user_version (older versions are migrated in place).
//
// One IssueCorpus is one connection: use it from one thread at a time. A second IssueCorpus
// on the same file (another thread) sees committed imports.
class IssueCorpus {
public:
    static constexpr int kSchemaVersion = 5;
    static constexpr QChar kSnippetOpen = QChar(0x2);
    static constexpr QChar kSnippetClose = QChar(0x3);
    static inline const QString kHowToStage = QStringLiteral("how-to");
    static inline const QString kImportedSource = QStringLiteral("imported");

    // Called while importing with the reports done and the total; returning false cancels the
    // import (nothing is changed).
    using ImportProgress = std::function<bool(qsizetype done, qsizetype total)>;

    IssueCorpus() = default;
    ~IssueCorpus();
    IssueCorpus(const IssueCorpus&) = delete;
    IssueCorpus& operator=(const IssueCorpus&) = delete;

    // $RANKSCOPE_DB, else <AppDataLocation>/issues.sqlite.
    static QString defaultPath();

    // Opens (creating and seeding if needed). False with error() on failure.
    bool open(const QString& path);
    bool isOpen() const { return m_db != nullptr; }
    QString path() const { return m_path; }
    QString error() const { return m_error; }

    // Imports GitHub issues: one issue object (REST /repos/O/R/issues/N), an array of them
    // (REST list or `gh issue list --json ...`), a .md/.txt report, or a folder of .json, .md and
    // .txt files; classifies each; all or nothing. Returns the number imported, -1 on error or
    // when `progress` cancelled (error() says which). A file of a folder that holds no issue is
    // skipped with one line in skipped() naming it and saying why.
    int importPath(const QString& path, const ImportProgress& progress = {});
    // The files the last importPath() skipped, "file: reason" each.
    QStringList skipped() const { return m_skipped; }

    // Full-text search over titles, bodies, labels and link words; best match first. The same
    // query as matchingIds() with only a text (the Issues tab runs that one), `anyWord` too.
    QList<IssueResult> search(const QString& query, int limit = 20, bool* anyWord = nullptr) const;

    int count(const QString& origin) const; // "study", "howto" or "import"
    // The study's how-to questions, those that are also fault issues (origin "study") included.
    int howToQuestionCount() const;

    // The ids matching a filter: best match first when it has text, else corpus order. Issues
    // with every word of the text first; when none has them all, those with any of them, and
    // *anyWord is set (anyWordNotice() says so).
    QList<qint64> matchingIds(const IssueFilter& filter, bool* anyWord = nullptr) const;
    // What the Issues tab and `issues search` say above results that have only some of the
    // words.
    static QString anyWordNotice();
    // The table's fields of these issues, in the order given; with `text`, each carries the
    // snippet of its best match.
    QList<IssueRecord> records(const QList<qint64>& ids, const QString& text = {}) const;
    // Everything about one issue; nullopt when there is no such id.
    std::optional<IssueRecord> record(qint64 id, const QString& text = {}) const;
    IssueFacets facets() const;

    // The FTS5 query of a search text: every word required, as itself or a prefix (a whole word
    // ranks higher), and a "quoted phrase" as that phrase; with `anyWord`, any of them suffices.
    // Empty when it has no word.
    static QString matchExpression(const QString& text, bool anyWord = false);
    // "keras-team/keras #12" for a GitHub link ("horovod #100" when owner and repository share
    // the name), "Stack Overflow #N", the file name for a local report ("issues.json #6" for
    // an issue a JSON file gives only by number), else the link.
    static QString shortReference(const QString& link);
    // A study issue's title from its labels: "horovod #6 · hang · fix batch size/data partition".
    static QString studyTitle(const QString& link, const QStringList& leaves,
                              const QStringList& fixLabels);
    // A study how-to question's title from its topics: "horovod #8 · how-to · communication ›
    // synchronization".
    static QString howToTitle(const QString& link, const QString& topic, const QString& subtopic);
    // The leaves a search text is most likely about (the symptom classifier's ranking): what the
    // Issues tab and the CLI suggest when nothing matched; none for a text of no words.
    static QStringList relatedLeaves(const QString& text, int n = 3);

private:
    bool exec(const char* sql);
    bool seed();
    bool migrate(int from);
    bool retitleStudy();
    bool retitleHowTo();
    // The study's how-to questions that are also labelled fault issues (horovod #110, #187, ...)
    // keep their fault labels and gain the topic: its row, its words in the search index and its
    // part of the title. A topic the issue has already is not added twice.
    bool addHowToOfStudyIssues();
    // Sets these issues' titles in the table and the search index.
    bool retitle(const QList<std::pair<qint64, QString>>& titles);
    // Ids of every issue matching the conditions and this MATCH expression, best match first.
    QList<qint64> idsMatching(const QString& match, const QStringList& where,
                              const QStringList& values) const;
    bool insertIssue(const QString& link, const QString& title, const QString& body,
                     const QString& source, const QString& origin, const QStringList& symptoms,
                     const QStringList& fixes, const QString& labels, const QStringList& frameworks,
                     const QStringList& issueLabels = {});

    sqlite3* m_db = nullptr;
    QString m_path;
    mutable QString m_error;
    QStringList m_skipped;
};

} // namespace rankscope
