#include "model/kb/issuecorpus.h"

#include "model/kb/csvtable.h"
#include "model/kb/slug.h"
#include "model/kb/symptomclassifier.h"
#include "model/kb/taxonomy.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QStringDecoder>
#include <QUrl>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

namespace rankscope {

namespace {

// "GitHub-horovod" -> "horovod"; "SO-tensorflow & SO-keras" -> "tensorflow, keras".
QString frameworkOf(const QString& source)
{
    QStringList out;
    for (const QString& part : source.split(QLatin1Char('&')))
        out << part.trimmed().section(QLatin1Char('-'), 1);
    return out.join(QLatin1String(", "));
}

// Link words are searchable: "https://github.com/horovod/horovod/issues/100" -> "github com ...".
QString linkWords(const QString& link)
{
    static const QRegularExpression sep(QStringLiteral("[^A-Za-z0-9]+"));
    return QString(link).replace(sep, QStringLiteral(" ")).trimmed();
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
    ~Statement() { sqlite3_finalize(s); }
    void bind(int i, const QString& v)
    {
        const QByteArray u = v.toUtf8();
        sqlite3_bind_text(s, i, u.constData(), int(u.size()), SQLITE_TRANSIENT);
    }
    QString text(int i) const
    {
        return QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(s, i)));
    }
};

struct Report {
    QString link, title, body, labels;
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
    if (!QDir().mkpath(info.absolutePath())) {
        m_error = QStringLiteral("cannot create the folder of the issue database %1").arg(path);
        return false;
    }
    if (sqlite3_open_v2(path.toUtf8().constData(), &m_db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        m_error = QStringLiteral("cannot open the issue database %1: %2")
                      .arg(path, QString::fromUtf8(sqlite3_errmsg(m_db)));
        return false;
    }
    sqlite3_busy_timeout(m_db, 5000);
    int current = 0;
    {
        Statement version(m_db, "PRAGMA user_version");
        if (sqlite3_step(version.s) == SQLITE_ROW) current = sqlite3_column_int(version.s, 0);
    }
    if (current == kSchemaVersion) return true;
    if (current > kSchemaVersion) {
        m_error =
            QStringLiteral("the issue database %1 has schema %2, newer than this program's %3")
                .arg(path)
                .arg(current)
                .arg(kSchemaVersion);
        return false;
    }
    if (!exec("PRAGMA journal_mode=WAL") || !exec("BEGIN IMMEDIATE") ||
        !exec("CREATE TABLE issue(id INTEGER PRIMARY KEY, link TEXT UNIQUE NOT NULL, title TEXT, "
              "body TEXT, source TEXT, framework TEXT, origin TEXT NOT NULL, "
              "distributed_specific INTEGER, symptoms TEXT, fix_patterns TEXT);"
              "CREATE TABLE label(issue_id INTEGER REFERENCES issue(id) ON DELETE CASCADE, "
              "stage TEXT, inner_category TEXT, leaf TEXT, symptom TEXT, fix_pattern TEXT);"
              "CREATE TABLE howto(issue_id INTEGER REFERENCES issue(id) ON DELETE CASCADE, "
              "topic TEXT, subtopic TEXT);"
              "CREATE TABLE candidate(issue_id INTEGER REFERENCES issue(id) ON DELETE CASCADE, "
              "rank INTEGER, symptom TEXT, score REAL);"
              "CREATE VIRTUAL TABLE issue_fts USING fts5(title, body, labels, link);") ||
        !seed() || !exec("PRAGMA user_version=1") || !exec("COMMIT")) {
        const QString why = m_error;
        exec("ROLLBACK");
        m_error = QStringLiteral("cannot create the issue database %1: %2").arg(path, why);
        return false;
    }
    return true;
}

bool IssueCorpus::insertIssue(const QString& link, const QString& title, const QString& body,
                              const QString& source, const QString& origin,
                              const QStringList& symptoms, const QStringList& fixes,
                              const QString& labels)
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
                        "fix_patterns) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    ins.bind(1, link);
    ins.bind(2, title);
    ins.bind(3, body);
    ins.bind(4, source);
    ins.bind(5, frameworkOf(source));
    ins.bind(6, origin);
    ins.bind(7, symptoms.join(QLatin1Char('\n')));
    ins.bind(8, fixes.join(QLatin1Char('\n')));
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
        QStringList symptoms, fixes, words;
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
        l.rows << QStringList{f[3], f[4], f[5], symptom, f[6]};
    }
    for (const QString& link : std::as_const(order)) {
        const Labelled& l = byLink[link];
        if (!insertIssue(link, {}, {}, l.source, QStringLiteral("study"), l.symptoms, l.fixes,
                         l.words.join(QLatin1Char(' '))))
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
        if (!insertIssue(h[1], {}, {}, h[0], QStringLiteral("howto"), {}, {},
                         QStringLiteral("how-to %1 %2").arg(h[2], h[3])))
            return false;
        Statement t(m_db, "INSERT INTO howto VALUES(?1, ?2, ?3)");
        sqlite3_bind_int64(t.s, 1, sqlite3_last_insert_rowid(m_db));
        t.bind(2, h[2]);
        t.bind(3, h[3]);
        sqlite3_step(t.s);
    }
    return true;
}

int IssueCorpus::importPath(const QString& path)
{
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
    if (info.isDir()) {
        const QFileInfoList files = QDir(path).entryInfoList(
            {QStringLiteral("*.md"), QStringLiteral("*.txt")}, QDir::Files, QDir::Name);
        for (const QFileInfo& file : files) {
            QString text;
            if (!readUtf8(file.absoluteFilePath(), &text)) return -1;
            Report r;
            r.link = QUrl::fromLocalFile(file.absoluteFilePath()).toString();
            const QStringList lines = text.split(QLatin1Char('\n'));
            for (const QString& line : lines)
                if (!line.trimmed().isEmpty()) {
                    r.title = line.trimmed().remove(QRegularExpression(QStringLiteral("^#+\\s*")));
                    break;
                }
            r.body = text;
            reports << r;
        }
        if (reports.isEmpty()) {
            m_error = QStringLiteral("%1 holds no .md or .txt reports").arg(path);
            return -1;
        }
    } else {
        QString text;
        if (!readUtf8(path, &text)) return -1;
        const QByteArray utf8 = text.toUtf8();
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(utf8.constData(), utf8.constData() + utf8.size());
        } catch (const nlohmann::json::parse_error& e) {
            m_error = QStringLiteral("%1 is not valid JSON (offset %2): %3")
                          .arg(path)
                          .arg(e.byte)
                          .arg(QString::fromUtf8(e.what()));
            return -1;
        }
        if (!doc.is_array()) {
            m_error = QStringLiteral("%1: expected a JSON array of GitHub issues").arg(path);
            return -1;
        }
        for (const nlohmann::json& o : doc) {
            Report r;
            r.link = stringMember(o, "html_url");
            if (r.link.isEmpty()) r.link = stringMember(o, "url");
            const auto number = o.is_object() ? o.find("number") : o.end();
            if (r.link.isEmpty() && number != o.end() && number->is_number_integer())
                r.link = QStringLiteral("%1#%2").arg(path).arg(number->get<qint64>());
            r.title = stringMember(o, "title");
            r.body = stringMember(o, "body");
            QStringList labels;
            const auto list = o.is_object() ? o.find("labels") : o.end();
            if (list != o.end() && list->is_array())
                for (const nlohmann::json& l : *list)
                    labels << (l.is_string() ? QString::fromStdString(l.get<std::string>())
                                             : stringMember(l, "name"));
            labels.removeAll(QString());
            r.labels = labels.join(QLatin1Char(' '));
            if (r.link.isEmpty() || (r.title.isEmpty() && r.body.isEmpty())) {
                m_error =
                    QStringLiteral("%1: an entry lacks a url/number or a title and body").arg(path);
                return -1;
            }
            reports << r;
        }
    }

    if (!exec("BEGIN IMMEDIATE")) return -1;
    for (const Report& r : std::as_const(reports)) {
        const QList<Candidate> candidates =
            SymptomClassifier::instance().classify((r.title + QLatin1Char('\n') + r.body).toUtf8());
        QStringList symptoms;
        for (int i = 0; i < std::min<qsizetype>(3, candidates.size()); ++i)
            symptoms << candidates[i].symptom;
        bool ok = insertIssue(r.link, r.title, r.body, QStringLiteral("import"),
                              QStringLiteral("import"), symptoms, {},
                              r.labels + QLatin1Char(' ') + symptoms.join(QLatin1Char(' ')));
        const sqlite3_int64 id = sqlite3_last_insert_rowid(m_db);
        for (int i = 0; ok && i < candidates.size(); ++i) {
            Statement c(m_db, "INSERT INTO candidate VALUES(?1, ?2, ?3, ?4)");
            sqlite3_bind_int64(c.s, 1, id);
            sqlite3_bind_int(c.s, 2, i + 1);
            c.bind(3, candidates[i].symptom);
            sqlite3_bind_double(c.s, 4, candidates[i].score);
            ok = sqlite3_step(c.s) == SQLITE_DONE;
            if (!ok) m_error = QString::fromUtf8(sqlite3_errmsg(m_db));
        }
        if (!ok) {
            const QString why = m_error;
            exec("ROLLBACK");
            m_error = QStringLiteral("import failed, nothing was changed: %1").arg(why);
            return -1;
        }
    }
    if (!exec("COMMIT")) {
        const QString why = m_error;
        exec("ROLLBACK");
        m_error = QStringLiteral("import failed, nothing was changed: %1").arg(why);
        return -1;
    }
    return int(reports.size());
}

QList<IssueResult> IssueCorpus::search(const QString& query, int limit)
{
    QList<IssueResult> results;
    static const QRegularExpression word(QStringLiteral("[A-Za-z0-9_]+"));
    QStringList terms;
    for (auto it = word.globalMatch(query); it.hasNext();)
        terms << QLatin1Char('"') + it.next().captured() + QLatin1Char('"');
    if (terms.isEmpty()) return results;
    // All words first; if nothing has them all, any word (bm25 still ranks the best first).
    for (const QString& joiner : {QStringLiteral(" "), QStringLiteral(" OR ")}) {
        Statement s(m_db, "SELECT i.link, i.title, i.source, i.symptoms, i.fix_patterns "
                          "FROM issue_fts f JOIN issue i ON i.id = f.rowid "
                          "WHERE issue_fts MATCH ?1 ORDER BY bm25(issue_fts, 4.0, 1.0, 2.0, 1.0) "
                          "LIMIT ?2");
        s.bind(1, terms.join(joiner));
        sqlite3_bind_int(s.s, 2, limit);
        while (sqlite3_step(s.s) == SQLITE_ROW) {
            IssueResult r{s.text(0), s.text(1), s.text(2),
                          s.text(3).split(QLatin1Char('\n'), Qt::SkipEmptyParts),
                          s.text(4).split(QLatin1Char('\n'), Qt::SkipEmptyParts)};
            results << r;
        }
        if (!results.isEmpty() || terms.size() == 1) break;
    }
    return results;
}

int IssueCorpus::count(const QString& origin) const
{
    Statement s(m_db, "SELECT count(*) FROM issue WHERE origin = ?1");
    s.bind(1, origin);
    return sqlite3_step(s.s) == SQLITE_ROW ? sqlite3_column_int(s.s, 0) : 0;
}

} // namespace rankscope
