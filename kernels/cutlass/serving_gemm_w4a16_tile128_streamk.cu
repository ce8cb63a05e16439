// CUTLASS w4a16 GEMM (serving_gemm_kernels.h): tile 128x128x64, cooperative, stream-K.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

Made MakeW4a16Tile128StreamK(const WeightOnlyProblem& problem, int device) {
  return WeightOnlyGemm<WeightOnlyTypes<cutlass::int4b_t, 128, true>>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
