#include "model/kb/issuecorpus.h"

#include "model/kb/csvtable.h"
#include "model/kb/slug.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QStringDecoder>
#include <QUrl>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

namespace rankscope {

namespace {

constexpr QLatin1Char kListSeparator('\n');
// Between the parts of an issue's title: "horovod #6 · hang · fix batch size/data partition".
const QString kTitleSeparator = QStringLiteral(" \u00b7 ");
// SQLite's bound-parameter limit is far higher; this keeps one statement small.
constexpr qsizetype kIdsPerStatement = 500;

// Link words are searchable: "https://github.com/horovod/horovod/issues/100" -> "github com ...".
QString linkWords(const QString& link)
{
    static const QRegularExpression sep(QStringLiteral("[^A-Za-z0-9]+"));
    return QString(link).replace(sep, QStringLiteral(" ")).trimmed();
}

// "how-to · communication › synchronization": the part of a title that names a how-to topic.
QString howToLabel(const QString& topic, const QString& subtopic)
{
    QStringList parts{QStringLiteral("how-to")};
    QStringList about;
    for (const QString& t : {topic, subtopic})
        if (!t.trimmed().isEmpty()) about << t.trimmed();
    if (!about.isEmpty()) parts << about.join(QStringLiteral(" \u203a "));
    return parts.join(kTitleSeparator);
}

// The REST API's "url" of an issue (https://api.github.com/repos/O/R/issues/N) as the page a
// person opens (https://github.com/O/R/issues/N); any other link unchanged.
QString pageLink(const QString& link)
{
    const QUrl url(link);
    const QStringList parts = url.path().split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (url.host() != QLatin1String("api.github.com") || parts.size() < 5 ||
        parts[0] != QLatin1String("repos"))
        return link;
    return QStringLiteral("https://github.com/") + parts.mid(1).join(QLatin1Char('/'));
}

// The frameworks the framework cues find in `text`: each cue's own name and the study's
// framework it runs on ("deepspeed --num_gpus 8" -> DeepSpeed, PyTorch).
QStringList frameworksNamedIn(const QString& text)
{
    const SignatureSet& set = SignatureSet::builtin();
    const QByteArray bytes = text.toUtf8();
    QStringList out;
    for (const ContextHit& c :
         set.scanContext(bytes, SignatureSet::lineStartsOf(bytes), set.frameworks())) {
        const ContextCue& cue = set.frameworks()[c.cue];
        QStringList names = Taxonomy::frameworksOfSource(cue.target);
        if (!cue.name.isEmpty() && !names.contains(cue.name)) names.prepend(cue.name);
        for (const QString& name : std::as_const(names))
            if (!out.contains(name)) out << name;
    }
    out.sort(Qt::CaseInsensitive);
    return out;
}

// An imported issue of a framework's repository is about that framework: the cues read its
// "owner/name" (pytorch/pytorch -> PyTorch, microsoft/DeepSpeed -> DeepSpeed, PyTorch); any
// other link names none.
QStringList frameworksOfLink(const QString& link)
{
    const QUrl url(pageLink(link));
    if (url.host() != QLatin1String("github.com")) return {};
    const QStringList parts = url.path().split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.size() < 2) return {};
    return frameworksNamedIn(parts[0] + QLatin1Char('/') + parts[1]);
}

// The frameworks a report's repository names, else those its text names (the classifier's
// framework cues: "import torch", "hvd.init()", DeepSpeed and the other PyTorch-based stacks by
// their own name and as PyTorch).
QStringList frameworksOfReport(const QString& link, const QString& text)
{
    const QStringList out = frameworksOfLink(link);
    return out.isEmpty() ? frameworksNamedIn(text) : out;
}

// The study's sheets as a table (header row dropped), read with the knowledge base's parser.
CsvTable readCsv(const QString& resource)
{
    QFile f(resource);
    return f.open(QIODevice::ReadOnly) ? CsvTable::parse(f.readAll()) : CsvTable();
}

struct Statement {
    sqlite3_stmt* s = nullptr;
    Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &s, nullptr); }
    Statement(sqlite3* db, const QString& sql)
    {
        sqlite3_prepare_v2(db, sql.toUtf8().constData(), -1, &s, nullptr);
    }
    ~Statement() { sqlite3_finalize(s); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    void bind(int i, const QString& v)
    {
        const QByteArray u = v.toUtf8();
        sqlite3_bind_text(s, i, u.constData(), int(u.size()), SQLITE_TRANSIENT);
    }
    QString text(int i) const
    {
        return QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(s, i)));
    }
    QStringList list(int i) const { return text(i).split(kListSeparator, Qt::SkipEmptyParts); }
};

struct Report {
    QString link, title, body;
    QStringList labels;
};

bool decodeUtf8(const QByteArray& bytes, QString* out)
{
    QStringDecoder decoder(QStringDecoder::Utf8);
    *out = decoder(bytes);
    return !decoder.hasError();
}

// A string member of a JSON object; null, absent or another type reads as empty (the REST API
// sends "body": null for an issue without a description).
QString stringMember(const nlohmann::json& o, const char* key)
{
    if (!o.is_object()) return {};
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? QString::fromStdString(it->get<std::string>())
                                            : QString();
}

// A local file as a link: file:// and its canonical path, so that importing it again by another
// relative path, from another folder or through a link replaces the earlier copy.
QUrl fileUrl(const QFileInfo& file)
{
    return QUrl::fromLocalFile(file.canonicalFilePath());
}

// A .md/.txt report: the first non-empty line (without a Markdown heading mark) is its title.
Report textReport(const QFileInfo& file, const QString& text)
{
    static const QRegularExpression heading(QStringLiteral("^#+\\s*"));
    Report r;
    r.link = fileUrl(file).toString();
    for (const QString& line : text.split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty()) {
            r.title = line.trimmed().remove(heading);
            break;
        }
    r.body = text;
    return r;
}

bool isTextReport(const QFileInfo& info)
{
    const QString suffix = info.suffix().toLower();
    return suffix == QLatin1String("md") || suffix == QLatin1String("txt");
}

// The files of a folder that are read as reports: .json, .md and .txt.
bool isReportFile(const QFileInfo& info)
{
    return isTextReport(info) || info.suffix().toLower() == QLatin1String("json");
}

// One GitHub issue object (REST or `gh issue view --json`); false with *why when it is not one.
// An issue with only a number links to its entry in the file (file:///path/issues.json#6).
bool issueReport(const nlohmann::json& o, const QUrl& file, Report* r, QString* why)
{
    if (!o.is_object()) {
        *why = QStringLiteral("not a JSON object");
        return false;
    }
    r->link = stringMember(o, "html_url");
    if (r->link.isEmpty()) r->link = pageLink(stringMember(o, "url"));
    const auto number = o.find("number");
    if (r->link.isEmpty() && number != o.end() && number->is_number_integer()) {
        QUrl entry = file;
        entry.setFragment(QString::number(number->get<qint64>()));
        r->link = entry.toString();
    }
    r->title = stringMember(o, "title");
    r->body = stringMember(o, "body");
    const auto list = o.find("labels");
    if (list != o.end() && list->is_array())
        for (const nlohmann::json& l : *list)
            r->labels << (l.is_string() ? QString::fromStdString(l.get<std::string>())
                                        : stringMember(l, "name"));
    r->labels.removeAll(QString());
    if (r->link.isEmpty() || (r->title.isEmpty() && r->body.isEmpty())) {
        *why = QStringLiteral("not a GitHub issue (no html_url/url/number, or neither title nor "
                              "body)");
        return false;
    }
    return true;
}

// The issues of a JSON document: one issue object or an array of them.
bool jsonReports(const QByteArray& utf8, const QUrl& file, QList<Report>* out, QString* why)
{
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(utf8.constData(), utf8.constData() + utf8.size());
    } catch (const nlohmann::json::parse_error& e) {
        // The library's own text names its exception class and token names; the place is what
        // a person needs.
        *why = QStringLiteral("not valid JSON (error at byte %1)").arg(e.byte);
        return false;
    }
    if (doc.is_object()) {
        Report r;
        if (!issueReport(doc, file, &r, why)) return false;
        out->append(r);
        return true;
    }
    if (!doc.is_array()) {
        *why = QStringLiteral("expected a GitHub issue object or an array of them");
        return false;
    }
    if (doc.empty()) {
        *why = QStringLiteral("an empty array");
        return false;
    }
    // One bad entry refuses the whole file, as a failed import changes nothing: the message
    // names the bad entries (the first few of many), so the file can be fixed and imported again.
    constexpr qsizetype kBadEntriesNamed = 3;
    QList<Report> reports;
    QStringList bad;
    qsizetype badCount = 0;
    for (size_t i = 0; i < doc.size(); ++i) {
        Report r;
        QString entryWhy;
        if (issueReport(doc[i], file, &r, &entryWhy))
            reports.append(r);
        else if (++badCount <= kBadEntriesNamed)
            bad << QStringLiteral("entry %1 of %2: %3").arg(i + 1).arg(doc.size()).arg(entryWhy);
    }
    if (badCount > 0) {
        if (const qsizetype more = badCount - kBadEntriesNamed; more > 0)
            bad << (more == 1 ? QStringLiteral("1 more bad entry")
                              : QStringLiteral("%1 more bad entries").arg(more));
        *why = bad.join(QLatin1String("; ")) +
               QStringLiteral(" (none of its %1 entries was imported)").arg(doc.size());
        return false;
    }
    out->append(reports);
    return true;
}

// "\n" + column + "\n" holds "\n" + value + "\n": one entry of a newline-joined list.
constexpr const char* kListHas = "instr(char(10) || %1 || char(10), char(10) || ? || char(10)) > 0";

} // namespace

IssueCorpus::~IssueCorpus()
{
    if (m_db) sqlite3_close(m_db);
}

QString IssueCorpus::defaultPath()
{
    const QString env = qEnvironmentVariable("RANKSCOPE_DB");
    if (!env.isEmpty()) return env;
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QLatin1String("/issues.sqlite");
}

bool IssueCorpus::exec(const char* sql)
{
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
    m_error = QString::fromUtf8(message ? message : sqlite3_errmsg(m_db));
    sqlite3_free(message);
    return false;
}

bool IssueCorpus::open(const QString& path)
{
    const QFileInfo info(path);
    m_path = path;
    if (!QDir().mkpath(info.absolutePath())) {
        m_error = QStringLiteral("cannot create the folder of the issue database %1").arg(path);
        return false;
    }
    if (sqlite3_open_v2(path.toUtf8().constData(), &m_db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        m_error = QStringLiteral("cannot open the issue database %1: %2")
                      .arg(path, QString::fromUtf8(sqlite3_errmsg(m_db)));
        sqlite3_close(m_db);
        m_db = nullptr;
        return false;
    }
    sqlite3_busy_timeout(m_db, 5000);
    int current = 0;
    {
        Statement version(m_db, "PRAGMA user_version");
        if (sqlite3_step(version.s) == SQLITE_ROW) current = sqlite3_column_int(version.s, 0);
    }
    if (current == kSchemaVersion) return true;
    const QByteArray setSchemaVersion = "PRAGMA user_version=" + QByteArray::number(kSchemaVersion);
    const auto fail = [&](const QString& what) {
        const QString why = m_error;
        exec("ROLLBACK");
        m_error = QStringLiteral("cannot %1 the issue database %2: %3").arg(what, path, why);
        sqlite3_close(m_db);
        m_db = nullptr;
        return false;
    };
    if (current > kSchemaVersion) {
        m_error =
            QStringLiteral("the issue database %1 has schema %2, newer than this program's %3")
                .arg(path)
                .arg(current)
                .arg(kSchemaVersion);
        sqlite3_close(m_db);
        m_db = nullptr;
        return false;
    }
    if (current > 0) {
        if (!exec("BEGIN IMMEDIATE") || !migrate(current) || !exec(setSchemaVersion.constData()) ||
            !exec("COMMIT"))
            return fail(QStringLiteral("upgrade"));
        return true;
    }
    if (!exec("PRAGMA journal_mode=WAL") || !exec("BEGIN IMMEDIATE") ||
        !exec("CREATE TABLE issue(id INTEGER PRIMARY KEY, link TEXT UNIQUE NOT NULL, title TEXT, "
              "body TEXT, source TEXT, framework TEXT, origin TEXT NOT NULL, "
              "distributed_specific INTEGER, symptoms TEXT, fix_patterns TEXT, labels TEXT);"
              "CREATE TABLE label(issue_id INTEGER REFERENCES issue(id) ON DELETE CASCADE, "
              "stage TEXT, inner_category TEXT, leaf TEXT, symptom TEXT, fix_pattern TEXT);"
              "CREATE TABLE howto(issue_id INTEGER REFERENCES issue(id) ON DELETE CASCADE, "
              "topic TEXT, subtopic TEXT);"
              "CREATE TABLE candidate(issue_id INTEGER REFERENCES issue(id) ON DELETE CASCADE, "
              "rank INTEGER, symptom TEXT, score REAL);"
              "CREATE VIRTUAL TABLE issue_fts USING fts5(title, body, labels, link);") ||
        !seed() || !exec(setSchemaVersion.constData()) || !exec("COMMIT"))
        return fail(QStringLiteral("create"));
    return true;
}

bool IssueCorpus::migrate(int from)
{
    // 1 -> 2: frameworks as the taxonomy names them (one per line), imports' source "imported",
    // an imported issue's own labels kept apart (those imported under 1 have none recorded).
    if (from < 2) {
        if (!exec("ALTER TABLE issue ADD COLUMN labels TEXT") ||
            !exec("UPDATE issue SET source = 'imported' WHERE origin = 'import'"))
            return false;
        QList<std::pair<qint64, QString>> frameworks;
        {
            Statement rows(m_db, "SELECT id, link, source, origin FROM issue");
            while (sqlite3_step(rows.s) == SQLITE_ROW)
                frameworks.append({sqlite3_column_int64(rows.s, 0),
                                   (rows.text(3) == QLatin1String("import")
                                        ? frameworksOfLink(rows.text(1))
                                        : Taxonomy::frameworksOfSource(rows.text(2)))
                                       .join(kListSeparator)});
        }
        for (const auto& [id, names] : std::as_const(frameworks)) {
            Statement up(m_db, "UPDATE issue SET framework = ?1 WHERE id = ?2");
            up.bind(1, names);
            sqlite3_bind_int64(up.s, 2, id);
            if (sqlite3_step(up.s) != SQLITE_DONE) {
                m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
                return false;
            }
        }
    }
    // 2 -> 3: the study's issues get titles from their labels (searchable).
    if (from < 3 && !retitleStudy()) return false;
    // 3 -> 4: the study's how-to questions get titles from their topics (searchable).
    if (from < 4 && !retitleHowTo()) return false;
    // 4 -> 5: a how-to question that is also a labelled fault issue keeps its topic.
    return from >= 5 || addHowToOfStudyIssues();
}

bool IssueCorpus::retitle(const QList<std::pair<qint64, QString>>& titles)
{
    for (const auto& [id, title] : titles) {
        Statement up(m_db, "UPDATE issue SET title = ?1 WHERE id = ?2");
        up.bind(1, title);
        sqlite3_bind_int64(up.s, 2, id);
        Statement fts(m_db, "UPDATE issue_fts SET title = ?1 WHERE rowid = ?2");
        fts.bind(1, title);
        sqlite3_bind_int64(fts.s, 2, id);
        if (sqlite3_step(up.s) != SQLITE_DONE || sqlite3_step(fts.s) != SQLITE_DONE) {
            m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
            return false;
        }
    }
    return true;
}

bool IssueCorpus::retitleHowTo()
{
    QList<std::pair<qint64, QString>> titles;
    {
        Statement rows(m_db, "SELECT i.id, i.link, h.topic, h.subtopic FROM issue i "
                             "JOIN howto h ON h.issue_id = i.id WHERE i.origin = 'howto' "
                             "ORDER BY i.id");
        while (sqlite3_step(rows.s) == SQLITE_ROW)
            titles.append({sqlite3_column_int64(rows.s, 0),
                           howToTitle(rows.text(1), rows.text(2), rows.text(3))});
    }
    return retitle(titles);
}

bool IssueCorpus::retitleStudy()
{
    QList<std::pair<qint64, QString>> titles;
    {
        Statement rows(m_db, "SELECT i.id, i.link, group_concat(l.leaf, char(10)), "
                             "group_concat(l.fix_pattern, char(10)) FROM issue i "
                             "JOIN label l ON l.issue_id = i.id WHERE i.origin = 'study' "
                             "GROUP BY i.id ORDER BY i.id");
        while (sqlite3_step(rows.s) == SQLITE_ROW) {
            QStringList leaves = rows.list(2), fixes = rows.list(3);
            leaves.removeDuplicates();
            fixes.removeDuplicates();
            titles.append(
                {sqlite3_column_int64(rows.s, 0), studyTitle(rows.text(1), leaves, fixes)});
        }
    }
    return retitle(titles);
}

QString IssueCorpus::shortReference(const QString& link)
{
    const QUrl url(link);
    if (url.isLocalFile())
        return url.hasFragment() ? QStringLiteral("%1 #%2").arg(url.fileName(), url.fragment())
                                 : url.fileName();
    const QStringList parts = url.path().split(QLatin1Char('/'), Qt::SkipEmptyParts);
    // The number is what tells the rows apart; "horovod/horovod #100" would elide it away.
    if (url.host() == QLatin1String("github.com") && parts.size() >= 4)
        return parts[0].compare(parts[1], Qt::CaseInsensitive) == 0
                   ? QStringLiteral("%1 #%2").arg(parts[1], parts[3])
                   : QStringLiteral("%1/%2 #%3").arg(parts[0], parts[1], parts[3]);
    if (url.host().endsWith(QLatin1String("stackoverflow.com")) && parts.size() >= 2 &&
        parts[0] == QLatin1String("questions"))
        return QStringLiteral("Stack Overflow #%1").arg(parts[1]);
    return link;
}

QString IssueCorpus::studyTitle(const QString& link, const QStringList& leaves,
                                const QStringList& fixLabels)
{
    QStringList parts{shortReference(link)};
    if (!leaves.isEmpty()) parts << leaves.join(QLatin1String(", "));
    // A label of two fixes ("fix network setting & fix communication configuration") names each
    // once among the issue's other labels.
    QStringList fixes;
    for (const QString& label : fixLabels)
        for (const QString& part : label.split(QLatin1Char('&'), Qt::SkipEmptyParts))
            if (!fixes.contains(part.trimmed())) fixes << part.trimmed();
    if (!fixes.isEmpty()) parts << fixes.join(QLatin1String(", "));
    return parts.join(kTitleSeparator);
}

QString IssueCorpus::howToTitle(const QString& link, const QString& topic, const QString& subtopic)
{
    return shortReference(link) + kTitleSeparator + howToLabel(topic, subtopic);
}

QStringList IssueCorpus::relatedLeaves(const QString& text, int n)
{
    // Of a text of no words the classifier's ranking is only the base rates.
    if (matchExpression(text).isEmpty()) return {};
    SymptomClassifier::Options options;
    options.maxCandidates = n;
    QStringList out;
    for (const Candidate& c : SymptomClassifier::instance().classify(text.toUtf8(), options))
        if (out.size() < n) out << c.symptom;
    return out;
}

bool IssueCorpus::insertIssue(const QString& link, const QString& title, const QString& body,
                              const QString& source, const QString& origin,
                              const QStringList& symptoms, const QStringList& fixes,
                              const QString& labels, const QStringList& frameworks,
                              const QStringList& issueLabels)
{
    // Re-importing a link replaces the earlier copy.
    Statement existing(m_db, "SELECT id FROM issue WHERE link = ?1");
    existing.bind(1, link);
    if (sqlite3_step(existing.s) == SQLITE_ROW) {
        const sqlite3_int64 old = sqlite3_column_int64(existing.s, 0);
        for (const char* sql :
             {"DELETE FROM issue_fts WHERE rowid = ?1", "DELETE FROM candidate WHERE issue_id = ?1",
              "DELETE FROM label WHERE issue_id = ?1", "DELETE FROM howto WHERE issue_id = ?1",
              "DELETE FROM issue WHERE id = ?1"}) {
            Statement del(m_db, sql);
            sqlite3_bind_int64(del.s, 1, old);
            if (sqlite3_step(del.s) != SQLITE_DONE) {
                m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
                return false;
            }
        }
    }
    Statement ins(m_db, "INSERT INTO issue(link, title, body, source, framework, origin, symptoms, "
                        "fix_patterns, labels) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    ins.bind(1, link);
    ins.bind(2, title);
    ins.bind(3, body);
    ins.bind(4, source);
    ins.bind(5, frameworks.join(kListSeparator));
    ins.bind(6, origin);
    ins.bind(7, symptoms.join(kListSeparator));
    ins.bind(8, fixes.join(kListSeparator));
    ins.bind(9, issueLabels.join(kListSeparator));
    if (sqlite3_step(ins.s) != SQLITE_DONE) {
        m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        return false;
    }
    const sqlite3_int64 id = sqlite3_last_insert_rowid(m_db);
    Statement fts(m_db, "INSERT INTO issue_fts(rowid, title, body, labels, link) "
                        "VALUES(?1, ?2, ?3, ?4, ?5)");
    sqlite3_bind_int64(fts.s, 1, id);
    fts.bind(2, title);
    fts.bind(3, body);
    fts.bind(4, labels);
    fts.bind(5, linkWords(link));
    if (sqlite3_step(fts.s) != SQLITE_DONE) {
        m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        return false;
    }
    return true;
}

bool IssueCorpus::seed()
{
    // Fault rows: several rows may share a link (one issue, several labels).
    struct Labelled {
        QString source;
        QStringList symptoms, fixes, words, leafNames, fixLabels;
        QList<QStringList> rows;
        bool distributed = false;
    };
    QList<QString> order;
    QHash<QString, Labelled> byLink;
    const Taxonomy& taxonomy = Taxonomy::instance();
    const CsvTable faults = readCsv(QStringLiteral(":/taxonomy/tosem23_faults.csv"));
    for (qsizetype i = 0; i < faults.rowCount(); ++i) {
        const QStringList& f = faults.row(i);
        if (f.size() < 7) continue;
        QString symptom = slugify(f[3]);
        if (!f[4].isEmpty()) symptom += QLatin1Char('/') + slugify(f[4]);
        symptom += QLatin1Char('/') + slugify(f[5]);
        if (!byLink.contains(f[1])) order << f[1];
        Labelled& l = byLink[f[1]];
        l.source = f[0];
        l.distributed = l.distributed || f[2] == QLatin1String("1");
        if (!l.symptoms.contains(symptom)) l.symptoms << symptom;
        for (const QString& fix : taxonomy.fixPatternIdsOfLabel(f[6]))
            if (!l.fixes.contains(fix)) l.fixes << fix;
        l.words << f[3] << f[4] << f[5] << f[6] << symptom;
        if (!l.leafNames.contains(f[5])) l.leafNames << f[5];
        if (!l.fixLabels.contains(f[6])) l.fixLabels << f[6];
        l.rows << QStringList{f[3], f[4], f[5], symptom, f[6]};
    }
    for (const QString& link : std::as_const(order)) {
        const Labelled& l = byLink[link];
        if (!insertIssue(link, studyTitle(link, l.leafNames, l.fixLabels), {}, l.source,
                         QStringLiteral("study"), l.symptoms, l.fixes,
                         l.words.join(QLatin1Char(' ')), Taxonomy::frameworksOfSource(l.source)))
            return false;
        const sqlite3_int64 id = sqlite3_last_insert_rowid(m_db);
        Statement d(m_db, "UPDATE issue SET distributed_specific = ?1 WHERE id = ?2");
        sqlite3_bind_int(d.s, 1, l.distributed ? 1 : 0);
        sqlite3_bind_int64(d.s, 2, id);
        sqlite3_step(d.s);
        for (const QStringList& r : l.rows) {
            Statement lab(m_db, "INSERT INTO label VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
            sqlite3_bind_int64(lab.s, 1, id);
            for (int k = 0; k < 5; ++k)
                lab.bind(k + 2, r[k]);
            sqlite3_step(lab.s);
        }
    }
    const CsvTable howto = readCsv(QStringLiteral(":/taxonomy/tosem23_howto.csv"));
    for (qsizetype i = 0; i < howto.rowCount(); ++i) {
        const QStringList& h = howto.row(i);
        if (h.size() < 4 || byLink.contains(h[1])) continue;
        if (!insertIssue(h[1], howToTitle(h[1], h[2], h[3]), {}, h[0], QStringLiteral("howto"), {},
                         {}, QStringLiteral("how-to %1 %2").arg(h[2], h[3]),
                         Taxonomy::frameworksOfSource(h[0])))
            return false;
        Statement t(m_db, "INSERT INTO howto VALUES(?1, ?2, ?3)");
        sqlite3_bind_int64(t.s, 1, sqlite3_last_insert_rowid(m_db));
        t.bind(2, h[2]);
        t.bind(3, h[3]);
        sqlite3_step(t.s);
    }
    return addHowToOfStudyIssues();
}

bool IssueCorpus::addHowToOfStudyIssues()
{
    const CsvTable howto = readCsv(QStringLiteral(":/taxonomy/tosem23_howto.csv"));
    QHash<qint64, QString> titles; // of the issues that gain a topic
    for (qsizetype i = 0; i < howto.rowCount(); ++i) {
        const QStringList& h = howto.row(i);
        if (h.size() < 4) continue;
        Statement issue(m_db, "SELECT id, title FROM issue WHERE link = ?1 AND origin = 'study'");
        issue.bind(1, h[1]);
        if (sqlite3_step(issue.s) != SQLITE_ROW) continue;
        const qint64 id = sqlite3_column_int64(issue.s, 0);
        Statement known(m_db,
                        "SELECT 1 FROM howto WHERE issue_id = ?1 AND topic = ?2 AND subtopic = ?3");
        sqlite3_bind_int64(known.s, 1, id);
        known.bind(2, h[2]);
        known.bind(3, h[3]);
        if (sqlite3_step(known.s) == SQLITE_ROW) continue;
        Statement add(m_db, "INSERT INTO howto VALUES(?1, ?2, ?3)");
        sqlite3_bind_int64(add.s, 1, id);
        add.bind(2, h[2]);
        add.bind(3, h[3]);
        Statement words(m_db, "UPDATE issue_fts SET labels = labels || ' ' || ?2 WHERE rowid = ?1");
        sqlite3_bind_int64(words.s, 1, id);
        words.bind(2, QStringLiteral("how-to %1 %2").arg(h[2], h[3]));
        if (sqlite3_step(add.s) != SQLITE_DONE || sqlite3_step(words.s) != SQLITE_DONE) {
            m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
            return false;
        }
        QString& title = titles[id];
        if (title.isEmpty()) title = issue.text(1);
        title += kTitleSeparator + howToLabel(h[2], h[3]);
    }
    QList<std::pair<qint64, QString>> retitled;
    for (auto it = titles.cbegin(); it != titles.cend(); ++it)
        retitled.append({it.key(), it.value()});
    return retitle(retitled);
}

int IssueCorpus::importPath(const QString& path, const ImportProgress& progress)
{
    if (!m_db) {
        m_error = QStringLiteral("the issue database is not open");
        return -1;
    }
    QList<Report> reports;
    const QFileInfo info(path);
    auto readUtf8 = [&](const QString& file, QString* text) {
        QFile f(file);
        if (!f.open(QIODevice::ReadOnly)) {
            m_error = QStringLiteral("cannot read %1: %2").arg(file, f.errorString());
            return false;
        }
        if (!decodeUtf8(f.readAll(), text)) {
            m_error = QStringLiteral("%1 is not UTF-8 text").arg(file);
            return false;
        }
        return true;
    };
    const auto cancelled = [&](qsizetype done, qsizetype total) {
        if (!progress || progress(done, total)) return false;
        m_error = QStringLiteral("import cancelled, nothing was changed");
        return true;
    };
    // A file's reports, or false with m_error naming the file and why it holds none.
    const auto readReports = [&](const QFileInfo& file) {
        QString text;
        if (!readUtf8(file.absoluteFilePath(), &text)) return false;
        // A blank report would be a row with neither title nor body.
        if (text.trimmed().isEmpty()) {
            m_error = QStringLiteral("%1: empty file").arg(file.filePath());
            return false;
        }
        if (isTextReport(file)) {
            reports << textReport(file, text);
            return true;
        }
        QString why;
        if (jsonReports(text.toUtf8(), fileUrl(file), &reports, &why)) return true;
        m_error = QStringLiteral("%1: %2").arg(file.filePath(), why);
        return false;
    };
    m_skipped.clear();
    if (info.isDir()) {
        // Links are not followed (they may lead out of the folder) and subfolders not searched,
        // but each is named, so that a folder of links does not look empty. Other files are
        // not reports; System lists broken links too.
        const QFileInfoList entries = QDir(path).entryInfoList(
            QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
        for (const QFileInfo& entry : entries) {
            if (cancelled(0, entries.size())) return -1;
            if (entry.isSymLink())
                m_skipped << QStringLiteral("%1: a link, not followed").arg(entry.filePath());
            else if (entry.isDir())
                m_skipped << QStringLiteral("%1: a folder, not searched").arg(entry.filePath());
            // One file that is not an issue does not stop the others; each is named once.
            else if (entry.isFile() && isReportFile(entry) && !readReports(entry))
                m_skipped << m_error;
        }
        if (reports.isEmpty()) {
            m_error = m_skipped.isEmpty()
                          ? QStringLiteral("%1 holds no .json, .md or .txt reports").arg(path)
                          : QStringLiteral("%1 holds no issue: %2")
                                .arg(path, m_skipped.join(QLatin1String("; ")));
            return -1;
        }
    } else if (!readReports(info)) {
        return -1;
    }

    if (!exec("BEGIN IMMEDIATE")) return -1;
    const auto rollback = [&](bool wasCancelled) {
        const QString why = m_error;
        exec("ROLLBACK");
        m_error =
            wasCancelled ? why : QStringLiteral("import failed, nothing was changed: %1").arg(why);
        return -1;
    };
    for (qsizetype n = 0; n < reports.size(); ++n) {
        if (cancelled(n, reports.size())) return rollback(true);
        const Report& r = reports[n];
        const QList<Candidate> candidates =
            SymptomClassifier::instance().classify((r.title + QLatin1Char('\n') + r.body).toUtf8());
        QStringList symptoms;
        for (int i = 0; i < std::min<qsizetype>(3, candidates.size()); ++i)
            symptoms << candidates[i].symptom;
        bool ok = insertIssue(
            r.link, r.title, r.body, kImportedSource, QStringLiteral("import"), symptoms, {},
            r.labels.join(QLatin1Char(' ')) + QLatin1Char(' ') + symptoms.join(QLatin1Char(' ')),
            frameworksOfReport(r.link, r.title + QLatin1Char('\n') + r.body), r.labels);
        const sqlite3_int64 id = sqlite3_last_insert_rowid(m_db);
        for (int i = 0; ok && i < candidates.size(); ++i) {
            Statement c(m_db, "INSERT INTO candidate VALUES(?1, ?2, ?3, ?4)");
            sqlite3_bind_int64(c.s, 1, id);
            sqlite3_bind_int(c.s, 2, i + 1);
            c.bind(3, candidates[i].symptom);
            sqlite3_bind_double(c.s, 4, candidates[i].probability);
            ok = sqlite3_step(c.s) == SQLITE_DONE;
            if (!ok) m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        }
        if (!ok) return rollback(false);
    }
    if (cancelled(reports.size(), reports.size())) return rollback(true);
    if (!exec("COMMIT")) return rollback(false);
    return int(reports.size());
}

QList<IssueResult> IssueCorpus::search(const QString& query, int limit, bool* anyWord) const
{
    QList<IssueResult> results;
    if (anyWord) *anyWord = false;
    if (matchExpression(query).isEmpty()) return results; // no word to search for
    IssueFilter filter;
    filter.text = query;
    for (const IssueRecord& r : records(matchingIds(filter, anyWord).mid(0, limit)))
        results << IssueResult{r.link, r.title, r.source, r.symptoms, r.fixPatterns};
    return results;
}

int IssueCorpus::count(const QString& origin) const
{
    if (!m_db) return 0;
    Statement s(m_db, "SELECT count(*) FROM issue WHERE origin = ?1");
    s.bind(1, origin);
    return sqlite3_step(s.s) == SQLITE_ROW ? sqlite3_column_int(s.s, 0) : 0;
}

int IssueCorpus::howToQuestionCount() const
{
    if (!m_db) return 0;
    Statement s(m_db, "SELECT count(DISTINCT issue_id) FROM howto");
    return sqlite3_step(s.s) == SQLITE_ROW ? sqlite3_column_int(s.s, 0) : 0;
}

QString IssueCorpus::matchExpression(const QString& text, bool anyWord)
{
    // A "quoted phrase" stays a phrase (its words in order); other words match as themselves or
    // as prefixes.
    static const QRegularExpression token(QStringLiteral("\"([^\"]*)\"|[\\p{L}\\p{N}_]+"));
    static const QRegularExpression word(QStringLiteral("[\\p{L}\\p{N}_]+"));
    QStringList terms;
    for (auto it = token.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        if (m.captured(0).startsWith(QLatin1Char('"'))) {
            QStringList words;
            for (auto w = word.globalMatch(m.captured(1)); w.hasNext();)
                words << w.next().captured();
            if (!words.isEmpty())
                terms << QLatin1Char('"') + words.join(QLatin1Char(' ')) + QLatin1Char('"');
        } else {
            // The word itself or as the start of one; bm25 sums both, so "horovod #6" ranks
            // issue 6 above 60 and 666.
            const QString w = QLatin1Char('"') + m.captured(0) + QLatin1Char('"');
            terms << QStringLiteral("(%1 OR %1*)").arg(w);
        }
    }
    // FTS5 ANDs adjacent phrases, not adjacent groups: the AND is spelled out.
    return terms.join(anyWord ? QStringLiteral(" OR ") : QStringLiteral(" AND "));
}

QString IssueCorpus::anyWordNotice()
{
    return QStringLiteral("No issue has all the words; showing the issues with any of them.");
}

QList<qint64> IssueCorpus::matchingIds(const IssueFilter& filter, bool* anyWord) const
{
    QList<qint64> ids;
    if (anyWord) *anyWord = false;
    if (!m_db) return ids;
    const QString match = matchExpression(filter.text);
    if (!filter.text.trimmed().isEmpty() && match.isEmpty()) return ids; // only punctuation
    QStringList where, values;
    const auto listHas = [&](const char* column, const QString& value) {
        where << QString::fromLatin1(kListHas).arg(QLatin1String(column));
        values << value;
    };
    if (!filter.framework.isEmpty()) listHas("i.framework", filter.framework);
    if (!filter.source.isEmpty()) {
        where << QStringLiteral("i.source = ?");
        values << filter.source;
    }
    if (filter.stage == kHowToStage) {
        where << QStringLiteral("EXISTS (SELECT 1 FROM howto h WHERE h.issue_id = i.id)");
    } else if (!filter.stage.isEmpty()) {
        where << QStringLiteral("instr(char(10) || i.symptoms, char(10) || ? || '/') > 0");
        values << filter.stage;
    }
    if (!filter.leaf.isEmpty()) listHas("i.symptoms", filter.leaf);
    if (!filter.fixPattern.isEmpty()) listHas("i.fix_patterns", filter.fixPattern);
    if (filter.distributed == IssueFilter::Distributed::Yes)
        where << QStringLiteral("i.distributed_specific = 1");
    else if (filter.distributed == IssueFilter::Distributed::No)
        where << QStringLiteral("i.distributed_specific = 0");

    // Every word first; when no issue has them all, any of them (bm25 ranks the best first).
    ids = idsMatching(match, where, values);
    if (ids.isEmpty() && !match.isEmpty()) {
        const QString any = matchExpression(filter.text, true);
        if (any != match) {
            ids = idsMatching(any, where, values);
            if (anyWord) *anyWord = !ids.isEmpty();
        }
    }
    return ids;
}

QList<qint64> IssueCorpus::idsMatching(const QString& match, const QStringList& where,
                                       const QStringList& values) const
{
    QList<qint64> ids;
    QStringList conditions = where, bound = values;
    if (!match.isEmpty()) {
        conditions.prepend(QStringLiteral("issue_fts MATCH ?"));
        bound.prepend(match);
    }
    QString sql = match.isEmpty() ? QStringLiteral("SELECT i.id FROM issue i")
                                  : QStringLiteral("SELECT i.id FROM issue_fts f "
                                                   "JOIN issue i ON i.id = f.rowid");
    if (!conditions.isEmpty())
        sql += QLatin1String(" WHERE ") + conditions.join(QLatin1String(" AND "));
    sql += match.isEmpty() ? QStringLiteral(" ORDER BY i.id")
                           : QStringLiteral(" ORDER BY bm25(issue_fts, 4.0, 1.0, 2.0, 1.0), i.id");
    Statement s(m_db, sql);
    if (!s.s) {
        m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        return ids;
    }
    for (int i = 0; i < bound.size(); ++i)
        s.bind(i + 1, bound[i]);
    while (sqlite3_step(s.s) == SQLITE_ROW)
        ids << sqlite3_column_int64(s.s, 0);
    return ids;
}

QList<IssueRecord> IssueCorpus::records(const QList<qint64>& ids, const QString& text) const
{
    QList<IssueRecord> out;
    if (!m_db || ids.isEmpty()) return out;
    const QString match = matchExpression(text, true);
    QHash<qint64, IssueRecord> byId;
    for (qsizetype first = 0; first < ids.size(); first += kIdsPerStatement) {
        const QList<qint64> chunk = ids.mid(first, kIdsPerStatement);
        QStringList marks(chunk.size(), QStringLiteral("?"));
        const QString in = marks.join(QLatin1Char(','));
        Statement s(m_db, QStringLiteral("SELECT id, link, title, source, origin, framework, "
                                         "symptoms, fix_patterns, distributed_specific "
                                         "FROM issue WHERE id IN (%1)")
                              .arg(in));
        for (int i = 0; i < chunk.size(); ++i)
            sqlite3_bind_int64(s.s, i + 1, chunk[i]);
        while (sqlite3_step(s.s) == SQLITE_ROW) {
            IssueRecord r;
            r.id = sqlite3_column_int64(s.s, 0);
            r.link = s.text(1);
            r.title = s.text(2);
            r.source = s.text(3);
            r.origin = s.text(4);
            r.frameworks = s.list(5);
            r.symptoms = s.list(6);
            r.fixPatterns = s.list(7);
            if (sqlite3_column_type(s.s, 8) != SQLITE_NULL)
                r.distributedSpecific = sqlite3_column_int(s.s, 8) != 0;
            byId.insert(r.id, r);
        }
        if (match.isEmpty()) continue;
        Statement snip(m_db, QStringLiteral("SELECT rowid, snippet(issue_fts, -1, char(2), "
                                            "char(3), '…', 16) FROM issue_fts "
                                            "WHERE issue_fts MATCH ? AND rowid IN (%1)")
                                 .arg(in));
        snip.bind(1, match);
        for (int i = 0; i < chunk.size(); ++i)
            sqlite3_bind_int64(snip.s, i + 2, chunk[i]);
        while (sqlite3_step(snip.s) == SQLITE_ROW) {
            const auto it = byId.find(sqlite3_column_int64(snip.s, 0));
            if (it != byId.end()) it->snippet = snip.text(1).simplified();
        }
    }
    for (qint64 id : ids) {
        const auto it = byId.constFind(id);
        if (it != byId.constEnd()) out << *it;
    }
    return out;
}

std::optional<IssueRecord> IssueCorpus::record(qint64 id, const QString& text) const
{
    const QList<IssueRecord> found = records({id}, text);
    if (found.isEmpty()) return std::nullopt;
    IssueRecord r = found.first();
    {
        Statement s(m_db, "SELECT body, labels FROM issue WHERE id = ?1");
        sqlite3_bind_int64(s.s, 1, id);
        if (sqlite3_step(s.s) == SQLITE_ROW) {
            r.body = s.text(0);
            r.labels = s.list(1);
        }
    }
    {
        Statement s(m_db, "SELECT stage, inner_category, leaf, symptom, fix_pattern FROM label "
                          "WHERE issue_id = ?1 ORDER BY rowid");
        sqlite3_bind_int64(s.s, 1, id);
        while (sqlite3_step(s.s) == SQLITE_ROW)
            r.studyLabels << IssueLabel{s.text(0), s.text(1), s.text(2), s.text(3), s.text(4)};
    }
    {
        Statement s(m_db, "SELECT topic, subtopic FROM howto WHERE issue_id = ?1 ORDER BY rowid");
        sqlite3_bind_int64(s.s, 1, id);
        while (sqlite3_step(s.s) == SQLITE_ROW)
            r.howTo << s.text(0) + QLatin1String(" / ") + s.text(1);
    }
    {
        Statement s(m_db, "SELECT symptom, score FROM candidate WHERE issue_id = ?1 ORDER BY rank");
        sqlite3_bind_int64(s.s, 1, id);
        while (sqlite3_step(s.s) == SQLITE_ROW)
            r.candidates << IssueCandidate{s.text(0), sqlite3_column_double(s.s, 1)};
    }
    return r;
}

IssueFacets IssueCorpus::facets() const
{
    IssueFacets f;
    if (!m_db) return f;
    QSet<QString> frameworks, sources, stages, leaves, patterns;
    Statement s(m_db, "SELECT framework, source, symptoms, fix_patterns, origin, "
                      "distributed_specific FROM issue");
    while (sqlite3_step(s.s) == SQLITE_ROW) {
        for (const QString& v : s.list(0))
            frameworks.insert(v);
        if (!s.text(1).isEmpty()) sources.insert(s.text(1));
        for (const QString& leaf : s.list(2)) {
            leaves.insert(leaf);
            stages.insert(leaf.section(QLatin1Char('/'), 0, 0));
        }
        for (const QString& v : s.list(3))
            patterns.insert(v);
        f.hasHowTo = f.hasHowTo || s.text(4) == QLatin1String("howto");
        f.hasDistributedLabels =
            f.hasDistributedLabels || sqlite3_column_type(s.s, 5) != SQLITE_NULL;
    }
    const auto sorted = [](const QSet<QString>& set) {
        QStringList l(set.begin(), set.end());
        l.sort();
        return l;
    };
    f.frameworks = sorted(frameworks);
    f.sources = sorted(sources);
    // Stages in the study's order, then any the taxonomy does not know.
    for (const QString& stage : Taxonomy::instance().stages())
        if (stages.remove(stage)) f.stages << stage;
    f.stages << sorted(stages);
    f.leaves = sorted(leaves);
    f.fixPatterns = sorted(patterns);
    return f;
}

} // namespace rankscope
