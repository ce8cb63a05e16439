// Mxfp8Quantize: E4M3 data with one UE8M0 scale per 1x32 block (plain row-major scale
// layout), optionally with the quantization of x^T from the same pass.
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {

cudaError_t Mxfp8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, uint8_t* out,
                          uint8_t* scales, uint8_t* out_t, uint8_t* scales_t, cudaStream_t stream) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  if (x == nullptr || out == nullptr || scales == nullptr ||
      (out_t == nullptr) != (scales_t == nullptr)) {
    return cudaErrorInvalidValue;
  }
  detail::TileParams p;
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.format = Fp8Format::kE4M3;
  p.out = out;
  p.out_t = out_t;
  p.mx_scales = scales;
  p.mx_scales_t = scales_t;
  return detail::LaunchTileQuantize<detail::TileScaling::kMx1x32>(p, stream);
}

}  // namespace gemmprof::kernels
