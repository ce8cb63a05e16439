// CUTLASS int8-rowwise GEMM (serving_gemm_kernels.h): int8 x int8, INT32 accumulation, pingpong,
// tile 64x128x128, cluster 1x2x1.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

namespace {
GEMMPROF_CUTLASS_INT8_ROWWISE_TYPES(Int8RowwiseTile64, 64, 128, 1, 2, Pingpong, TmaWarpSpecialized);
}  // namespace

Made MakeInt8RowwiseTile64(const RowwiseProblem& problem, int device) {
  return RowwiseGemm<Int8RowwiseTile64>::Make(problem, device, kInt32Accumulation);
}

}  // namespace gemmprof::kernels::cutlass_gemm
