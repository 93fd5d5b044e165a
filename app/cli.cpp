#include "app/cli.h"

#include "model/analysisreport.h"

#include <QCommandLineParser>
#include <QTextStream>

#include <cstring>

namespace rankscope {

namespace {

const char* const kCommands[] = {"analyze"};

QString topLevelHelp()
{
    return QStringLiteral(
        "Usage: rankscope [FOLDER]            open the GUI, optionally on a trace folder\n"
        "       rankscope analyze FOLDER [--json | --format text|json]\n"
        "       rankscope --help | --version\n"
        "\n"
        "Commands:\n"
        "  analyze   read a folder of per-rank traces and logs and report what it holds\n"
        "\n"
        "Exit codes: 0 success, 2 bad usage, 3 folder missing or unreadable.\n");
}

int usageError(QTextStream& err, const QString& message)
{
    err << "rankscope: " << message << "\n"
        << "Try 'rankscope --help'.\n";
    return Cli::Usage;
}

} // namespace

bool Cli::handles(int argc, char** argv)
{
    if (argc < 2) return false;
    const char* first = argv[1];
    for (const char* command : kCommands)
        if (std::strcmp(first, command) == 0) return true;
    // Any option before a folder is a CLI matter: --help, --version, or a usage error.
    return first[0] == '-';
}

int Cli::run(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    const QString first = arguments.value(1);
    if (first == QLatin1String("--help") || first == QLatin1String("-h")) {
        out << topLevelHelp();
        return Success;
    }
    if (first == QLatin1String("--version") || first == QLatin1String("-v")) {
        out << "rankscope " << RANKSCOPE_VERSION << "\n";
        return Success;
    }
    if (first == QLatin1String("analyze")) return runAnalyze(arguments.mid(1), out, err);
    if (first.startsWith(QLatin1Char('-'))) return usageError(err, QStringLiteral("unknown option '%1'").arg(first));
    return usageError(err, QStringLiteral("unknown command '%1'").arg(first));
}

int Cli::runAnalyze(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Read a folder of per-rank traces and logs and report what it holds."));
    parser.addPositionalArgument(QStringLiteral("folder"), QStringLiteral("The trace folder."));
    const QCommandLineOption json(QStringLiteral("json"),
                                  QStringLiteral("Print the rankscope.analysis/1 JSON document."));
    const QCommandLineOption format(QStringList{QStringLiteral("format")},
                                    QStringLiteral("Output format: text (default) or json."),
                                    QStringLiteral("format"), QStringLiteral("text"));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    parser.addOption(json);
    parser.addOption(format);
    parser.addOption(help);
    // The first argument is the command name, which QCommandLineParser takes as argv[0].
    if (!parser.parse(arguments)) return usageError(err, parser.errorText());
    if (parser.isSet(help)) {
        out << parser.helpText().replace(arguments.first(), QStringLiteral("rankscope analyze"));
        return Success;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1)
        return usageError(err, QStringLiteral("analyze takes exactly one folder"));
    const QString fmt = parser.isSet(json) ? QStringLiteral("json") : parser.value(format);
    if (fmt != QLatin1String("json") && fmt != QLatin1String("text"))
        return usageError(err, QStringLiteral("unknown format '%1' (text or json)").arg(fmt));

    const SessionPtr session = loadSession(positional.first());
    if (!session->folder.isValid()) {
        err << "rankscope: " << session->folder.error() << "\n";
        return Unreadable;
    }
    if (fmt == QLatin1String("json"))
        out << QString::fromStdString(AnalysisReport::toJson(*session).dump(2)) << "\n";
    else
        out << AnalysisReport::toText(*session);
    return Success;
}

} // namespace rankscope
