// CastTranspose: per-tensor scaled FP8 cast with the transposed copy and the amax of the
// input in the same pass (current and delayed scaling); DelayedCastTranspose adds delayed
// scaling's history roll and next scale in a one-block launch that depends on the cast
// programmatically (it is resident while the cast runs and waits for its completion).
#include "kernels/quant/amax_history.cuh"
#include "kernels/quant/launch_utils.cuh"
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

// Delayed scaling's step after the cast: the results of RollAmaxHistory then
// ScaleFromHistory (kernels/quant/scale.cu; the same rules, amax_history.cuh) in one
// launch, plus 1 / the scale the cast used.
struct DelayedStep {
  float* amax = nullptr;  // the cast's fused amax; set back to 0 for the next step
  float* history = nullptr;
  int32_t len = 0;
  bool most_recent = false;
  Fp8Format format = Fp8Format::kE4M3;
  float* scale = nullptr;  // in: the scale the cast used; out: the next step's
  float* scale_inv = nullptr;
};

constexpr int kStepThreads = 256;
// Histories of up to kStepRegs x kStepThreads entries are read whole into registers (the
// max of the new history comes from them) before any is written: one round trip to
// memory on the step's critical path (ShiftAmaxHistory). Longer ones go chunk by chunk.
constexpr int kStepRegs = 4;

__global__ void __launch_bounds__(kStepThreads) DelayedStepKernel(const DelayedStep p) {
  __shared__ float warp_max[kStepThreads / 32];
  // Launched with programmatic stream serialization: wait until the cast grid has
  // completed and its amax and reads of *scale are done.
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
  const float amax = *p.amax;
  const float used_scale = *p.scale;
  const int32_t len = p.len;
  // max |x| over the new history's entries 1..len-1 (this thread's part), then amax's
  float v = detail::ShiftAmaxHistory<kStepThreads, kStepRegs>(p.history, len, amax);
  if (p.most_recent) {
    v = len > 0 ? amax : 0.0f;
  } else {
    if (len > 0) v = fmaxf(v, amax);  // fmaxf ignores a NaN entry, as the history scan does
    v = detail::BlockMax<kStepThreads>(v, warp_max);
  }
  if (threadIdx.x == 0) {
    *p.scale_inv = __fdiv_rn(1.0f, used_scale);
    *p.scale = detail::ScaleFromAmax(v, detail::Fp8MaxOf(p.format));
    *p.amax = 0.0f;  // the next step's cast starts from 0 (no memset)
  }
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
                                 float* scale_inv, uint8_t* out, uint8_t* out_t, float* amax,
                                 cudaStream_t stream) {
  if (BadCastArgs(x, rows, cols, scale, out) || len < 0 || (len > 0 && history == nullptr) ||
      scale_inv == nullptr || amax == nullptr) {
    return cudaErrorInvalidValue;
  }
  if (rows == 0 || cols == 0) {
    // Nothing to cast: the step still records its (zero) amax and moves the scale on.
    cudaError_t err = cudaMemsetAsync(amax, 0, sizeof(float), stream);
    if (err == cudaSuccess) err = ScaleFromHistory(history, len, algo, f, scale, scale_inv, stream);
    if (err == cudaSuccess) err = RollAmaxHistory(history, len, amax, stream);
    if (err == cudaSuccess) err = ScaleFromHistory(history, len, algo, f, scale, nullptr, stream);
    return err;
  }
  const cudaError_t cast = detail::LaunchTileQuantize<detail::TileScaling::kTensor>(
      CastParams(x, rows, cols, scale, f, out, out_t, amax), stream);
  if (cast != cudaSuccess) return cast;
  DelayedStep step;
  step.amax = amax;
  step.history = history;
  step.len = len;
  step.most_recent = algo == core::AmaxAlgo::kMostRecent;
  step.format = f;
  step.scale = scale;
  step.scale_inv = scale_inv;
  return detail::LaunchDependent(DelayedStepKernel, dim3(1), dim3(kStepThreads), stream, step);
}

}  // namespace gemmprof::kernels
