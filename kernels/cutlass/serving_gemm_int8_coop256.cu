// CUTLASS int8-rowwise GEMM (serving_gemm_kernels.h): int8 x int8, INT32 accumulation, cooperative,
// tile 128x256x128, cluster 2x1x1.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_INT8_ROWWISE_TYPES(Int8RowwiseCooperative256, 128, 256, 2, 1, Cooperative,
                                    TmaWarpSpecializedCooperative);
}  // namespace

Made MakeInt8RowwiseCooperative256(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<Int8RowwiseCooperative256>::Make(problem, device, kInt32Accumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
