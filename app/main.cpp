#include "app/cli.h"
#include "app/mainwindow.h"

#include <QApplication>
#include <QCoreApplication>
#include <QTextStream>
#include <cstdio>

int main(int argc, char** argv)
{
    QCoreApplication::setApplicationName(QStringLiteral("rankscope"));
    QCoreApplication::setOrganizationName(QStringLiteral("RankScope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(RANKSCOPE_VERSION));

    if (rankscope::Cli::handles(argc, argv)) {
        QCoreApplication app(argc, argv);
        QTextStream out(stdout);
        QTextStream err(stderr);
        return rankscope::Cli::run(QCoreApplication::arguments(), out, err);
    }

    QApplication app(argc, argv);
    QApplication::setApplicationDisplayName(QStringLiteral("RankScope"));
    QApplication::setDesktopFileName(QStringLiteral("io.github.rankscope.RankScope"));
    rankscope::MainWindow window;
    window.show();
    const QStringList args = QCoreApplication::arguments();
    if (args.size() > 1) window.openFolder(args.at(1));
    return app.exec();
}
