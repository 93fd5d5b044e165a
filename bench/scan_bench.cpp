// Trace-parsing benchmark: the Kineto reader's hot path on one thread, from memory, so that
// neither the disk nor gzip is timed (bench/ingest_bench reads files). For bench/kinetogen's
// three profiles, Lean (about 200 bytes of text per stored event, 134 per trace event), Full (335
// and 224) and PyTorch (PyTorch's own layout and args), it prints MB, trace events and stored
// events per CPU-second of KinetoReader::readBytes, best of --runs. First it reads a generated Lean
// file of about --memory-events stored events through KinetoReader::readFile (the streaming window,
// as the app reads) and prints the resident bytes per stored event after reading and at the peak.
// `scan_bench --digest FILE...` reads each file through KinetoReader::readFile and prints a hash
// of everything the read produced (result fields, string table, lanes with every column, flows,
// collectives), to check that a change of the reader keeps its output identical.
// `scan_bench --write FILE --mb MB [--full | --pytorch]` writes one bench/kinetogen file (Lean
// unless told), for measuring a single read of it (callgrind over `--digest FILE`).
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
#include <type_traits>
#include <unistd.h>

using namespace rankscope;
namespace fs = std::filesystem;

namespace {

// Every object kinetogen writes into traceEvents has one "ph", and nothing else has.
std::int64_t traceObjects(const std::string& text)
{
    std::int64_t n = 0;
    for (std::size_t at = 0; (at = text.find("\"ph\":", at)) != std::string::npos; ++at)
        ++n;
    return n;
}

const char* profileName(bench::ArgsProfile profile)
{
    switch (profile) {
    case bench::ArgsProfile::Lean:
        return "lean";
    case bench::ArgsProfile::Full:
        return "full";
    case bench::ArgsProfile::PyTorch:
        return "pytorch";
    }
    return "";
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
                profileName(profile), double(text.size()) / 1e6, static_cast<long long>(objects),
                double(text.size()) / double(objects), static_cast<long long>(stored),
                double(text.size()) / double(stored));
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

// FNV-1a over everything fed in; the order of the fields is part of the digest.
class Digest {
public:
    void bytes(const void* data, std::size_t n)
    {
        const auto* b = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i)
            m_h = (m_h ^ b[i]) * 0x100000001B3ull;
    }
    template <typename T> void value(const T& v) { bytes(&v, sizeof v); }
    void text(std::string_view s)
    {
        value(s.size());
        bytes(s.data(), s.size());
    }
    template <typename T> void column(const std::vector<T>& v)
    {
        value(v.size());
        bytes(v.data(), v.size() * sizeof(T));
    }
    std::uint64_t hash() const { return m_h; }

private:
    std::uint64_t m_h = 0xCBF29CE484222325ull;
};

int digestFiles(int argc, char** argv, int first)
{
    for (int i = first; i < argc; ++i) {
        EventStore store;
        const KinetoReadResult r = KinetoReader::readFile(argv[i], store, {});
        Digest d;
        d.value(r.status);
        d.text(r.message);
        for (const std::int64_t v :
             {r.bytes, r.events, r.flows, r.counters, r.skipped, r.collectives,
              std::int64_t(r.worldSize), r.statedRank.value_or(-12345), std::int64_t(r.limit)})
            d.value(v);
        d.text(r.ncclVersion);
        d.text(r.backend);
        for (const auto& [name, size] : r.processGroupSizes) {
            d.text(name);
            d.value(size);
        }
        for (std::size_t s = 0; s < store.strings.size(); ++s)
            d.text(store.strings.view(StringId(s)));
        for (const Lane& l : store.lanes) {
            Lane::forEachHeaderField(
                [&d](const char*, const auto& field) {
                    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, std::string>)
                        d.text(field);
                    else
                        d.value(field);
                },
                l);
            d.column(l.startNs);
            d.column(l.endNs);
            Lane::forEachEventColumn([&d](const char*, const auto& column) { d.column(column); },
                                     l);
            d.column(l.unfinished);
        }
        for (const FlowLink& f : store.flows)
            FlowLink::forEachField(
                f, [&d](const char*, const auto& field) { d.value(std::int64_t(field)); });
        for (const CollectiveRecord& c : store.collectives) {
            // The group's ranks stand for its rank list id (hashed after the other fields).
            CollectiveRecord::forEachField(c, [&d](std::string_view name, const auto& field) {
                if (name != "groupRanks") d.value(std::int64_t(field));
            });
            for (const int rank : store.rankLists.ranks(c.groupRanks))
                d.value(rank);
        }
        std::printf("%016llx %s %lld events %zu lanes %zu flows %zu collectives %s\n",
                    static_cast<unsigned long long>(d.hash()),
                    sourceStatusName(r.status).toStdString().c_str(),
                    static_cast<long long>(r.events), store.lanes.size(), store.flows.size(),
                    store.collectives.size(), argv[i]);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    double mb = 250;
    int runs = 3;
    std::int64_t memoryEvents = 10'000'000;
    std::string writePath;
    bench::ArgsProfile writeProfile = bench::ArgsProfile::Lean;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--mb" && i + 1 < argc)
            mb = std::stod(argv[++i]);
        else if (a == "--runs" && i + 1 < argc)
            runs = std::max(1, std::stoi(argv[++i]));
        else if (a == "--digest")
            return digestFiles(argc, argv, i + 1);
        else if (a == "--memory-events" && i + 1 < argc)
            memoryEvents = std::stoll(argv[++i]);
        else if (a == "--write" && i + 1 < argc)
            writePath = argv[++i];
        else if (a == "--full")
            writeProfile = bench::ArgsProfile::Full;
        else if (a == "--pytorch")
            writeProfile = bench::ArgsProfile::PyTorch;
        else {
            std::fprintf(stderr,
                         "usage: scan_bench [--mb 250] [--runs 3] [--memory-events 10000000] | "
                         "--digest FILE... | --write FILE --mb MB [--full | --pytorch]\n");
            return 2;
        }
    }
    if (!writePath.empty()) {
        bench::writeSyntheticKineto(writePath, std::int64_t(mb * 1e6), 0, writeProfile);
        return 0;
    }
    const std::string dir =
        (fs::temp_directory_path() / ("rankscope-scan-" + std::to_string(::getpid()))).string();
    fs::create_directories(dir);
    // Memory first, while the process has allocated nothing else.
    if (memoryEvents > 0) residentBytes(dir, memoryEvents);
    throughput(dir, bench::ArgsProfile::Lean, mb, runs);
    throughput(dir, bench::ArgsProfile::Full, mb, runs);
    throughput(dir, bench::ArgsProfile::PyTorch, mb, runs);
    fs::remove_all(dir);
    return 0;
}
