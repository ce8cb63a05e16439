// Mxfp8Quantize: E4M3 data with one UE8M0 scale per 1x32 block (plain row-major scale
// layout and/or cuBLASLt's swizzle), optionally with the quantization of x^T from the
// same pass.
#include "kernels/quant/launch_utils.cuh"
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {

cudaError_t Mxfp8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, uint8_t* out,
                          uint8_t* out_t, const MxScaleOutputs& s, cudaStream_t stream) {
  if (rows < 0 || cols < 0) return cudaErrorInvalidValue;
  if (rows == 0 || cols == 0) return cudaSuccess;
  const bool scales_t = s.scales_t != nullptr || s.swizzled_t != nullptr;
  if (x == nullptr || out == nullptr || (s.scales == nullptr && s.swizzled == nullptr) ||
      (out_t == nullptr) == scales_t) {
    return cudaErrorInvalidValue;
  }
  // The swizzle tiles are stored with 16-byte stores.
  if (!detail::IsAligned(s.swizzled, 16) || !detail::IsAligned(s.swizzled_t, 16)) {
    return cudaErrorInvalidValue;
  }
  detail::TileParams p;
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.format = Fp8Format::kE4M3;
  p.out = out;
  p.out_t = out_t;
  p.mx_scales = s.scales;
  p.mx_scales_t = s.scales_t;
  p.mx_swizzled = s.swizzled;
  p.mx_swizzled_t = s.swizzled_t;
  return detail::LaunchTileQuantize<detail::TileScaling::kMx1x32>(p, stream);
}

cudaError_t Mxfp8Quantize(const __nv_bfloat16* x, int64_t rows, int64_t cols, uint8_t* out,
                          uint8_t* scales, uint8_t* out_t, uint8_t* scales_t, cudaStream_t stream) {
  MxScaleOutputs s;
  s.scales = scales;
  s.scales_t = scales_t;
  return Mxfp8Quantize(x, rows, cols, out, out_t, s, stream);
}

}  // namespace gemmprof::kernels
