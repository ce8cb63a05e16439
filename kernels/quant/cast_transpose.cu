// CastTranspose: per-tensor scaled FP8 cast with the transposed copy and the amax of the
// input in the same pass (current and delayed scaling); DelayedCastTranspose adds delayed
// scaling's history roll and next scale in the same launch.
#include "kernels/quant/quantize.h"
#include "kernels/quant/tile_quantize.cuh"

namespace gemmprof::kernels {
namespace {

bool BadCastArgs(const __nv_bfloat16* x, int64_t rows, int64_t cols, const float* scale,
                 const uint8_t* out) {
  const bool empty = rows == 0 || cols == 0;
  return rows < 0 || cols < 0 || scale == nullptr || (!empty && (x == nullptr || out == nullptr));
}

detail::TileParams CastParams(const __nv_bfloat16* x, int64_t rows, int64_t cols,
                              const float* scale, Fp8Format f, uint8_t* out, uint8_t* out_t,
                              float* amax_out) {
  detail::TileParams p;
  p.x = reinterpret_cast<const uint16_t*>(x);
  p.rows = rows;
  p.cols = cols;
  p.format = f;
  p.tensor_scale = scale;
  p.amax_out = amax_out;
  p.out = out;
  p.out_t = out_t;
  return p;
}

}  // namespace

cudaError_t CastTranspose(const __nv_bfloat16* x, int64_t rows, int64_t cols, const float* scale,
                          Fp8Format f, uint8_t* out, uint8_t* out_t, float* amax_out,
                          cudaStream_t stream) {
  if (BadCastArgs(x, rows, cols, scale, out)) return cudaErrorInvalidValue;
  if (amax_out != nullptr) {
    const cudaError_t err = cudaMemsetAsync(amax_out, 0, sizeof(float), stream);
    if (err != cudaSuccess) return err;
  }
  if (rows == 0 || cols == 0) return cudaSuccess;
  return detail::LaunchTileQuantize<detail::TileScaling::kTensor>(
      CastParams(x, rows, cols, scale, f, out, out_t, amax_out), stream);
}

cudaError_t DelayedCastTranspose(const __nv_bfloat16* x, int64_t rows, int64_t cols, Fp8Format f,
                                 float* history, int32_t len, core::AmaxAlgo algo, float* scale,
                                 float* scale_inv, uint8_t* out, uint8_t* out_t,
                                 float* amax_and_done, cudaStream_t stream) {
  if (BadCastArgs(x, rows, cols, scale, out) || len < 0 || (len > 0 && history == nullptr) ||
      scale_inv == nullptr || amax_and_done == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) {
    // Nothing to cast: the step still records its (zero) amax and moves the scale on.
    cudaError_t err = cudaMemsetAsync(amax_and_done, 0, 2 * sizeof(float), stream);
    if (err == cudaSuccess) err = ScaleFromHistory(history, len, algo, f, scale, scale_inv, stream);
    if (err == cudaSuccess) err = RollAmaxHistory(history, len, amax_and_done, stream);
    if (err == cudaSuccess) err = ScaleFromHistory(history, len, algo, f, scale, nullptr, stream);
    return err;
  }
  detail::TileParams p = CastParams(x, rows, cols, scale, f, out, out_t, amax_and_done);
  p.done = reinterpret_cast<unsigned*>(amax_and_done + 1);
  p.history = history;
  p.history_len = len;
  p.most_recent = algo == core::AmaxAlgo::kMostRecent;
  p.scale_inv_used = scale_inv;
  p.next_scale = scale;
  return detail::LaunchTileQuantize<detail::TileScaling::kTensor>(p, stream);
}

}  // namespace gemmprof::kernels
