#include "app/cli.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileInfo>
#include <QIODevice>
#include <QTextStream>
#include <cstring>

namespace rankscope {

namespace {

const Cli::Command kCommands[] = {
    {"analyze", "analyze FOLDER [--json | --format text|json|markdown] [--output FILE]",
     "read a folder of per-rank traces and logs and report what it holds", runAnalyzeCommand},
    {"taxonomy", "taxonomy [--json] [--node NODE-ID | --walkthrough PATTERN-ID]",
     "print the study's fault taxonomy and fix patterns, one node, or one fix walkthrough",
     runTaxonomyCommand},
    {"classify", "classify [FILE|-] [--json | --jsonl] [--top N]",
     "rank the study's symptoms for an issue report or log", runClassifyCommand},
    {"issues", "issues import FILE|DIR | issues search QUERY [--json]",
     "import issue reports, or search the study's and imported issues", runIssuesCommand},
};

QString topLevelHelp()
{
    QString help =
        QStringLiteral("Usage: rankscope [FOLDER]   open the GUI, optionally on a trace folder\n");
    for (const Cli::Command& c : kCommands)
        help += QStringLiteral("       rankscope %1\n").arg(QLatin1String(c.synopsis));
    help += QStringLiteral("       rankscope --help | --version\n\nCommands:\n");
    for (const Cli::Command& c : kCommands)
        help += QStringLiteral("  %1 %2\n")
                    .arg(QLatin1String(c.name), -10)
                    .arg(QLatin1String(c.summary));
    help += QStringLiteral("\n'rankscope COMMAND --help' describes a command's options.\n"
                           "Exit codes: 0 success, 2 bad usage, 3 input missing or unreadable.\n");
    return help;
}

} // namespace

int Cli::usageError(QTextStream& err, const QString& message)
{
    err << "rankscope: " << message << "\n"
        << "Try 'rankscope --help'.\n";
    return Usage;
}

QByteArray Cli::readInput(QIODevice& file, QTextStream& err, qint64 maxBytes)
{
    const QByteArray bytes = file.read(maxBytes);
    if (bytes.size() == maxBytes && !file.read(1).isEmpty())
        err << "rankscope: the input is over " << maxBytes / (1024 * 1024) << " MB; only its first "
            << maxBytes / (1024 * 1024) << " MB were read\n";
    return bytes;
}

QString Cli::commandHelp(const QCommandLineParser& parser, const char* command)
{
    // QCommandLineParser names the program by QCoreApplication's argv[0].
    QString help = parser.helpText();
    const QString exe = QCoreApplication::arguments().value(0);
    const QString name = QStringLiteral("rankscope ") + QLatin1String(command);
    if (!exe.isEmpty()) help.replace(exe, name);
    return help;
}

bool Cli::handles(int argc, char** argv)
{
    if (argc < 2) return false;
    const char* first = argv[1];
    for (const Command& command : kCommands)
        if (std::strcmp(first, command.name) == 0) return true;
    // Any option before a folder is a CLI matter: --help, --version, or a usage error. So is
    // anything the GUI could not open (a mistyped command, a missing folder, extra arguments):
    // reported as bad usage without a display, rather than by a GUI that cannot start.
    return first[0] == '-' || argc > 2 || !QFileInfo::exists(QString::fromLocal8Bit(first));
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
    for (const Command& command : kCommands)
        if (first == QLatin1String(command.name)) return command.run(arguments.mid(1), out, err);
    if (first.startsWith(QLatin1Char('-')))
        return usageError(err, QStringLiteral("unknown option '%1'").arg(first));
    if (!QFileInfo::exists(first))
        return usageError(err, QStringLiteral("'%1' is neither a command nor a folder").arg(first));
    return usageError(err, QStringLiteral("the GUI opens one folder; '%1' is not a command")
                               .arg(arguments.mid(2).join(QLatin1Char(' '))));
}

} // namespace rankscope
