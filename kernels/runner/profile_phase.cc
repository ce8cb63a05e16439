// CudaRunner::ProfileMembers: Nsight mode (`submit --profile`). After the rounds, each
// member's timed graph runs once more between cudaProfilerStart and cudaProfilerStop,
// inside an NVTX range named "pass op MxKxN recipe mode", so
//   nsys profile --capture-range=cudaProfilerApi gemmprofd ...
//   ncu --profile-from-start off --nvtx --nvtx-include "fprop qkv 15872x4096x12288 bf16 autocast/"
//   ...
// capture exactly the benchmarked work: no warm-up, pilot, rounds or verification.
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/runner/cuda_runner.h"
#include "kernels/runner/member.h"

namespace gemmprof::kernels {

std::string ProfileRangeName(const core::WorkItem& item) {
  return absl::StrCat(
      std::string(core::ToString(item.op.pass)), " ", item.op.name, " ", item.op.shape.ToString(),
      item.op.groups > 1 ? absl::StrCat(" x", item.op.groups) : "", " ",
      std::string(core::ToString(item.recipe)), " ", std::string(core::ToString(item.mode)));
}

absl::Status CudaRunner::ProfileMembers(const std::vector<Member*>& members) {
  const cudaStream_t st = stream_.get();
  for (Member* m : members) {
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(st));
    CUDA_RETURN_IF_ERROR(cudaProfilerStart());
    nvtxRangePushA(ProfileRangeName(m->item).c_str());
    absl::Status launched = m->iso.Launch(st);
    const cudaError_t synced = cudaStreamSynchronize(st);
    nvtxRangePop();
    const cudaError_t stopped = cudaProfilerStop();
    RETURN_IF_ERROR(launched);
    CUDA_RETURN_IF_ERROR(synced);
    CUDA_RETURN_IF_ERROR(stopped);
    m->profiled = true;
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
