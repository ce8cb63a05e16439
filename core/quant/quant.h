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
//    saturates to +-max, NaN stays NaN (byte: see R1 below, which settles this from the
//    hardware). Subnormals are produced, not flushed.
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
//
// Resolutions (exact, bit level; the kernels implement these; tested in
// tests/unit/core/quant/). Where the text above is loose, these rules decide.
// Checked exhaustively on an H200 (sm_90) over all 2^32 fp32 inputs: EncodeFp8 (both
// formats) == __nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt) on device, and EncodeE2M1 /
// EncodeUe8m0RoundUp == __nv_cvt_float2_to_fp4x2 / __nv_cvt_float_to_e8m0(x, __NV_SATFINITE,
// cudaRoundPosInf) as compiled for sm_90: 0 mismatches.
//  R1 FP8 NaN: every NaN input encodes to 0x7F in BOTH formats, sign dropped. Measured on an
//     H200 (sm_90) over all 2^32 fp32 inputs: cvt.rn.satfinite.{e4m3,e5m2}x2.f32 (what
//     __nv_cvt_float_to_fp8(x, __NV_SATFINITE, fmt) emits on device) agrees with the CUDA
//     header's software path for every non-NaN input and gives 0x7F for every NaN (the
//     software path would give 0xFF / 0x7E|payload). Kernels must use the device intrinsic.
//  R2 FP8 rounding: round to nearest even at the format's precision, then saturate:
//     E4M3 |x| <= 464 rounds (464 is the tie 448/480 -> 448), |x| > 464 -> +-448;
//     E5M2 |x| >= 61440 (the 57344/65536 tie rounds to the even 65536) -> +-57344;
//     +-Inf -> +-max. Subnormals: E4M3 min 2^-9, E5M2 min 2^-16; |x| <= half the min
//     subnormal -> zero WITH the sign of x (-1e-30 -> 0x80); -0 -> 0x80.
//  R3 FP8 decode: E4M3 0x7F/0xFF are NaN (no Inf; 0x7E = 448). E5M2 0x7C/0xFC = +-Inf,
//     0x7D..0x7F / 0xFD..0xFF NaN. DecodeFp8 returns a quiet NaN for NaN bytes.
//  R4 E2M1 (values 0, .5, 1, 1.5, 2, 3, 4, 6): RNE (0.25 -> 0, 0.75 -> 1, 1.25 -> 1,
//     1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4), |x| > 6 and +-Inf -> +-6, NaN -> +6 (0x7, sign
//     dropped), zero/underflow keep the sign (-0 -> 0x8). Same as __nv_cvt_float2_to_fp4x2(
//     make_float2(x[2j], x[2j+1]), __NV_E2M1, cudaRoundNearest), whose .x lands in the LOW
//     nibble (checked on sm_90, i.e. the header's software path; sm_100's hardware cvt was
//     not available to check). Each row starts on a byte; an odd row's last high nibble is 0.
//  R5 Per-tensor scale: scale = fp8_max / amax as one IEEE fp32 division (RN). amax == 0,
//     +Inf or NaN -> 1. A quotient that overflows to +Inf -> FLT_MAX (Transformer Engine's
//     rule). scale_inv = 1.0f / scale (fp32 RN). Quantize: cast(x * scale), one fp32
//     multiply, RN, no FMA contraction, no flush to zero (kernels: no -ftz / fast-math).
//  R6 Power-of-two scales: take the R5 fp32 scale and clear its 23 mantissa bits (floor of
//     log2 of the fp32-rounded quotient; TE's force_pow_2_scales). Block amax 0 -> 1.
//     scale_inv = 1.0f / scale (exact). Blocks tile from (0,0); the scale grid is
//     ceil(rows / block_rows) x ceil(cols / 128), row-major.
//  R7 amax = fmaxf-reduction of |x| starting at 0: NaN ignored, all-NaN -> 0, Inf -> Inf.
//     Delayed scaling: kMax = the same reduction over the history, kMostRecent = entry 0;
//     an empty history -> amax 0 -> scale 1.
//  R8 MXFP8 scale byte b = __nv_cvt_float_to_e8m0(amax / 448.0f, __NV_SATFINITE,
//     cudaRoundPosInf) with the division in IEEE fp32: the smallest b in [0, 254] with
//     2^(b-127) >= q for q = fp32(amax / 448); q <= 2^-127 (incl. 0) -> 0; q > 2^127 or
//     Inf -> 254. Data = cast_e4m3(x * m) with m = 2^(127-b) as an exact fp32 (for b = 254
//     the subnormal 2^-127). Dequantize: q * 2^(b-127).
//  R9 NVFP4: s = fminf(2688.0f / amax, FLT_MAX) in fp32; amax 0 or non-finite -> 1.
//     sf = cast_e4m3((block_amax / 6.0f) * s), two fp32 RN operations in that order.
//     Encode multiplier r = fminf(s / float(sf), FLT_MAX) (IEEE fp32 division);
//     q = cast_e2m1(x * r). A block with sf == 0 has all nibbles 0x0 (no multiply).
//     Dequantize: (float(q) * float(sf)) / s in fp32.
//  R11 Row-wise FP8 (fp8-rowwise): one scale per row of the [rows, cols] tensor (per token of
//     an activation or gradient, per output channel of a weight: the row runs along K),
//     scale = R5 on the row's R7 amax (not a power of two), scale_inv = 1.0f / scale; data =
//     cast(x * scale) as R5. An all-zero row has scale 1.
//  R10 BF16: round to nearest even on the upper 16 bits (as __float2bfloat16_rn); NaN
//     -> quiet NaN with its sign (0x7FC0 | sign); Inf kept; overflow rounds to Inf.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/enums.h"

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

// UE8M0 (R8): round up to a power of two, saturating to [0, 254]; NaN -> 0xFF.
uint8_t EncodeUe8m0RoundUp(float x);
// 2^(bits - 127) as fp32 (bits 0 gives the subnormal 2^-127); 0xFF -> NaN.
float DecodeUe8m0(uint8_t bits);
// MXFP8 block scale byte from a block amax (R8).
uint8_t MxScaleFromAmax(float amax);
// NVFP4 tensor scale s from the tensor amax (R9).
float Nvfp4TensorScale(float amax);
// NVFP4 block decode scale sf (an E4M3 byte) from a block amax and the tensor scale (R9).
uint8_t Nvfp4BlockScale(float block_amax, float tensor_scale);
// Power-of-two scale of R6 (fp8-block).
float Pow2ScaleFromAmax(float amax, Fp8Format f);

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
  float amax = 0;  // amax of the input (what delayed scaling records)
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

// Row-wise FP8 (fp8-rowwise, R11): one fp32 scale per row.
struct RowScaled {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> data;     // rows*cols, row-major
  std::vector<float> scale_inv;  // one per row
};
RowScaled QuantizeRowwise(std::span<const float> x, int64_t rows, int64_t cols, Fp8Format f);

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
std::vector<float> Dequantize(const RowScaled& q, Fp8Format f);
std::vector<float> Dequantize(const MxScaled& q);
std::vector<float> Dequantize(const Nvfp4Scaled& q);

// Transpose of a row-major [rows, cols] matrix.
std::vector<float> Transpose(std::span<const float> x, int64_t rows, int64_t cols);

}  // namespace gemmprof::core::quant
