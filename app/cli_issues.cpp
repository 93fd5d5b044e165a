#include "app/cli.h"
#include "model/kb/issuecorpus.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QTextStream>
#include <nlohmann/json.hpp>

namespace rankscope {

int runIssuesCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "The issue corpus: the study's labelled issues and how-to questions plus your imported "
        "reports (database: $RANKSCOPE_DB or the app data folder).\n"
        "  issues import FILE|DIR   GitHub issue JSON (one issue as /repos/O/R/issues/N\n"
        "                           returns it, a REST array, or gh issue list --json\n"
        "                           number,title,body,labels,url), a .md/.txt report, or a\n"
        "                           folder of .json/.md/.txt files\n"
        "  issues search QUERY      full-text search, best match first: every word as a\n"
        "                           prefix, \"a phrase\" in quotes; when no issue has every\n"
        "                           word, issues with any of them (the Issues tab's query);\n"
        "                           a query starting with '-' follows '--':\n"
        "                           issues search -- -hang"));
    parser.addPositionalArgument(QStringLiteral("action"), QStringLiteral("import or search"));
    parser.addPositionalArgument(QStringLiteral("argument"),
                                 QStringLiteral("The file or folder, or the query."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the rankscope.issues/1 JSON (search)."));
    const QCommandLineOption limit(QStringLiteral("limit"),
                                   QStringLiteral("At most N results (default 20)."),
                                   QStringLiteral("N"), QStringLiteral("20"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(json);
    parser.addOption(limit);
    parser.addOption(help);
    if (!parser.parse(arguments)) return Cli::usageError(err, parser.errorText());
    if (parser.isSet(help)) {
        out << Cli::commandHelp(parser, "issues");
        return Cli::Success;
    }
    const QStringList positional = parser.positionalArguments();
    const QString action = positional.value(0);
    if (action != QLatin1String("import") && action != QLatin1String("search"))
        return Cli::usageError(err, QStringLiteral("issues needs 'import FILE|DIR' or "
                                                   "'search QUERY'"));
    if (positional.size() < 2)
        return Cli::usageError(err, QStringLiteral("issues %1 needs an argument").arg(action));
    bool ok = false;
    const int maxResults = parser.value(limit).toInt(&ok);
    if (!ok || maxResults < 1)
        return Cli::usageError(err, QStringLiteral("--limit needs a positive number"));

    if (action == QLatin1String("import")) {
        if (positional.size() != 2)
            return Cli::usageError(err, QStringLiteral("issues import takes one file or folder"));
        if (!QFileInfo::exists(positional[1])) {
            err << "rankscope: cannot read '" << positional[1] << "': no such file or folder\n";
            return Cli::Unreadable;
        }
    }
    IssueCorpus corpus;
    if (!corpus.open(IssueCorpus::defaultPath())) {
        err << "rankscope: " << corpus.error() << "\n";
        return Cli::Unreadable;
    }
    if (action == QLatin1String("import")) {
        const int n = corpus.importPath(positional[1]);
        if (n < 0) {
            err << "rankscope: " << corpus.error() << "\n";
            return Cli::Unreadable;
        }
        out << "Imported " << n << (n == 1 ? " issue" : " issues") << " into "
            << IssueCorpus::defaultPath() << "\n";
        for (const QString& skipped : corpus.skipped())
            err << "rankscope: skipped " << skipped << "\n";
        return Cli::Success;
    }

    const QString query = positional.mid(1).join(QLatin1Char(' '));
    bool anyWord = false;
    const QList<IssueResult> results = corpus.search(query, maxResults, &anyWord);
    // What the text output suggests when nothing matched, and the JSON too; none for a query of
    // no words (only punctuation), which was not searched.
    const QStringList related =
        results.isEmpty() ? IssueCorpus::relatedLeaves(query) : QStringList();
    if (parser.isSet(json)) {
        using Json = nlohmann::ordered_json;
        const auto strings = [](const QStringList& l) {
            Json a = Json::array();
            for (const QString& s : l)
                a.push_back(s.toStdString());
            return a;
        };
        Json list = Json::array();
        for (const IssueResult& r : results)
            list.push_back({{"link", r.link.toStdString()},
                            {"title", r.title.toStdString()},
                            {"source", r.source.toStdString()},
                            {"symptoms", strings(r.symptoms)},
                            {"fix_patterns", strings(r.fixPatterns)}});
        const Json doc = {{"schema", "rankscope.issues/1"},
                          {"any_word", anyWord},
                          {"results", list},
                          {"likely_leaves", strings(related)}};
        out << QString::fromStdString(doc.dump(2)) << "\n";
        return Cli::Success;
    }
    if (IssueCorpus::matchExpression(query).isEmpty()) {
        out << "The query '" << query << "' has no words (letters or digits) to search for.\n";
    } else if (results.isEmpty()) {
        out << "No issue matched '" << query << "'.\n";
        if (!related.isEmpty())
            out << "Leaves these words are most likely about: " << related.join(QLatin1String(", "))
                << "\n";
    }
    if (anyWord) out << IssueCorpus::anyWordNotice() << "\n";
    for (const IssueResult& r : results) {
        out << r.link << "  [" << r.source << "]\n";
        if (!r.title.isEmpty()) out << "    " << r.title << "\n";
        if (!r.symptoms.isEmpty())
            out << "    symptoms: " << r.symptoms.join(QLatin1String(", ")) << "\n";
        if (!r.fixPatterns.isEmpty())
            out << "    fixes:    " << r.fixPatterns.join(QLatin1String(", ")) << "\n";
    }
    return Cli::Success;
}

} // namespace rankscope
