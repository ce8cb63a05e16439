// Scale rules: amax, per-tensor, delayed, power-of-two, MXFP8 and NVFP4 scales (quant.h
// R5-R9). Every operation is one IEEE fp32 operation so the kernels can reproduce it.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();

// fmaxf semantics: a NaN operand loses.
float FMax(float a, float b) { return std::fmax(a, b); }

}  // namespace

float Amax(std::span<const float> x) {
  float amax = 0.0f;
  for (float v : x) amax = FMax(amax, std::fabs(v));
  return amax;
}

float ScaleFromAmax(float amax, Fp8Format f) {
  if (amax == 0.0f || !std::isfinite(amax)) return 1.0f;
  const float scale = Fp8Max(f) / amax;
  return std::isinf(scale) ? kFloatMax : scale;
}

float DelayedScale(std::span<const float> amax_history, AmaxAlgo algo, Fp8Format f) {
  if (amax_history.empty()) return 1.0f;
  const float amax = algo == AmaxAlgo::kMostRecent ? amax_history.front() : Amax(amax_history);
  return ScaleFromAmax(amax, f);
}

float Pow2ScaleFromAmax(float amax, Fp8Format f) {
  const float scale = ScaleFromAmax(amax, f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(scale) & 0xFF800000u);
}

uint8_t MxScaleFromAmax(float amax) { return EncodeUe8m0RoundUp(amax / 448.0f); }

float Nvfp4TensorScale(float amax) {
  if (amax == 0.0f || !std::isfinite(amax)) return 1.0f;
  return std::fmin(2688.0f / amax, kFloatMax);
}

uint8_t Nvfp4BlockScale(float block_amax, float tensor_scale) {
  return EncodeFp8((block_amax / 6.0f) * tensor_scale, Fp8Format::kE4M3);
}

}  // namespace gemmprof::core::quant
