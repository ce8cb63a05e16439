// BlockQuantize: fp8-block (DeepSeek-style) E4M3 with one fp32 scale per 1x128 or
// 128x128 block, optionally with the transposed operand from the same pass, the scales
// in the row-major grids and/or cuBLASLt's layouts.
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {

cudaError_t BlockQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int32_t block_rows,
                          bool pow2_scales, uint8_t* out, uint8_t* out_t,
                          const BlockScaleOutputs& s, cudaStream_t stream) {
  if (rows < 0 || cols < 0 || (block_rows != 1 && block_rows != 128)) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  const bool scales_t = s.scale_inv_t != nullptr || s.gemm_t != nullptr;
  // 1x128 needs the transposed scales with the transposed copy; 128x128 derives them only
  // when given.
  if (x == nullptr || out == nullptr || (s.scale_inv == nullptr && s.gemm == nullptr) ||
      (block_rows == 1 && (out_t == nullptr) == scales_t)) {
    return cudaErrorInvalidValue;
  }
  // A layout's stride holds at least its rows (1x128) or K blocks (128x128).
  const int64_t need = block_rows == 1 ? rows : detail::CeilDivDevice(cols, detail::kTile);
  const int64_t need_t = block_rows == 1 ? cols : detail::CeilDivDevice(rows, detail::kTile);
  if ((s.gemm != nullptr && s.gemm_stride < need) ||
      (s.gemm_t != nullptr && out_t != nullptr && s.gemm_stride_t < need_t)) {
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
  p.scale_inv = s.scale_inv;
  p.scale_inv_t = out_t != nullptr ? s.scale_inv_t : nullptr;
  p.gemm_scale = s.gemm;
  p.gemm_stride = s.gemm_stride;
  p.gemm_scale_t = out_t != nullptr ? s.gemm_t : nullptr;
  p.gemm_stride_t = s.gemm_stride_t;
  return block_rows == 1
             ? detail::LaunchTileQuantize<detail::TileScaling::kBlock1x128>(p, stream)
             : detail::LaunchTileQuantize<detail::TileScaling::kBlock128x128>(p, stream);
}

cudaError_t BlockQuantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, int32_t block_rows,
                          bool pow2_scales, uint8_t* out, float* scale_inv, uint8_t* out_t,
                          float* scale_inv_t, cudaStream_t stream) {
  BlockScaleOutputs s;
  s.scale_inv = scale_inv;
  s.scale_inv_t = scale_inv_t;
  return BlockQuantize(x, rows, cols, block_rows, pow2_scales, out, out_t, s, stream);
}

}  // namespace gemmprof::kernels
