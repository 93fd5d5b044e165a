#pragma once

// The taxonomy leaves the trace checks emit (slugs of tosem23_faults.csv; a test checks each).
namespace rankscope::symptoms {

inline constexpr const char* kHang = "training-and-evaluation/unexpected-performance/hang";
inline constexpr const char* kLowEfficiency =
    "training-and-evaluation/unexpected-performance/low-efficiency";
inline constexpr const char* kTensorMismatch =
    "training-and-evaluation/program-failure/tensor-mismatch";
inline constexpr const char* kCommunicationError =
    "training-and-evaluation/program-failure/communication-error";
inline constexpr const char* kSetupFailure = "communication-setup/setup-failure";
inline constexpr const char* kSetupHang = "communication-setup/hang-and-timeout";
inline constexpr const char* kPreparationHang = "data-and-model-preparation/hang-and-timeout";

} // namespace rankscope::symptoms
