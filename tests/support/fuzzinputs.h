#pragma once

#include <QDir>
#include <QFile>
#include <QString>
#include <utility>
#include <vector>

namespace rankscope::test {

// The inputs fuzz/run keeps for one harness (tests/data/fuzz/<harness>/): the crashers it found
// and the edge cases it starts from, each replayed by that reader's test. Name, bytes.
inline std::vector<std::pair<QString, QByteArray>> fuzzInputs(const char* harness)
{
    const QDir dir(QStringLiteral(RANKSCOPE_TEST_DATA "/fuzz/") + QLatin1String(harness));
    std::vector<std::pair<QString, QByteArray>> out;
    for (const QString& name : dir.entryList(QDir::Files)) {
        QFile f(dir.filePath(name));
        if (f.open(QIODevice::ReadOnly)) out.emplace_back(name, f.readAll());
    }
    return out;
}

} // namespace rankscope::test
