// Ingest benchmark: generates >= 1 GB of synthetic Kineto JSON into a temporary folder, then
// reads it with the trace reader on 1 and 2 threads, and compares the reader's scanner with
// nlohmann_json's SAX parser on the same bytes. Prints MB/s, events/s and peak RSS per event.
#include "bench/kinetogen.h"
#include "bench/measure.h"
#include "model/trace/kinetoreader.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

using namespace rankscope;
namespace fs = std::filesystem;

namespace {

double seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

struct Run {
    double cpuSecs = 0; // summed over the reading threads: the machine is shared
    double secs = 0;
    std::int64_t events = 0;
    std::int64_t bytes = 0;
};

// Reads `files` on `threads` threads into per-file stores, then merges them into `into`.
Run readAll(const std::vector<std::string>& files, int threads, EventStore& into)
{
    std::vector<EventStore> stores(files.size());
    std::vector<KinetoReadResult> results(files.size());
    std::atomic<std::size_t> next{0};
    std::vector<double> cpu(std::size_t(threads), 0.0);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            const double c0 = threadCpuSeconds();
            for (std::size_t k; (k = next.fetch_add(1)) < files.size();) {
                // Named fields: a positional {k, k} would fill the budget, not the source index.
                KinetoReader::Options options;
                options.rank = int(k);
                options.sourceIndex = int(k);
                results[k] = KinetoReader::readFile(files[k], stores[k], options);
            }
            cpu[std::size_t(t)] = threadCpuSeconds() - c0;
        });
    for (auto& t : pool)
        t.join();
    for (auto& s : stores)
        into.merge(std::move(s));
    Run r;
    r.secs = seconds(t0);
    for (double c : cpu)
        r.cpuSecs += c;
    for (const auto& res : results) {
        if (res.status != SourceStatus::Ok)
            std::fprintf(stderr, "read error: %s\n", res.message.c_str());
        r.events += res.events;
        r.bytes += res.bytes;
    }
    return r;
}

// The least work a SAX consumer can do: count the objects inside traceEvents.
struct CountingSax : nlohmann::json_sax<nlohmann::json> {
    int depth = 0;
    std::int64_t events = 0;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override
    {
        if (++depth == 3) ++events;
        return true;
    }
    bool key(string_t&) override { return true; }
    bool end_object() override
    {
        --depth;
        return true;
    }
    bool start_array(std::size_t) override
    {
        ++depth;
        return true;
    }
    bool end_array() override
    {
        --depth;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override
    {
        return false;
    }
};

} // namespace

int main(int argc, char** argv)
{
    double gb = 1.0;
    int fileCount = 4;
    std::string dir;
    bool keep = false;
    bool oneRun = false; // only the 1-thread read, for profiling
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--gb" && i + 1 < argc)
            gb = std::stod(argv[++i]);
        else if (a == "--files" && i + 1 < argc)
            fileCount = std::stoi(argv[++i]);
        else if (a == "--dir" && i + 1 < argc)
            dir = argv[++i];
        else if (a == "--keep")
            keep = true;
        else if (a == "--one-run")
            oneRun = true;
        else {
            std::fprintf(
                stderr,
                "usage: ingest_bench [--gb 1.0] [--files 4] [--dir /tmp/x] [--keep] [--one-run]\n");
            return 2;
        }
    }
    if (dir.empty())
        dir = (fs::temp_directory_path() / ("rankscope-bench-" + std::to_string(::getpid())))
                  .string();
    fs::create_directories(dir);
    std::vector<std::string> files;
    auto t0 = std::chrono::steady_clock::now();
    std::int64_t written = 0, totalBytes = 0;
    for (int k = 0; k < fileCount; ++k) {
        const std::string path = dir + "/rank" + std::to_string(k) + ".pt.trace.json";
        if (!fs::exists(path))
            written += bench::writeSyntheticKineto(path, std::int64_t(gb * 1e9 / fileCount), k);
        files.push_back(path);
        totalBytes += std::int64_t(fs::file_size(path));
    }
    std::printf("synthetic: %d files, %.2f GB in %s (generated in %.1f s)\n", fileCount,
                totalBytes / 1e9, dir.c_str(), seconds(t0));
    const double mb = totalBytes / 1e6;

    const std::int64_t baseKb = statusKb("VmRSS:");
    {
        EventStore store;
        const Run r = readAll(files, 1, store);
        const std::int64_t peakKb = statusKb("VmHWM:");
        std::printf("scanner, 1 thread : %8.1f MB/s wall, %8.1f MB per CPU-second; %6.2f M "
                    "events/s wall, %6.2f M per CPU-second (%lld events, %.2f s)\n",
                    mb / r.secs, mb / r.cpuSecs, r.events / r.secs / 1e6,
                    r.events / r.cpuSecs / 1e6, static_cast<long long>(r.events), r.secs);
        std::printf("peak RSS: %.1f MB total, %.1f bytes per stored event (%.1f excluding the "
                    "%.1f MB before reading)\n",
                    peakKb / 1e3, peakKb * 1024.0 / double(r.events),
                    (peakKb - baseKb) * 1024.0 / double(r.events), baseKb / 1e3);
        std::printf("store: %zu lanes, %zu collectives, %zu flows\n", store.lanes.size(),
                    store.collectives.size(), store.flows.size());
    }
    if (oneRun) return 0;
    {
        EventStore store;
        const Run r = readAll(files, 2, store);
        std::printf("scanner, 2 threads: %8.1f MB/s wall, %8.1f MB per CPU-second per thread; "
                    "%6.2f M events/s wall\n",
                    mb / r.secs, mb / r.cpuSecs, r.events / r.secs / 1e6);
    }
    {
        // Same bytes from memory for both parsers, so only the parsing differs.
        std::ifstream in(files.front(), std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
        double c1 = threadCpuSeconds();
        EventStore store;
        const KinetoReadResult res = KinetoReader::readBytes(text, store, {});
        const double scan = threadCpuSeconds() - c1;
        c1 = threadCpuSeconds();
        CountingSax sax;
        nlohmann::json::sax_parse(text, &sax);
        const double saxSecs = threadCpuSeconds() - c1;
        std::printf("one file from memory (%.0f MB), MB per CPU-second: scanner + event store %.1f "
                    "(%lld events), nlohmann SAX counting objects only %.1f (%lld objects)\n",
                    text.size() / 1e6, text.size() / 1e6 / scan, static_cast<long long>(res.events),
                    text.size() / 1e6 / saxSecs, static_cast<long long>(sax.events));
    }
    if (!keep) fs::remove_all(dir);
    (void)written;
    return 0;
}
