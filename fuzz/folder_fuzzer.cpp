// libFuzzer harness for a whole-folder load (discovery, every reader, the analysis, the
// auto-checks), with small per-load budgets for some inputs: the input is cut into files at each
// 0x1e byte and written into a fresh folder under the names a job leaves behind; loading it must
// give every file a status, never a crash.
#include "model/analysisreport.h"
#include "model/tracesession.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdlib>
#include <iterator>

using namespace rankscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const char* const names[] = {
        "rank0.pt.trace.json", "rank1.log",           "launcher.log",          "nccl_trace_rank_0",
        "rank1.error.json",    "rank2.pt.trace.json", "horovod_timeline.json", "rank3.log"};
    const QByteArray input(reinterpret_cast<const char*>(data), qsizetype(size));
    const QList<QByteArray> parts = input.split('\x1e'); // cheap for the fuzzer to find
    QTemporaryDir dir;
    if (!dir.isValid()) return 0;
    const int files = int(std::min<qsizetype>(parts.size(), qsizetype(std::size(names))));
    for (int k = 0; k < files; ++k) {
        QFile f(QDir(dir.path()).filePath(QLatin1String(names[k])));
        if (!f.open(QIODevice::WriteOnly) || f.write(parts[k]) != parts[k].size()) return 0;
    }
    LoadOptions options;
    options.buildLaneLods = (size & 1) != 0;
    if (size & 2) {
        // Small per-load budgets, so that the traces and dumps share them out (LoadShare).
        options.traceBudget.maxEventsPerLoad = std::int64_t(size % 13);
        options.traceBudget.maxInflatedBytesPerLoad = std::int64_t(size % 4099);
        options.dumpBudget.maxEntriesPerLoad = std::int64_t(size % 7);
    }
    const SessionPtr session = loadSession(dir.path(), {}, {}, options);
    if (!session || session->cancelled) std::abort();
    if (session->folder.sources().size() > files) std::abort();
    (void)AnalysisReport::toJson(*session, session->analysis).dump();
    return 0;
}
