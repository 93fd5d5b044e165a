#pragma once

#include <QStringList>

class QTextStream;

namespace rankscope {

// The headless side of the binary: `rankscope analyze DIR`, `--help`, `--version`.
// Exit codes: 0 success, 2 bad usage, 3 the folder is missing or unreadable.
class Cli {
public:
    enum ExitCode { Success = 0, Usage = 2, Unreadable = 3 };

    // True when argv asks for the CLI rather than the GUI (a subcommand or a CLI option); decided
    // before any QApplication exists, so the CLI never needs a display.
    static bool handles(int argc, char** argv);

    // Runs a CLI invocation; `arguments` includes the program name, as QCoreApplication gives it.
    static int run(const QStringList& arguments, QTextStream& out, QTextStream& err);

private:
    static int runAnalyze(const QStringList& arguments, QTextStream& out, QTextStream& err);
};

} // namespace rankscope
