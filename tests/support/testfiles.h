#pragma once

#include <QByteArray>
#include <QFile>
#include <QRegularExpression>
#include <QString>
#include <QTest>
#include <set>

// Writes a test's input file whole; a failed open or short write fails the calling test.
inline void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}

// The master ports a real run's log text names, in the forms its lines print them
// ("master=127.0.0.1:57775", "MASTER_PORT=54645"): the truth of which launch a file belongs to.
inline std::set<QString> masterPortsIn(const QString& text)
{
    static const QRegularExpression port(QStringLiteral("(?:master=[^\\s:]+:|MASTER_PORT=)(\\d+)"));
    std::set<QString> ports;
    for (auto m = port.globalMatch(text); m.hasNext();)
        ports.insert(m.next().captured(1));
    return ports;
}
