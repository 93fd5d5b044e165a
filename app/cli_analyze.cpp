#include "app/cli.h"
#include "model/analysisreport.h"
#include "model/export/exportpath.h"

#include <QCommandLineParser>
#include <QFile>
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
    const QCommandLineOption output(
        QStringList{QStringLiteral("o"), QStringLiteral("output")},
        QStringLiteral("Write the report to FILE (never inside the folder) instead of stdout."),
        QStringLiteral("FILE"));
    const LogReader::Budget defaults;
    const QCommandLineOption maxLogLines(
        QStringLiteral("max-log-lines"),
        QStringLiteral("Index at most N lines of the folder's logs (default %1); a log over it is "
                       "read up to it and marked truncated.")
            .arg(defaults.linesPerLoad),
        QStringLiteral("N"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(json);
    parser.addOption(format);
    parser.addOption(output);
    parser.addOption(maxLogLines);
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
    if (parser.isSet(maxLogLines)) {
        bool ok = false;
        const qint64 lines = parser.value(maxLogLines).toLongLong(&ok);
        if (!ok || lines < 1)
            return Cli::usageError(err, QStringLiteral("--max-log-lines needs a positive number, "
                                                       "not '%1'")
                                            .arg(parser.value(maxLogLines)));
        options.logBudget.linesPerFile = options.logBudget.linesPerLoad = lines;
    }
    const QString outputPath = parser.value(output);
    if (const QString refused = ExportPath::refusal(outputPath, positional.first());
        !outputPath.isEmpty() && !refused.isEmpty())
        return Cli::usageError(err, refused);
    QFile outputFile(outputPath);
    if (!outputPath.isEmpty() && !outputFile.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        err << "rankscope: cannot write " << outputPath << ": " << outputFile.errorString() << "\n";
        return Cli::Unreadable;
    }
    const SessionPtr session = loadSession(positional.first(), {}, {}, options);
    if (!session->folder.isValid()) {
        if (!outputPath.isEmpty()) outputFile.remove();
        err << "rankscope: " << session->folder.error() << "\n";
        return Cli::Unreadable;
    }
    QTextStream toFile(&outputFile);
    QTextStream& report = outputPath.isEmpty() ? out : toFile;
    const AnalysisResult& result = session->analysis;
    if (fmt == QLatin1String("json"))
        report << QString::fromStdString(AnalysisReport::toJson(*session, result).dump(2)) << "\n";
    else if (fmt == QLatin1String("markdown"))
        report << AnalysisReport::toMarkdown(*session, result);
    else
        report << AnalysisReport::toText(*session, result);
    return Cli::Success;
}

} // namespace rankscope
