#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace rankscope::bench {

// One Kineto trace file as the synthetic generators write it: raw() the text around the events,
// then each event one object a line ("X" spans, ac2g flows), buffered and flushed by 1 MB.
class KinetoWriter {
public:
    // `pytorchLayout`: each event over three or four indented lines, as PyTorch's profiler
    // writes it; else one line an event.
    explicit KinetoWriter(const std::string& path, bool pytorchLayout = false);
    ~KinetoWriter();
    KinetoWriter(const KinetoWriter&) = delete;
    KinetoWriter& operator=(const KinetoWriter&) = delete;
    bool ok() const { return m_f != nullptr; }
    void raw(const std::string& s);
    // A complete event; no "args" when `args` is empty.
    void x(const char* cat, const std::string& name, int pid, int tid, std::int64_t ts,
           std::int64_t dur, const std::string& args);
    // A flow's start ('s', at the launch) or end ('f', at the kernel, binding to it).
    void flow(char ph, std::int64_t id, int pid, int tid, std::int64_t ts);
    std::int64_t bytes() const { return m_bytes; }
    std::int64_t events() const { return m_events; } // objects in traceEvents, flows included

private:
    void event(const std::string& body);
    void flush();
    std::FILE* m_f;
    bool m_pytorchLayout;
    std::string m_buf;
    std::int64_t m_bytes = 0;
    std::int64_t m_events = 0;
};

// Writes a synthetic Kineto trace of about `targetBytes` to `path`: ProfilerStep spans with nested
// CPU ops and python functions, cudaLaunchKernel with ac2g flows to kernels on three streams,
// memcpy, and NCCL all_reduce calls (c10d -> record_param_comms -> nccl:* -> kernel with the
// record_param_comms args copied on). Returns the number of stored events it wrote.
// Full writes the args PyTorch 2.x writes with shapes recorded (about 340 bytes of text per
// stored event, flows included); Lean keeps only the args the reader uses and short kernel names
// (about 200 bytes). PyTorch writes what PyTorch 2.x's profiler writes without shapes, the way it
// writes it: each event over three or four indented lines, timestamps in microseconds since the
// epoch (16 integer digits), the args it puts on CPU ops, runtime calls and kernels, and two
// more CPU ops and two more runtime calls for each kernel launch (about 225 bytes per trace
// event, flows included, as the real trace tests/data/kineto-real-hta/ns_resolution_trace holds).
enum class ArgsProfile { Full, Lean, PyTorch };
std::int64_t writeSyntheticKineto(const std::string& path, std::int64_t targetBytes, int rank,
                                  ArgsProfile profile = ArgsProfile::Full);

} // namespace rankscope::bench
