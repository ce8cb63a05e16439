// Host emulation of every recipe's quantization numerics. This is the reference the
// CUDA kernels in kernels/ must match bit for bit (scales and quantized values), and
// what the host reference runner uses. Pure functions, thread-safe, no I/O.
//
// Conventions (the GPU kernels implement exactly these):
//  * Tensors are row-major [rows, cols] of BF16-representable floats; quantization
//    blocks run along cols (the contiguous, K dimension). Partial blocks at the right
//    or bottom edge use only the elements present.
//  * FP8 casts follow CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt): round to
//    nearest even, finite values beyond the format's max saturate to +-max, +-Inf
//    saturates to +-max, NaN stays NaN (E4M3: 0x7F | sign, E5M2: 0x7F | sign -> 0x7E/0xFE
//    as CUDA produces). Subnormals are produced, not flushed.
//  * amax = max |x| ignoring NaN (fmaxf semantics). A scale is "fp8_max / amax"
//    computed in fp32; amax == 0 or non-finite gives scale 1. scale_inv = 1 / scale.
//    Quantized value = cast(x * scale) with the multiply in fp32.
//  * Block scaling (fp8-block): scales are powers of two by default
//    (scale = 2^floor(log2(fp8_max / amax))), fp32, one per 1x128 or 128x128 block.
//  * MXFP8: one UE8M0 scale per 1x32 block: the smallest power of two >= amax / 448
//    (biased exponent clamped to [0, 254]; amax == 0 gives exponent 0 and zero data);
//    value = cast_e4m3(x * 2^(127 - biased)).
//  * NVFP4: tensor scale s = (448 * 6) / amax_tensor (amax 0 -> 1); per 1x16 block the
//    UE4M3 decode scale sf = cast_e4m3(block_amax / 6 * s) (a positive E4M3 byte); the
//    value = cast_e2m1(x * (s / float(sf))) (0 when sf == 0), E2M1 round to nearest even
//    saturating at +-6. Dequantized x = q * float(sf) / s. No random Hadamard transform
//    and no stochastic rounding in this reference.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "server/core/enums.h"

namespace gemmprof::core::quant {

enum class Fp8Format { kE4M3, kE5M2 };

// BF16 round-to-nearest-even of an fp32 value (NaN kept).
float RoundToBf16(float x);
uint16_t FloatToBf16Bits(float x);
float Bf16BitsToFloat(uint16_t bits);

float Fp8Max(Fp8Format f);  // 448 or 57344
uint8_t EncodeFp8(float x, Fp8Format f);
float DecodeFp8(uint8_t bits, Fp8Format f);
// E2M1 nibble (low 4 bits used).
uint8_t EncodeE2M1(float x);
float DecodeE2M1(uint8_t nibble);

// max |x| ignoring NaN.
float Amax(std::span<const float> x);
// fp8_max / amax with the rules above.
float ScaleFromAmax(float amax, Fp8Format f);
// Delayed scaling: scale from an amax history (index 0 = most recent).
float DelayedScale(std::span<const float> amax_history, AmaxAlgo algo, Fp8Format f);

// Per-tensor scaled FP8 (current or delayed scaling).
struct TensorScaled {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> data;  // rows*cols bytes, row-major
  float scale = 1, scale_inv = 1;
  float amax = 0;             // amax of the input (what delayed scaling records)
};
TensorScaled QuantizeCurrent(std::span<const float> x, int64_t rows, int64_t cols, Fp8Format f);
TensorScaled QuantizeWithScale(std::span<const float> x, int64_t rows, int64_t cols, float scale,
                               Fp8Format f);

// Block-scaled FP8 (fp8-block recipe): 1x128 (block_rows = 1) or 128x128.
struct BlockScaled {
  int64_t rows = 0, cols = 0;
  int64_t block_rows = 1, block_cols = 128;
  std::vector<uint8_t> data;     // E4M3, rows*cols, row-major
  std::vector<float> scale_inv;  // one per block, row-major over the block grid
};
BlockScaled QuantizeBlock(std::span<const float> x, int64_t rows, int64_t cols, int64_t block_rows,
                          bool pow2_scales = true);

// MXFP8: E4M3 data with one UE8M0 scale per 1x32 block (plain row-major scale layout;
// the cuBLASLt swizzle is the kernels' business).
struct MxScaled {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> data;    // rows*cols
  std::vector<uint8_t> scales;  // rows * ceil(cols/32), biased exponents
};
MxScaled QuantizeMxfp8(std::span<const float> x, int64_t rows, int64_t cols);

// NVFP4: E2M1 data packed two per byte (element 2j in the low nibble), UE4M3 scale per
// 1x16 block, fp32 tensor scale.
struct Nvfp4Scaled {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> data;    // rows * ceil(cols/2)
  std::vector<uint8_t> scales;  // rows * ceil(cols/16), E4M3 bytes
  float tensor_scale = 1;       // s above
};
Nvfp4Scaled QuantizeNvfp4(std::span<const float> x, int64_t rows, int64_t cols);

// Dequantization back to fp32, row-major [rows, cols].
std::vector<float> Dequantize(const TensorScaled& q, Fp8Format f);
std::vector<float> Dequantize(const BlockScaled& q);
std::vector<float> Dequantize(const MxScaled& q);
std::vector<float> Dequantize(const Nvfp4Scaled& q);

// Transpose of a row-major [rows, cols] matrix.
std::vector<float> Transpose(std::span<const float> x, int64_t rows, int64_t cols);

}  // namespace gemmprof::core::quant
