// .json.gz benchmark: inflates the same gzip files with zlib's streaming inflate (what the
// Kineto reader used before) and ISA-L's igzip through GzipInput (what it uses now), one thread
// each, then reads the largest file end to end with the Kineto reader, plain and gzip. Prints MB
// of inflated output per CPU-second and per wall second. (libdeflate was measured beside them
// and dropped: slower than ISA-L and no streaming API; BENCHMARKS.md.)
//   gzip_bench [--mb 400] [--dir /tmp/x] [--keep] [FILE.json.gz ...]
// Without files it writes a synthetic Kineto trace of --mb MB (bench/kinetogen) and gzips it at
// level 6 (gzip's default; PyTorch's gzip.open writes level 9, which inflates at the same speed).
// Last, an event click on the largest file: its details read back through the checkpoints the
// reader recorded (CPU ms and MB inflated per click, over events spread through the file), and
// once from the file's start for comparison.
#include "bench/kinetogen.h"
#include "bench/measure.h"
#include "model/trace/gzipinput.h"
#include "model/trace/kinetoreader.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

using namespace rankscope;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kOut = std::size_t(4) << 20; // the Kineto reader's read size
constexpr std::size_t kIn = std::size_t(256) << 10;

double processCpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// zlib's inflate as gzread drove it: 256 KB of input at a time, every member.
std::int64_t inflateZlib(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY);
    std::vector<unsigned char> in(kIn), out(kOut);
    z_stream z{};
    inflateInit2(&z, 16 + MAX_WBITS);
    std::int64_t total = 0;
    bool more = true;
    while (more) {
        if (z.avail_in == 0) {
            const ssize_t got = ::read(fd, in.data(), in.size());
            if (got <= 0) break;
            z.next_in = in.data();
            z.avail_in = uInt(got);
        }
        z.next_out = out.data();
        z.avail_out = uInt(out.size());
        const int rc = inflate(&z, Z_NO_FLUSH);
        total += std::int64_t(out.size() - z.avail_out);
        if (rc == Z_STREAM_END)
            more = inflateReset(&z) == Z_OK;
        else if (rc != Z_OK && rc != Z_BUF_ERROR)
            more = false;
    }
    inflateEnd(&z);
    ::close(fd);
    return total;
}

std::int64_t inflateIsal(const std::string& path)
{
    GzipInput in(::open(path.c_str(), O_RDONLY), GzipInput::Descriptor::Owned);
    std::vector<char> out(kOut);
    std::int64_t total = 0;
    for (std::int64_t got; (got = in.read(out.data(), out.size())) > 0;)
        total += got;
    return total;
}

// Best of three, on this thread: output MB per CPU-second.
double inflateRate(const std::function<std::int64_t()>& inflate, std::int64_t* bytes)
{
    double best = 0;
    for (int run = 0; run < 3; ++run) {
        const double c0 = threadCpuSeconds();
        *bytes = inflate();
        best = std::max(best, *bytes / 1e6 / (threadCpuSeconds() - c0));
    }
    return best;
}

struct Ingest {
    double wall = 0, cpu = 0;
    double parserCpu = 0; // the calling thread's; the rest of `cpu` is the inflate thread's
    KinetoReadResult result;
};

Ingest ingest(const std::string& path)
{
    Ingest best;
    for (int run = 0; run < 3; ++run) {
        EventStore store;
        const double w0 = now(), c0 = processCpuSeconds(), t0 = threadCpuSeconds();
        KinetoReadResult r = KinetoReader::readFile(path, store, {});
        const double wall = now() - w0, cpu = processCpuSeconds() - c0;
        const double parser = threadCpuSeconds() - t0;
        if (run == 0 || wall < best.wall) best = {wall, cpu, parser, std::move(r)};
    }
    return best;
}

// Writes `plain` gzipped at level 6 as one member.
void gzipFile(const std::string& plain, const std::string& gz)
{
    std::FILE* in = std::fopen(plain.c_str(), "rb");
    gzFile out = gzopen(gz.c_str(), "wb6");
    std::vector<char> buf(kOut);
    for (std::size_t got; (got = std::fread(buf.data(), 1, buf.size(), in)) > 0;)
        gzwrite(out, buf.data(), unsigned(got));
    gzclose(out);
    std::fclose(in);
}

// The details pane's read of one event (readEventDetails), as a click on the timeline runs it in
// a worker: 20 events at evenly spaced offsets through the file.
void clickLatency(const std::string& path)
{
    EventStore store;
    const KinetoReadResult r = KinetoReader::readFile(path, store, {});
    if (!r.gzipIndex) return;
    std::vector<std::int64_t> offsets;
    for (const Lane& lane : store.lanes)
        offsets.insert(offsets.end(), lane.sourceOffset.begin(), lane.sourceOffset.end());
    if (offsets.empty()) return;
    std::sort(offsets.begin(), offsets.end());
    std::vector<double> cpuMs;
    std::int64_t maxProduced = 0;
    double maxWallMs = 0;
    for (int k = 1; k <= 20; ++k) {
        const std::int64_t offset = offsets[(offsets.size() - 1) * std::size_t(k) / 20];
        std::int64_t produced = 0;
        const double w0 = now(), t0 = threadCpuSeconds();
        const bool ok = readEventDetails(path, offset, r.gzipIndex.get(), &produced).is_object();
        cpuMs.push_back((threadCpuSeconds() - t0) * 1e3);
        maxWallMs = std::max(maxWallMs, (now() - w0) * 1e3);
        maxProduced = std::max(maxProduced, produced);
        if (!ok) std::fprintf(stderr, "event at %lld not read back\n", (long long)offset);
    }
    std::sort(cpuMs.begin(), cpuMs.end());
    std::int64_t fromStart = 0;
    const double t0 = threadCpuSeconds();
    readEventDetails(path, offsets.back(), nullptr, &fromStart);
    const double startMs = (threadCpuSeconds() - t0) * 1e3;
    std::printf("event click (details read back), %zu checkpoints every %.0f MB:\n"
                "  20 events through the file: CPU median %.1f ms, max %.1f ms (wall max %.1f ms), "
                "at most %.1f MB inflated\n  last event from the file's start: CPU %.0f ms, "
                "%.0f MB inflated\n",
                r.gzipIndex->points.size(), r.gzipIndex->spacing / 1e6, cpuMs[cpuMs.size() / 2],
                cpuMs.back(), maxWallMs, maxProduced / 1e6, startMs, fromStart / 1e6);
}

} // namespace

int main(int argc, char** argv)
{
    double mb = 400;
    std::string dir;
    bool keep = false;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc)
            mb = std::stod(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--keep")
            keep = true;
        else if (!a.empty() && a[0] != '-')
            files.push_back(a);
        else {
            std::fprintf(
                stderr,
                "usage: gzip_bench [--mb 400] [--dir /tmp/x] [--keep] [FILE.json.gz ...]\n");
            return 2;
        }
    }
    std::string plain;
    if (files.empty()) {
        if (dir.empty())
            dir = (fs::temp_directory_path() / ("rankscope-gzip-" + std::to_string(::getpid())))
                      .string();
        fs::create_directories(dir);
        plain = dir + "/rank0.pt.trace.json";
        const std::string gz = plain + ".gz";
        if (!fs::exists(gz)) {
            const double t0 = now();
            bench::writeSyntheticKineto(plain, std::int64_t(mb * 1e6), 0);
            gzipFile(plain, gz);
            std::printf("synthetic: %.0f MB of Kineto JSON, %.0f MB gzipped (%.1f s)\n",
                        fs::file_size(plain) / 1e6, fs::file_size(gz) / 1e6, now() - t0);
        }
        files.push_back(gz);
    }

    std::printf("inflate, one thread, MB of output per CPU-second (best of 3):\n");
    std::printf("%-60s %9s %9s %9s\n", "file", "MB in", "zlib", "ISA-L");
    for (const std::string& f : files) {
        std::int64_t zBytes = 0, iBytes = 0;
        const double z = inflateRate([&] { return inflateZlib(f); }, &zBytes);
        const double i = inflateRate([&] { return inflateIsal(f); }, &iBytes);
        if (zBytes != iBytes)
            std::fprintf(stderr, "%s: inflated sizes differ: zlib %lld, ISA-L %lld\n", f.c_str(),
                         static_cast<long long>(zBytes), static_cast<long long>(iBytes));
        std::printf("%-60s %9.1f %9.0f %9.0f\n",
                    fs::path(f).filename().string().substr(0, 60).c_str(), fs::file_size(f) / 1e6,
                    z, i);
    }

    const std::string& largest = *std::max_element(files.begin(), files.end(),
                                                   [](const std::string& a, const std::string& b) {
                                                       return fs::file_size(a) < fs::file_size(b);
                                                   });
    const Ingest gz = ingest(largest);
    const double inflated = gz.result.bytes / 1e6;
    std::printf("Kineto reader, %s (%.0f MB inflated, %lld events), best of 3:\n",
                fs::path(largest).filename().c_str(), inflated,
                static_cast<long long>(gz.result.events));
    std::printf("  .json.gz: %7.1f MB/s wall, %7.1f MB per CPU-second, %.2f cores busy; CPU: "
                "parser thread %.2f s, inflate thread %.2f s\n",
                inflated / gz.wall, inflated / gz.cpu, gz.cpu / gz.wall, gz.parserCpu,
                gz.cpu - gz.parserCpu);
    if (!plain.empty()) {
        const Ingest p = ingest(plain);
        std::printf("  .json   : %7.1f MB/s wall, %7.1f MB per CPU-second, %.2f cores busy\n",
                    inflated / p.wall, inflated / p.cpu, p.cpu / p.wall);
    }
    clickLatency(largest);
    if (!dir.empty() && !keep) fs::remove_all(dir);
    return 0;
}
