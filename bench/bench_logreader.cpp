// Indexes a synthetic per-rank log of realistic line mix (Python logging, glog, NCCL INFO/COLL,
// tracebacks) and prints MB/s, lines/s and index bytes per line.
// Usage: bench_logreader [megabytes, default 200]
#include "model/trace/logreader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <cstdio>

using namespace rankscope;

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const qsizetype megabytes = argc > 1 ? QByteArray(argv[1]).toLongLong() : 200;
    const QByteArray block =
        "2026-12-02 13:41:34.916 [rank0] INFO train: step 12 loss 33.91161 avg_loss 33.10142\n"
        "I20261202 13:35:55.418524 28405 reducer.cpp:126] Reducer initialized with "
        "bucket_bytes_cap_\n"
        "node7:12345:12345 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f00 recvbuff 0x7f00 "
        "count 6792 datatype 7 op 0 root 0 comm 0x55d5c8a0 [nranks=8] stream 0x5600\n"
        "node7:12345:12400 [0] NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7\n"
        "2026-12-02 13:41:34.917 [rank0] INFO torch.nn.parallel.distributed: Reducer buckets have "
        "been rebuilt in this iteration.\n"
        "some plain output line of a training script without anything of note in it at all\n";
    QByteArray log;
    log.reserve(megabytes * 1024 * 1024 + block.size());
    while (log.size() < megabytes * 1024 * 1024)
        log.append(block);
    for (bool split : {false, true}) {
        QElapsedTimer timer;
        timer.start();
        const LogReader::Result r = LogReader::read(log, QStringLiteral("bench.log"), 0, 0, split);
        const double seconds = timer.nsecsElapsed() / 1e9;
        qint64 lines = 0;
        std::size_t facts = 0;
        for (const RankLog& s : r.streams) {
            lines += s.lineCount();
            facts += s.facts().size() + s.steps().size();
        }
        std::printf("%s: %.1f MB in %.2f s = %.0f MB/s, %.2f M lines/s, %zu facts+steps, "
                    "index %d bytes/line (offsets, number, timestamp)\n",
                    split ? "combined (tag split)" : "per-rank", log.size() / 1e6, seconds,
                    log.size() / 1e6 / seconds, lines / 1e6 / seconds, facts,
                    int(8 + 8 + 4 + 8 + 1));
    }
    return 0;
}
