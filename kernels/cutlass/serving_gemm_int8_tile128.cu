// CUTLASS int8-rowwise GEMM (serving_gemm_kernels.h): int8 x int8, INT32 accumulation, pingpong,
// tile 128x128x128, cluster 2x1x1.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_INT8_ROWWISE_TYPES(Int8RowwiseTile128, 128, 128, 2, 1, Pingpong,
                                    TmaWarpSpecialized);
}  // namespace

Made MakeInt8RowwiseTile128(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<Int8RowwiseTile128>::Make(problem, device, kInt32Accumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
