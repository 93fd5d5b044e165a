#pragma once

#include <QByteArray>
#include <QStringList>

class QCommandLineParser;
class QIODevice;
class QTextStream;

namespace rankscope {

// The headless side of the binary: `rankscope <command> ...`, `--help`, `--version`.
// Exit codes: 0 success, 2 bad usage, 3 an input is missing or unreadable.
class Cli {
public:
    enum ExitCode { Success = 0, Usage = 2, Unreadable = 3 };

    // A subcommand: `arguments` starts with the command's own name (argv[0] for its parser).
    using CommandFn = int (*)(const QStringList& arguments, QTextStream& out, QTextStream& err);
    struct Command {
        const char* name;
        const char* synopsis; // the usage line after "rankscope "
        const char* summary;  // one line for --help
        CommandFn run;
    };

    // True when argv asks for the CLI rather than the GUI (a subcommand or a CLI option); decided
    // before any QApplication exists, so the CLI never needs a display.
    static bool handles(int argc, char** argv);

    // Runs a CLI invocation; `arguments` includes the program name, as QCoreApplication gives it.
    static int run(const QStringList& arguments, QTextStream& out, QTextStream& err);

    // The one way every command reports bad usage: one line, a hint, exit code 2.
    static int usageError(QTextStream& err, const QString& message);

    // Reads `file` up to `maxBytes` (an endless input such as /dev/zero stops there); when more
    // was left, says so on `err`.
    static constexpr qint64 kMaxInputBytes = 64 * 1024 * 1024;
    static QByteArray readInput(QIODevice& file, QTextStream& err,
                                qint64 maxBytes = kMaxInputBytes);

    // A command's --help text, its usage line naming "rankscope <command>" rather than the path
    // the binary was started from.
    static QString commandHelp(const QCommandLineParser& parser, const char* command);
};

// The commands, each in its own cli_<name>.cpp.
int runAnalyzeCommand(const QStringList& arguments, QTextStream& out, QTextStream& err);
int runTaxonomyCommand(const QStringList& arguments, QTextStream& out, QTextStream& err);
int runClassifyCommand(const QStringList& arguments, QTextStream& out, QTextStream& err);
int runIssuesCommand(const QStringList& arguments, QTextStream& out, QTextStream& err);

} // namespace rankscope
