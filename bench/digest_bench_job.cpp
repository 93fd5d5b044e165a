#include "bench/digest_bench_job.h"

#include "bench/kinetogen.h"

#include <filesystem>

namespace rankscope::bench {

namespace {

constexpr std::int64_t kOpNs = 4500, kOps = 400, kComputeNs = kOps * kOpNs;
constexpr std::int64_t kLateNs = 3'000'000, kCommNs = 1'500'000, kHangNs = 60'000'000'000;

// One rank's trace; `steps` 0 writes steps until `targetBytes`. Returns the steps written.
int writeRank(const std::string& path, int rank, int ranks, int steps, std::int64_t targetBytes,
              int straggler, int hung, std::int64_t* events)
{
    KinetoWriter w(path);
    if (!w.ok()) return 0;
    const int pid = 4000 + rank;
    w.raw("{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
          std::to_string(rank) + ", \"world_size\": " + std::to_string(ranks) +
          "},\n  \"baseTimeNanoseconds\": 1700000000000000000,\n  \"traceEvents\": [\n");
    const std::string group = "\"Process Group Name\": \"0\", \"Process Group Description\": "
                              "\"default_pg\", \"Group size\": " +
                              std::to_string(ranks) +
                              ", \"Collective name\": \"allreduce\", \"dtype\": \"Float\", "
                              "\"In msg nelems\": 1048576, \"Out msg nelems\": 1048576";
    const bool late = rank == straggler;
    std::int64_t t = 1'000'000, corr = 1, ext = 1;
    int step = 0;
    for (;; ++step) {
        const bool last = steps > 0 ? step == steps - 1 : false;
        if (steps > 0 && step >= steps) break;
        if (steps == 0 && step > 0 && w.bytes() >= targetBytes) break;
        const std::int64_t stepStart = t;
        // The straggler's operators run longer: it reaches the all_reduce kLateNs later.
        const std::int64_t opNs = kOpNs + (late ? kLateNs / kOps : 0);
        for (std::int64_t i = 0; i < kOps; ++i) {
            const std::int64_t at = t + 1000 + i * opNs;
            const std::string e = std::to_string(ext++);
            w.x("python_function", "torch/nn/modules/module.py(1501): _call_impl", pid, pid, at,
                opNs - 500, "\"Python id\": " + std::to_string(i) + ", \"Python parent id\": 1");
            w.x("cpu_op", i % 2 ? "aten::addmm" : "aten::layer_norm", pid, pid, at + 100,
                opNs - 1000,
                "\"External id\": " + e +
                    ", \"Record function id\": 0, \"Input Dims\": [[32, 1024], [1024]], \"Input "
                    "type\": [\"float\", \"float\"], \"Sequence number\": " +
                    std::to_string(i));
            const std::int64_t c = corr++;
            w.x("cuda_runtime", "cudaLaunchKernel", pid, pid, at + 2000, 800,
                "\"cbid\": 211, \"correlation\": " + std::to_string(c) + ", \"External id\": " + e);
            w.flow('s', c, pid, pid, at + 2000);
            const std::int64_t kt = at + 2800;
            w.x("kernel",
                "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>"
                "(Params)",
                0, 7, kt, opNs - 3000,
                "\"External id\": " + e +
                    ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, "
                    "\"correlation\": " +
                    std::to_string(c) +
                    ", \"registers per thread\": 128, \"shared memory\": 49152, \"grid\": [128, "
                    "1, 1], \"block\": [256, 1, 1], \"est. achieved occupancy %\": 15");
            w.flow('f', c, 0, 7, kt);
        }
        const std::int64_t arriveAll = t + 1000 + kComputeNs + kLateNs;
        if (last && rank == hung) {
            // Computed, never reached the all_reduce: its step goes on to the trace's end.
            w.x("user_annotation", "ProfilerStep#" + std::to_string(step), pid, pid, stepStart,
                kComputeNs + kHangNs + 2'000'000, "\"External id\": " + std::to_string(ext++));
            ++step;
            break;
        }
        const std::int64_t mine = t + 1000 + kOps * opNs;
        const std::string seq = "\"Seq\": " + std::to_string(step + 1) + ", " + group;
        w.x("cpu_op", "record_param_comms", pid, pid, mine, 200,
            "\"External id\": " + std::to_string(ext++) + ", " + seq);
        const std::int64_t end = arriveAll + (last ? kHangNs : kCommNs);
        w.x("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            0, 28, mine + 20, end - mine - 20, "\"device\": 0, \"stream\": 28, " + seq);
        w.x("user_annotation", "ProfilerStep#" + std::to_string(step), pid, pid, stepStart,
            end - stepStart + 100, "\"External id\": " + std::to_string(ext++));
        t = end + 200;
    }
    w.raw("\n  ],\n  \"traceName\": \"" + path + "\"\n}\n");
    *events += w.events();
    return step;
}

} // namespace

int writeDigestJob(const std::string& dir, int ranks, double mbPerRank, int straggler, int hung,
                   std::int64_t* events)
{
    std::filesystem::create_directories(dir);
    const auto path = [&](int r) { return dir + "/rank" + std::to_string(r) + ".pt.trace.json"; };
    std::int64_t n = 0;
    // Rank 0 sets the step count (its steps fill the size, plus the hang's last step) for all.
    const int steps =
        writeRank(path(0), 0, ranks, 0, std::int64_t(mbPerRank * 1e6), straggler, hung, &n) + 1;
    n = 0;
    for (int r = 0; r < ranks; ++r)
        writeRank(path(r), r, ranks, steps, 0, straggler, hung, &n);
    if (events) *events = n;
    return steps;
}

} // namespace rankscope::bench
