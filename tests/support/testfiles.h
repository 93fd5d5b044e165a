#pragma once

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTest>

// Writes a test's input file whole; a failed open or short write fails the calling test.
inline void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    QCOMPARE(f.write(bytes), bytes.size());
}
