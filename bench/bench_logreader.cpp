// Indexes a synthetic per-rank log of realistic line mix (Python logging, glog, NCCL INFO/COLL,
// tracebacks) and prints MB/s (wall and per CPU-second of the reading thread), lines/s and the
// resident memory the result adds per line, best of three runs, next to a bare memchr line split
// of the same bytes; then the whole path a load takes per log file (read from a file in the page
// cache, cleaned, indexed, and its lines scanned by the log signatures, as the analysis does).
// Then a digest of what was read (line offsets, facts with their fields, steps, exceptions), to
// compare two versions of the reader: equal digests, equal results.
// Usage: bench_logreader [megabytes, default 200] [--whole: only the whole path, e.g. to profile]
//        bench_logreader --digest FILE...: only the digest of each file, read as a per-rank log
//        and as a combined one
#include "bench/measure.h"
#include "model/kb/signatureset.h"
#include "model/trace/logreader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTemporaryFile>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <unistd.h>

using namespace rankscope;

namespace {

struct Timing {
    double wall = 1e30;
    double cpu = 1e30;
};

template <typename Fn> Timing bestOfThree(Fn&& fn)
{
    Timing best;
    for (int run = 0; run < 3; ++run) {
        QElapsedTimer timer;
        timer.start();
        const double cpu0 = threadCpuSeconds();
        fn();
        best.cpu = std::min(best.cpu, threadCpuSeconds() - cpu0);
        best.wall = std::min(best.wall, timer.nsecsElapsed() / 1e9);
    }
    return best;
}

// Resident set size of this process (/proc/self/statm), in bytes.
qint64 residentBytes()
{
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return qint64(resident) * sysconf(_SC_PAGESIZE);
}

// FNV-1a over what a read returned.
struct Digest {
    std::uint64_t h = 1469598103934665603ull;
    void add(const void* data, std::size_t n)
    {
        for (std::size_t k = 0; k < n; ++k) {
            h ^= static_cast<const unsigned char*>(data)[k];
            h *= 1099511628211ull;
        }
    }
    void add(std::string_view s)
    {
        add(s.data(), s.size());
        add(std::int64_t(s.size()));
    }
    void add(std::int64_t v) { add(&v, sizeof v); }
};

std::uint64_t digestOf(const LogReader::Result& r)
{
    Digest d;
    d.add(std::string_view(r.message.toStdString()));
    for (const RankLog& s : r.streams) {
        d.add(s.rank.value_or(-2));
        d.add(std::string_view(s.host));
        d.add(s.worldSize.value_or(-1));
        d.add(s.lineCount());
        for (int i = 0; i < s.lineCount(); ++i) {
            d.add(s.lineOffset(i));
            d.add(s.lineNumber(i));
            d.add(s.timestampNs(i));
        }
        for (const LogFact& f : s.facts()) {
            d.add(std::int64_t(f.kind));
            d.add(f.line);
            for (const auto& [k, v] : f.fields()) {
                d.add(std::string_view(k));
                d.add(std::string_view(v));
            }
        }
        for (const LogStep& st : s.steps()) {
            d.add(st.step);
            d.add(st.line);
        }
        for (const LogException& e : s.exceptions()) {
            d.add(e.firstLine);
            d.add(e.lastLine);
            d.add(std::string_view(e.text()));
            for (const LogException::Frame& f : e.frames) {
                d.add(std::string_view(f.file));
                d.add(f.line);
                d.add(std::string_view(f.function));
            }
        }
    }
    return d.h;
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    if (argc > 2 && QByteArray(argv[1]) == "--digest") {
        for (int k = 2; k < argc; ++k) {
            const QString path = QString::fromLocal8Bit(argv[k]);
            std::size_t facts = 0;
            for (const bool combined : {false, true}) {
                const LogReader::Result r =
                    LogReader::readFile(path, QStringLiteral("x.log"), 0, 0, combined);
                for (const RankLog& s : r.streams)
                    facts += s.facts().size();
                std::printf("%s %s: %016llx\n", argv[k], combined ? "combined" : "per-rank",
                            static_cast<unsigned long long>(digestOf(r)));
            }
            std::printf("%s: %zu facts\n", argv[k], facts);
        }
        return 0;
    }
    const qsizetype megabytes = argc > 1 ? QByteArray(argv[1]).toLongLong() : 200;
    const bool wholeOnly = argc > 2 && QByteArray(argv[2]) == "--whole";
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
    const double mb = log.size() / 1e6;

    qint64 splitLines = 0;
    if (!wholeOnly) {
        const Timing split = bestOfThree([&] {
            splitLines = 0;
            const char* p = log.constData();
            const char* end = p + log.size();
            while (p < end) {
                const void* nl = std::memchr(p, '\n', std::size_t(end - p));
                p = nl ? static_cast<const char*>(nl) + 1 : end;
                ++splitLines;
            }
        });
        std::printf("memchr line split only: %.1f MB, %lld lines, %.0f MB/s wall, %.0f MB per "
                    "CPU-second\n",
                    mb, static_cast<long long>(splitLines), mb / split.wall, mb / split.cpu);

        for (bool combined : {false, true}) {
            qint64 lines = 0;
            std::size_t facts = 0;
            double indexBytesPerLine = 0;
            const Timing t = bestOfThree([&] {
                const qint64 rssBefore = residentBytes();
                const LogReader::Result r =
                    LogReader::read(log, QStringLiteral("bench.log"), 0, 0, combined);
                // What the result holds beyond the log's bytes (shared, not copied): the index and
                // the facts, as resident memory grew (the kernel's count, pages touched).
                const qint64 rssAfter = residentBytes();
                lines = 0;
                facts = 0;
                for (const RankLog& s : r.streams) {
                    lines += s.lineCount();
                    facts += s.facts().size() + s.steps().size();
                }
                indexBytesPerLine =
                    double(rssAfter - rssBefore) / double(std::max<qint64>(lines, 1));
            });
            std::printf(
                "%s: %.1f MB in %.2f s wall (%.2f s CPU) = %.0f MB/s wall, %.0f MB per "
                "CPU-second, %.2f M lines/s, %zu facts+steps, resident growth %.1f bytes/line\n",
                combined ? "combined (tag split)" : "per-rank", mb, t.wall, t.cpu, mb / t.wall,
                mb / t.cpu, lines / 1e6 / t.wall, facts, indexBytesPerLine);
        }
    }

    // The whole path of one per-rank log file in a load.
    QTemporaryFile file;
    if (!file.open() || file.write(log) != log.size() || !file.flush()) {
        std::fprintf(stderr, "cannot write a temporary file\n");
        return 1;
    }
    const SignatureSet& signatures = SignatureSet::builtin();
    qsizetype hits = 0;
    double scanCpu = 1e30;
    const Timing whole = bestOfThree([&] {
        const LogReader::Result r =
            LogReader::readFile(file.fileName(), QStringLiteral("bench.log"), 0, 0, false);
        const double cpu0 = threadCpuSeconds();
        hits = 0;
        for (const RankLog& s : r.streams)
            hits +=
                signatures
                    .scanLines({s.lineCount(), [&s](qsizetype i) { return s.lineBytes(int(i)); },
                                s.linesBytes(0, s.lineCount())})
                    .size();
        scanCpu = std::min(scanCpu, threadCpuSeconds() - cpu0);
    });
    std::printf(
        "file read + index + signature scan: %.1f MB in %.2f s wall (%.2f s CPU) = %.0f "
        "MB/s wall, %.0f MB per CPU-second (the scan alone %.2f s CPU), %lld signature hits\n",
        mb, whole.wall, whole.cpu, mb / whole.wall, mb / whole.cpu, scanCpu,
        static_cast<long long>(hits));
    return 0;
}
