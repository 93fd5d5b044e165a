#include "bench/kinetogen.h"

#include <cstdio>
#include <string>

namespace rankscope::bench {

namespace {

std::string us(std::int64_t ns)
{
    return std::to_string(ns / 1000) + '.' + std::to_string(1000 + ns % 1000).substr(1);
}

} // namespace

KinetoWriter::KinetoWriter(const std::string& path, bool pytorchLayout)
    : m_f(std::fopen(path.c_str(), "wb")), m_pytorchLayout(pytorchLayout)
{}

KinetoWriter::~KinetoWriter()
{
    if (!m_f) return;
    flush();
    std::fclose(m_f);
}

void KinetoWriter::raw(const std::string& s)
{
    m_buf += s;
    m_bytes += std::int64_t(s.size());
    if (m_buf.size() > (1 << 20)) flush();
}

void KinetoWriter::event(const std::string& body)
{
    raw(m_events == 0 ? "  " + body : ",\n  " + body);
    ++m_events;
}

void KinetoWriter::x(const char* cat, const std::string& name, int pid, int tid, std::int64_t ts,
                     std::int64_t dur, const std::string& args)
{
    const char* line = m_pytorchLayout ? ",\n    " : ", ";
    event(std::string(m_pytorchLayout ? "{\n    " : "{") + "\"ph\": \"X\", \"cat\": \"" + cat +
          "\", \"name\": \"" + name + "\", \"pid\": " + std::to_string(pid) + ", \"tid\": " +
          std::to_string(tid) + line + "\"ts\": " + us(ts) + ", \"dur\": " + us(dur) +
          (args.empty()      ? ""
           : m_pytorchLayout ? ",\n    \"args\": {\n      " + args + "\n    }"
                             : ", \"args\": {" + args + "}") +
          (m_pytorchLayout ? "\n  }" : "}"));
}

void KinetoWriter::flow(char ph, std::int64_t id, int pid, int tid, std::int64_t ts)
{
    event(std::string(m_pytorchLayout ? "{\n    " : "{") + "\"ph\": \"" + ph +
          "\", \"id\": " + std::to_string(id) + ", \"pid\": " + std::to_string(pid) +
          ", \"tid\": " + std::to_string(tid) + ", \"ts\": " + us(ts) +
          (m_pytorchLayout ? ",\n    " : ", ") + "\"cat\": \"ac2g\", \"name\": \"ac2g\"" +
          (ph == 'f' ? ", \"bp\": \"e\"" : "") + (m_pytorchLayout ? "\n  }" : "}"));
}

void KinetoWriter::flush()
{
    std::fwrite(m_buf.data(), 1, m_buf.size(), m_f);
    m_buf.clear();
}

std::int64_t writeSyntheticKineto(const std::string& path, std::int64_t targetBytes, int rank,
                                  ArgsProfile profile)
{
    // PyTorch writes the args of Full but the shapes, the same kernels and more CPU ops.
    const bool pytorch = profile == ArgsProfile::PyTorch;
    const bool full = profile == ArgsProfile::Full || pytorch;
    KinetoWriter w(path, pytorch);
    if (!w.ok()) return -1;
    const int pid = 4000 + rank;
    w.raw("{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " +
          std::to_string(rank) +
          ", \"world_size\": 8, \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\", "
          "\"pg_desc\": \"default_pg\", \"pg_size\": 8, \"ranks\": [0,1,2,3,4,5,6,7]}]},\n" +
          (pytorch ? "" : "  \"baseTimeNanoseconds\": 1700000000000000000,\n") +
          "  \"traceEvents\": [\n");
    std::int64_t events = 0;
    // PyTorch's timestamps are microseconds since the epoch.
    std::int64_t t = pytorch ? 1'712'195'495'000'000'000 : 1'000'000;
    std::int64_t corr = 1;
    std::int64_t ext = 1;
    // The stored events: flows are not.
    const auto x = [&](const char* cat, const std::string& name, int p, int tid, std::int64_t ts,
                       std::int64_t dur, const std::string& args) {
        w.x(cat, name, p, tid, ts, dur, args);
        ++events;
    };
    static const char* ops[] = {"aten::linear",  "aten::addmm",  "aten::relu", "aten::layer_norm",
                                "aten::softmax", "aten::matmul", "aten::add_", "aten::mul"};
    static const char* kernels[] = {
        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, "
        "at::native::FillFunctor<float>, at::detail::Array<char*, 2>)",
        "ampere_sgemm_128x64_tn"};
    static const char* shortKernels[] = {"cutlass_80_tensorop_s1688gemm_128x128_32x3_nn",
                                         "vectorized_elementwise_kernel", "ampere_sgemm_128x64_tn"};
    std::int64_t step = 0;
    while (w.bytes() < targetBytes) {
        const std::int64_t stepStart = t;
        const std::int64_t stepDur = 2'000'000;
        x("user_annotation", "ProfilerStep#" + std::to_string(step), pid, pid, stepStart, stepDur,
          "\"External id\": " + std::to_string(ext++));
        t += 1000;
        for (int i = 0; i < 400; ++i) {
            const char* op = ops[i % 8];
            const std::string e = std::to_string(ext++);
            if (!pytorch) {
                x("python_function", "torch/nn/modules/module.py(1501): _call_impl", pid, pid, t,
                  4000,
                  full ? "\"Python id\": " + std::to_string(i) + ", \"Python parent id\": 1"
                       : std::string());
            } else {
                // The op's dispatch: views of its weight.
                x("cpu_op", "aten::t", pid, pid, t + 20, 60,
                  "\"External id\": " + std::to_string(ext++) +
                      ", \"Ev Idx\": " + std::to_string(i));
                x("cpu_op", "aten::transpose", pid, pid, t + 30, 40,
                  "\"External id\": " + std::to_string(ext++) +
                      ", \"Ev Idx\": " + std::to_string(i));
            }
            x("cpu_op", op, pid, pid, t + 100, 3500,
              pytorch ? "\"External id\": " + e +
                            ", \"Record function id\": 0, \"Ev Idx\": " + std::to_string(i)
              : full ? "\"External id\": " + e +
                           ", \"Record function id\": 0, \"Input Dims\": [[32, 1024], [1024]], "
                           "\"Input type\": [\"float\", \"float\"], \"Sequence number\": " +
                           std::to_string(i)
                     : std::string());
            if (pytorch) {
                // The runtime's checks before the launch.
                x("cuda_runtime", "cudaStreamIsCapturing", pid, pid, t + 1900, 20,
                  "\"External id\": " + e +
                      ", \"cbid\": 317, \"correlation\": " + std::to_string(corr++));
                x("cuda_runtime", "cudaGetDevice", pid, pid, t + 1950, 10,
                  "\"External id\": " + e +
                      ", \"cbid\": 17, \"correlation\": " + std::to_string(corr++));
            }
            const std::int64_t c = corr++;
            x("cuda_runtime", "cudaLaunchKernel", pid, pid, t + 2000, 800,
              full ? "\"cbid\": 211, \"correlation\": " + std::to_string(c) +
                         ", \"External id\": " + e
                   : "\"correlation\": " + std::to_string(c));
            w.flow('s', c, pid, pid, t + 2000);
            const int stream = 7 + (i % 3) * 7;
            const std::int64_t kt = t + 2800 + (i % 5) * 100;
            const std::string kernelArgs =
                "\"External id\": " + e +
                ", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": " +
                std::to_string(stream) + ", \"correlation\": " + std::to_string(c) +
                ", \"registers per thread\": 128, \"shared memory\": 49152, \"blocks per SM\": "
                "1.185185, \"warps per SM\": 9.481481, \"grid\": [128, 1, 1], \"block\": [256, "
                "1, 1], \"est. achieved occupancy %\": 15";
            x("kernel", full && !pytorch ? kernels[i % 3] : shortKernels[i % 3], 0, stream, kt,
              2500, full ? kernelArgs : "\"correlation\": " + std::to_string(c));
            w.flow('f', c, 0, stream, kt);
            if (i % 50 == 0)
                x("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 7, kt + 2600, 400,
                  !full
                      ? "\"bytes\": 4194304"
                      : "\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(corr++) +
                            ", \"bytes\": 4194304, \"memory bandwidth (GB/s)\": 338.2");
            t += 4500;
        }
        // One gradient all_reduce per step.
        const std::string pg = "\"Process Group Name\": \"0\", \"Process Group Description\": "
                               "\"default_pg\", \"Process Group Ranks\": \"[0, 1, 2, 3, 4, 5, 6, "
                               "7]\", \"Group size\": 8, \"Collective name\": \"allreduce\", "
                               "\"dtype\": \"Float\", \"In msg nelems\": 1048576, \"Out msg "
                               "nelems\": 1048576, \"Seq\": " +
                               std::to_string(step + 1);
        const std::int64_t c = corr++;
        x("cpu_op", "c10d::allreduce_", pid, pid, t, 300,
          "\"External id\": " + std::to_string(ext++));
        x("cpu_op", "record_param_comms", pid, pid, t + 20, 250,
          "\"External id\": " + std::to_string(ext++) + ", " + pg);
        x("user_annotation", "nccl:all_reduce", pid, pid, t + 40, 200,
          "\"External id\": " + std::to_string(ext++));
        x("cuda_runtime", "cudaLaunchKernel", pid, pid, t + 60, 50,
          "\"cbid\": 211, \"correlation\": " + std::to_string(c));
        w.flow('s', c, pid, pid, t + 60);
        x("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0,
          28, t + 500, 80000,
          "\"device\": 0, \"stream\": 28, \"correlation\": " + std::to_string(c) + ", " + pg);
        w.flow('f', c, 0, 28, t + 500);
        t = stepStart + stepDur + 1000;
        ++step;
    }
    w.raw("\n  ],\n  \"traceName\": \"" + path + "\"\n}\n");
    return events;
}

} // namespace rankscope::bench
