// BlockQuantize: fp8-block (DeepSeek-style) E4M3 with one fp32 scale per 1x128 or
// 128x128 block, optionally with the transposed operand from the same pass.
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {

cudaError_t BlockQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int32_t block_rows,
                          bool pow2_scales, uint8_t* out, float* scale_inv, uint8_t* out_t,
                          float* scale_inv_t, cudaStream_t stream) {
  const bool empty = rows == 0 || cols == 0;
  if (rows < 0 || cols < 0 || (block_rows != 1 && block_rows != 128)) {
    return cudaErrorInvalidValue;
  }
  if (empty) return cudaSuccess;
  // 1x128 needs both transposed outputs; 128x128 derives scale_inv_t only when given.
  if (x == nullptr || out == nullptr || scale_inv == nullptr ||
      (block_rows == 1 && (out_t == nullptr) != (scale_inv_t == nullptr))) {
    return cudaErrorInvalidValue;
  }
  detail::TileParams p;
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.format = Fp8Format::kE4M3;
  p.pow2 = pow2_scales;
  p.out = out;
  p.out_t = out_t;
  p.scale_inv = scale_inv;
  p.scale_inv_t = out_t != nullptr ? scale_inv_t : nullptr;
  return block_rows == 1
             ? detail::LaunchTileQuantize<detail::TileScaling::kBlock1x128>(p, stream)
             : detail::LaunchTileQuantize<detail::TileScaling::kBlock128x128>(p, stream);
}

}  // namespace gemmprof::kernels
