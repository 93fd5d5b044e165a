#pragma once

#include <cstdint>
#include <string>

namespace rankscope::bench {

// Writes a synthetic Kineto trace of about `targetBytes` to `path`: ProfilerStep spans with nested
// CPU ops and python functions, cudaLaunchKernel with ac2g flows to kernels on three streams,
// memcpy, and NCCL all_reduce calls (c10d -> record_param_comms -> nccl:* -> kernel with the
// record_param_comms args copied on). Returns the number of stored events it wrote.
// Full writes the args PyTorch 2.x writes with shapes recorded (about 340 bytes of text per
// stored event, flows included); Lean keeps only the args the reader uses and short kernel names
// (about 200 bytes).
enum class ArgsProfile { Full, Lean };
std::int64_t writeSyntheticKineto(const std::string& path, std::int64_t targetBytes, int rank,
                                  ArgsProfile profile = ArgsProfile::Full);

} // namespace rankscope::bench
