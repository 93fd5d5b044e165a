// Trace-parsing benchmark: the Kineto reader's hot path on one thread, from memory, so that
// neither the disk nor gzip is timed (bench/ingest_bench reads files). For bench/kinetogen's two
// profiles, Lean (about 200 bytes of text per stored event, 133 per trace event) and Full (334 and
// 223), it prints MB, trace events and stored events per CPU-second of KinetoReader::readBytes,
// best of --runs. First it reads a generated Lean file of about --memory-events stored events
// through KinetoReader::readFile (the streaming window, as the app reads) and prints the
// resident bytes per stored event after reading and at the peak.
#include "bench/kinetogen.h"
#include "bench/measure.h"
#include "model/trace/kinetoreader.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

using namespace rankscope;
namespace fs = std::filesystem;

namespace {

// Every object kinetogen writes into traceEvents starts with its "ph".
std::int64_t traceObjects(const std::string& text)
{
    std::int64_t n = 0;
    for (std::size_t at = 0; (at = text.find("{\"ph\"", at)) != std::string::npos; ++at)
        ++n;
    return n;
}

std::string slurp(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void throughput(const std::string& dir, bench::ArgsProfile profile, double mb, int runs)
{
    const std::string path = dir + "/throughput.json";
    bench::writeSyntheticKineto(path, std::int64_t(mb * 1e6), 0, profile);
    const std::string text = slurp(path);
    fs::remove(path);
    const std::int64_t objects = traceObjects(text);
    std::int64_t stored = 0;
    {
        EventStore store;
        stored = KinetoReader::readBytes(text, store, {}).events;
    }
    std::printf("%s: %.0f MB, %lld trace events (%.0f bytes each), %lld stored events (%.0f bytes "
                "of text each)\n",
                profile == bench::ArgsProfile::Lean ? "lean" : "full", double(text.size()) / 1e6,
                static_cast<long long>(objects), double(text.size()) / double(objects),
                static_cast<long long>(stored), double(text.size()) / double(stored));
    double best = 1e300;
    KinetoReadResult result;
    for (int r = 0; r < runs; ++r) {
        EventStore store;
        const double c0 = threadCpuSeconds();
        result = KinetoReader::readBytes(text, store, {});
        best = std::min(best, threadCpuSeconds() - c0);
    }
    if (result.status != SourceStatus::Ok)
        std::fprintf(stderr, "read error: %s\n", result.message.c_str());
    std::printf("  KinetoReader::readBytes: %7.1f MB per CPU-second, %5.2f M trace "
                "events per CPU-second, %5.2f M stored events per CPU-second\n",
                double(text.size()) / 1e6 / best, double(objects) / 1e6 / best,
                double(result.events) / 1e6 / best);
}

void residentBytes(const std::string& dir, std::int64_t events)
{
    // Lean traces hold about 200 bytes of text per stored event (flows are not stored).
    const std::string path = dir + "/memory.json";
    const std::int64_t bytes = events * 200;
    bench::writeSyntheticKineto(path, bytes, 0, bench::ArgsProfile::Lean);
    const std::int64_t baseKb = statusKb("VmRSS:");
    EventStore store;
    const KinetoReadResult r = KinetoReader::readFile(path, store, {});
    const std::int64_t nowKb = statusKb("VmRSS:");
    const std::int64_t peakKb = statusKb("VmHWM:");
    fs::remove(path);
    if (r.status != SourceStatus::Ok) std::fprintf(stderr, "read error: %s\n", r.message.c_str());
    const double n = double(r.events);
    std::printf("memory, %.2f M stored events, %zu lanes, %zu flows (%.2f GB file): resident %.1f "
                "bytes per stored event after reading, %.1f at the peak (process before "
                "reading: %.1f MB)\n",
                n / 1e6, store.lanes.size(), store.flows.size(), double(bytes) / 1e9,
                double(nowKb - baseKb) * 1024 / n, double(peakKb - baseKb) * 1024 / n,
                double(baseKb) / 1e3);
}

} // namespace

int main(int argc, char** argv)
{
    double mb = 250;
    int runs = 3;
    std::int64_t memoryEvents = 10'000'000;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc)
            mb = std::stod(argv[++i]);
        else if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::stoi(argv[++i]));
        else if (a == "--memory-events" && i + 1 < argc)
            memoryEvents = std::stoll(argv[++i]);
        else {
            std::fprintf(stderr,
                         "usage: scan_bench [--mb 250] [--runs 3] [--memory-events 10000000]\n");
            return 2;
        }
    }
    const std::string dir =
        (fs::temp_directory_path() / ("rankscope-scan-" + std::to_string(::getpid()))).string();
    fs::create_directories(dir);
    // Memory first, while the process has allocated nothing else.
    if (memoryEvents > 0) residentBytes(dir, memoryEvents);
    throughput(dir, bench::ArgsProfile::Lean, mb, runs);
    throughput(dir, bench::ArgsProfile::Full, mb, runs);
    fs::remove_all(dir);
    return 0;
}
