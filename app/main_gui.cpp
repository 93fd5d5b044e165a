#include "app/mainwindow.h"

#include <QApplication>

// The window program `rankscope` execs when no command is given: `rankscope-gui [FOLDER]`.
int main(int argc, char** argv)
{
    QCoreApplication::setApplicationName(QStringLiteral("rankscope"));
    QCoreApplication::setOrganizationName(QStringLiteral("RankScope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RANKSCOPE_VERSION));
    QApplication app(argc, argv);
    QApplication::setApplicationDisplayName(QStringLiteral("RankScope"));
    QApplication::setDesktopFileName(QStringLiteral("io.github.rankscope.RankScope"));
    rankscope::MainWindow window;
    window.show();
    const QStringList args = QCoreApplication::arguments();
    if (args.size() > 1) window.openFolder(args.at(1));
    return app.exec();
}
