#include "app/cli.h"

#include <QCoreApplication>
#include <QTextStream>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

// Replaces this process with the GUI program, installed at RANKSCOPE_GUI_FROM_BIN relative to
// this one; returns only when that fails.
int execGui(char** argv)
{
    char self[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    std::string gui = n > 0 ? std::string(self, std::size_t(n)) : std::string();
    gui = gui.substr(0, gui.rfind('/') + 1) + RANKSCOPE_GUI_FROM_BIN;
    ::execv(gui.c_str(), argv);
    std::fprintf(stderr, "rankscope: cannot start the GUI program %s: %s\n", gui.c_str(),
                 std::strerror(errno));
    return rankscope::Cli::Unreadable;
}

} // namespace

int main(int argc, char** argv)
{
    if (!rankscope::Cli::handles(argc, argv)) return execGui(argv);
    QCoreApplication::setApplicationName(QStringLiteral("rankscope"));
    QCoreApplication::setOrganizationName(QStringLiteral("RankScope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RANKSCOPE_VERSION));
    QCoreApplication app(argc, argv);
    QTextStream out(stdout);
    QTextStream err(stderr);
    return rankscope::Cli::run(QCoreApplication::arguments(), out, err);
}
