// CUTLASS w4a16 GEMM (serving_gemm_kernels.h): tile 128x16x64, cooperative.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

Made MakeW4a16Tile16(const WeightOnlyProblem& problem, int device) {
  return WeightOnlyGemm<WeightOnlyTypes<cutlass::int4b_t, 16>>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
