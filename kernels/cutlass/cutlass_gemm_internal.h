// What cutlass_gemm.cc and serving_gemm.cc share: turning a factory's Made into a
// status. Internal to kernels/cutlass/.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "kernels/cutlass/block_gemm_kernels.h"

namespace gemmprof::kernels::cutlass_gemm {

// A made instance's failure: FailedPrecondition where CUTLASS cannot implement the
// problem (the queue's not_supported), Internal otherwise; OK when it was made.
inline absl::Status MadeStatus(const Made& made, const char* what) {
  if (made.instance != nullptr) return absl::OkStatus();
  const std::string text = absl::StrCat(what, ": ", made.error);
  return made.unsupported ? absl::FailedPreconditionError(text) : absl::InternalError(text);
}

}  // namespace gemmprof::kernels::cutlass_gemm
