#include "app/cli.h"
#include "model/analysisreport.h"

#include <QCommandLineParser>
#include <QTextStream>

namespace rankscope {

int runAnalyzeCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Read a folder of per-rank traces and logs and report what it holds."));
    parser.addPositionalArgument(QStringLiteral("folder"), QStringLiteral("The trace folder."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the rankscope.analysis/1 JSON document."));
    const QCommandLineOption format(
        QStringList{QStringLiteral("format")},
        QStringLiteral("Output format: text (default), json or markdown."),
        QStringLiteral("format"), QStringLiteral("text"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(json);
    parser.addOption(format);
    parser.addOption(help);
    if (!parser.parse(arguments)) return Cli::usageError(err, parser.errorText());
    if (parser.isSet(help)) {
        out << Cli::commandHelp(parser, "analyze");
        return Cli::Success;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return Cli::usageError(err, QStringLiteral("analyze takes exactly one folder"));
    const QString fmt = parser.isSet(json) ? QStringLiteral("json") : parser.value(format);
    if (fmt != QLatin1String("json") && fmt != QLatin1String("text") &&
        fmt != QLatin1String("markdown"))
        return Cli::usageError(
            err, QStringLiteral("unknown format '%1' (text, json or markdown)").arg(fmt));

    LoadOptions options;
    options.buildLaneLods = false; // no timeline is drawn
    const SessionPtr session = loadSession(positional.first(), {}, {}, options);
    if (!session->folder.isValid()) {
        err << "rankscope: " << session->folder.error() << "\n";
        return Cli::Unreadable;
    }
    const AnalysisResult& result = session->analysis;
    if (fmt == QLatin1String("json"))
        out << QString::fromStdString(AnalysisReport::toJson(*session, result).dump(2)) << "\n";
    else if (fmt == QLatin1String("markdown"))
        out << AnalysisReport::toMarkdown(*session, result);
    else
        out << AnalysisReport::toText(*session, result);
    return Cli::Success;
}

} // namespace rankscope
