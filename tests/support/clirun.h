#pragma once

#include <QByteArray>
#include <QProcess>
#include <QStringList>

// Runs the real rankscope binary (RANKSCOPE_BINARY, defined per CLI test target): the CLI's
// contract is its exit code and its output, so the CLI tests check those and nothing else.
struct CliRun {
    int exitCode = -1; // -1: it crashed or did not finish within a minute
    QByteArray out, err;
};

inline CliRun runCli(const QStringList& args, const QByteArray& input = {},
                     const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(RANKSCOPE_BINARY), args);
    p.write(input);
    p.closeWriteChannel();
    CliRun r;
    if (!p.waitForFinished(60000)) return r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}
