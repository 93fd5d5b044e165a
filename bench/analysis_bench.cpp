// Cross-rank analysis on a large synthetic job: 1,024 ranks x 10,000 collectives (default),
// with per-rank clock skew, one straggler and one rank that never issues the last collective.
// Usage: analysis_bench [ranks] [collectives]
#include "model/analysis/analysiscontext.h"
#include "model/analysis/analyzer.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <tuple>

using namespace rankscope;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of this process: on a shared machine wall time mostly measures the neighbours.
double cpuSeconds()
{
    return double(std::clock()) / CLOCKS_PER_SEC;
}

EventStore build(int ranks, int collectives)
{
    EventStore s;
    const StringId op = s.strings.intern("all_reduce");
    const StringId pg = s.strings.intern("0");
    const StringId dtype = s.strings.intern("Float");
    const StringId kernel = s.strings.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const StringId gemm = s.strings.intern("sm80_xmma_gemm");
    constexpr int kPerStep = 10;
    std::vector<StringId> stepNames;
    for (int st = 0; st <= collectives / kPerStep; ++st)
        stepNames.push_back(s.strings.intern("ProfilerStep#" + std::to_string(st)));
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> jitter(0, 200'000);
    std::uniform_int_distribution<std::int64_t> skew(0, 50'000'000'000);
    const int straggler = ranks / 3;
    const int missing = ranks - 2;
    std::vector<std::int64_t> offset(static_cast<std::size_t>(ranks));
    for (auto& o : offset)
        o = skew(rng);
    s.collectives.reserve(std::size_t(ranks) * std::size_t(collectives));
    s.lanes.resize(std::size_t(ranks) * 2);
    // Reference-clock times per collective: each starts when the last rank arrives.
    std::vector<std::int64_t> arrive(static_cast<std::size_t>(ranks));
    std::int64_t t = 1'000'000'000;
    std::vector<std::vector<std::int64_t>> ends(static_cast<std::size_t>(ranks));
    for (int c = 0; c < collectives; ++c) {
        std::int64_t last = 0;
        for (int r = 0; r < ranks; ++r) {
            arrive[std::size_t(r)] = t + 1'000'000 + jitter(rng) + (r == straggler ? 6'000'000 : 0);
            last = std::max(last, arrive[std::size_t(r)]);
        }
        const std::int64_t end = last + 300'000;
        for (int r = 0; r < ranks; ++r) {
            if (r == missing && c == collectives - 1) continue;
            const bool open = c == collectives - 1;
            const std::int64_t o = offset[std::size_t(r)];
            CollectiveRecord rec;
            rec.rank = r;
            rec.op = op;
            rec.processGroupName = pg;
            rec.groupSize = ranks;
            rec.seq = c;
            rec.seqFromSource = true;
            rec.inNelems = rec.outNelems = 1 << 20;
            rec.dtype = dtype;
            rec.issueStartNs = arrive[std::size_t(r)] - 50'000 + o;
            rec.issueEndNs = rec.issueStartNs + 10'000;
            rec.execStartNs = arrive[std::size_t(r)] + o;
            rec.execEndNs = (open ? end + 600'000'000'000 : end) + o;
            rec.state =
                open ? CollectiveRecord::State::Started : CollectiveRecord::State::Completed;
            rec.step = c / kPerStep;
            rec.laneIndex = 2 * r + 1;
            Lane& gpu = s.lanes[std::size_t(2 * r + 1)];
            rec.eventIndex = std::int64_t(gpu.size());
            // A compute kernel before the collective, then the collective's kernel.
            for (auto [a, b, name, cat] :
                 {std::tuple{t + o + 100'000, arrive[std::size_t(r)] + o - 100'000, gemm,
                             EventCategory::Kernel},
                  std::tuple{rec.execStartNs, rec.execEndNs, kernel, EventCategory::CommKernel}}) {
                gpu.startNs.push_back(a);
                gpu.endNs.push_back(b);
                gpu.nameId.push_back(name);
                gpu.category.push_back(cat);
                gpu.depth.push_back(0);
                gpu.sourceOffset.push_back(0);
            }
            s.collectives.push_back(rec);
            ends[std::size_t(r)].push_back(rec.execEndNs);
        }
        t = end + 50'000;
    }
    for (int r = 0; r < ranks; ++r) {
        Lane& cpu = s.lanes[std::size_t(2 * r)];
        Lane& gpu = s.lanes[std::size_t(2 * r + 1)];
        cpu.rank = gpu.rank = r;
        cpu.sourceIndex = gpu.sourceIndex = r;
        gpu.kind = LaneKind::GpuStream;
        const auto& e = ends[std::size_t(r)];
        std::int64_t stepStart = gpu.startNs.empty() ? 0 : gpu.startNs.front() - 100'000;
        for (std::size_t i = kPerStep - 1; i < e.size(); i += kPerStep) {
            cpu.startNs.push_back(stepStart);
            cpu.endNs.push_back(e[i] + 10'000);
            cpu.nameId.push_back(stepNames[i / kPerStep]);
            cpu.category.push_back(EventCategory::UserAnnotation);
            cpu.depth.push_back(0);
            cpu.sourceOffset.push_back(0);
            stepStart = e[i] + 20'000;
        }
    }
    return s;
}

} // namespace

int main(int argc, char** argv)
{
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
    const int collectives = argc > 2 ? std::atoi(argv[2]) : 10000;
    auto t0 = std::chrono::steady_clock::now();
    const EventStore store = build(ranks, collectives);
    std::printf(
        "synthetic store: %d ranks x %d collectives = %zu records, %lld events (%.2f s to build)\n",
        ranks, collectives, store.collectives.size(), static_cast<long long>(store.eventCount()),
        secondsSince(t0));
    std::vector<std::string> paths;
    for (int r = 0; r < ranks; ++r)
        paths.push_back("rank" + std::to_string(r) + ".json");

    t0 = std::chrono::steady_clock::now();
    const auto groups = CollectiveMatcher::match(store);
    const double match = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    AnalysisContext ctx(store, paths);
    const double context = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    ctx.clock = ClockAligner::align(store, groups, {});
    const double align = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    const auto hang = HangDetector::detect(ctx, groups);
    const double hangS = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    const auto straggler = StragglerDetector::detect(ctx, groups);
    const double stragglerS = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    const auto breakdown = TimeBreakdown::compute(store);
    const double breakdownS = secondsSince(t0);
    std::printf(
        "match %.3f s | context+steps %.3f s | clocks %.3f s | hang %.3f s | stragglers %.3f s | "
        "time breakdown %.3f s\n",
        match, context, align, hangS, stragglerS, breakdownS);

    t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpuSeconds();
    const AnalysisResult all = Analyzer::run(store, paths, {}, {});
    const double total = secondsSince(t0);
    const double cpu = cpuSeconds() - cpu0;
    std::printf("Analyzer::run (matching + all checks): %.3f s wall, %.3f s CPU, %zu findings\n",
                total, cpu, all.findings.size());
    for (const Finding& f : all.findings)
        std::printf("  %s %s %s ranks=%zu: %s\n", f.id.c_str(), f.severity.c_str(), f.kind.c_str(),
                    f.ranks.size(), f.summary.substr(0, 140).c_str());
    const auto slow = all.arrivals.find(ranks / 3);
    if (slow != all.arrivals.end())
        std::printf("injected straggler rank %d: last at %d of %d, p=%.3g, mean delay %.2f ms\n",
                    ranks / 3, slow->second.lastCount, slow->second.samples, slow->second.pValue,
                    double(slow->second.meanDelayNs) / 1e6);
    (void)hang;
    (void)straggler;
    (void)breakdown;
    return cpu <= 1.0 ? 0 : 1;
}
