// CUTLASS w8a16 GEMM (serving_gemm_kernels.h): tile 128x128x64, cooperative, stream-K.
#include "kernels/cutlass/serving_gemm_impl.cuh"

namespace gemmprof::kernels::cutlass_gemm {

Made MakeW8a16Tile128StreamK(const WeightOnlyProblem& problem, int device) {
  return WeightOnlyGemm<WeightOnlyTypes<int8_t, 128, true>>::Make(problem, device);
}

}  // namespace gemmprof::kernels::cutlass_gemm
