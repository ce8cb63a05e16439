// CastTranspose: per-tensor scaled FP8 cast with the transposed copy and the amax of the
// input in the same pass (current and delayed scaling).
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {

cudaError_t CastTranspose(const __nv_bfloat16* x, int64_t rows, int64_t cols, const float* scale,
                          Fp8Format f, uint8_t* out, uint8_t* out_t, float* amax_out,
                          cudaStream_t stream) {
  const bool empty = rows == 0 || cols == 0;
  if (rows < 0 || cols < 0 || scale == nullptr || (!empty && (x == nullptr || out == nullptr))) {
    return cudaErrorInvalidValue;
  }
  if (amax_out != nullptr) {
    const cudaError_t err = cudaMemsetAsync(amax_out, 0, sizeof(float), stream);
    if (err != cudaSuccess) return err;
  }
  if (empty) return cudaSuccess;
  detail::TileParams p;
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.format = f;
  p.tensor_scale = scale;
  p.amax_out = amax_out;
  p.out = out;
  p.out_t = out_t;
  return detail::LaunchTileQuantize<detail::TileScaling::kTensor>(p, stream);
}

}  // namespace gemmprof::kernels
