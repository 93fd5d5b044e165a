// libFuzzer harness for the log reader: indexes the input as a combined launcher log and as a
// per-rank log, then touches every line, fact and exception.
#include "model/trace/logreader.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    for (bool split : {false, true}) {
        const rankscope::LogReader::Result r =
            rankscope::LogReader::read(bytes, QStringLiteral("fuzz.log"), 0, 0, split);
        if (r.streams.empty()) std::abort();
        qsizetype total = 0;
        for (const rankscope::RankLog& log : r.streams) {
            for (int i = 0; i < log.lineCount(); ++i) {
                total += log.lineText(i).size();
                if (log.indexOfLineNumber(log.lineNumber(i)) != i) std::abort();
            }
            for (const rankscope::LogException& e : log.exceptions())
                if (e.firstLine < 0 || e.lastLine >= log.lineCount()) std::abort();
            for (const rankscope::LogFact& f : log.facts())
                if (f.line < 0 || f.line >= log.lineCount()) std::abort();
        }
        (void)total;
    }
    return 0;
}
