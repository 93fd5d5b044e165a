#pragma once

#include <cstdint>
#include <string>

namespace rankscope::bench {

// Writes a synthetic Kineto trace of about `targetBytes` to `path`: ProfilerStep spans with nested
// CPU ops and python functions, cudaLaunchKernel with ac2g flows to kernels on three streams,
// memcpy, and NCCL all_reduce calls (c10d -> record_param_comms -> nccl:* -> kernel with the
// record_param_comms args copied on). Returns the number of stored events it wrote.
std::int64_t writeSyntheticKineto(const std::string& path, std::int64_t targetBytes, int rank);

} // namespace rankscope::bench
