#pragma once

#include <cstdint>
#include <string>

namespace rankscope::bench {

// Writes to `dir` a `ranks`-rank synthetic Kineto job of about `mbPerRank` MB per rank with one
// straggler and one hung rank: every step each rank computes (400 operators with their
// launches, kernels and flows, the PyTorch 2.x args), then joins the step's all_reduce over all
// ranks (record_param_comms with Seq, the NCCL kernel on stream 28). `straggler` is late at
// every all_reduce; `hung` never reaches the last one, where the others wait until their traces
// end. The layout of scripts/gen_overview_job.py at a realistic size per rank. Returns the steps
// per rank; `events`, when given, receives the events written.
int writeDigestJob(const std::string& dir, int ranks, double mbPerRank, int straggler, int hung,
                   std::int64_t* events = nullptr);

} // namespace rankscope::bench
