// Host emulation of the serving recipes' integer formats (core/enums.h: int8-rowwise,
// w8a16, w4a16): what a GPU kernel of these recipes must compute, and what the host
// reference runner uses. Pure functions over row-major [rows, cols] BF16-representable
// fp32 tensors, K = cols; thread-safe, no I/O.
//
// Rules (exact, as the kernels must implement them; tests in tests/unit/core/quant/):
//  I1 Integer rounding: round to nearest, ties to even (CUDA __float2int_rn), then clamp to
//     the format's range; NaN -> 0. amax follows R7 of quant.h (NaN ignored).
//  I2 int8-rowwise (W8A8, both operands): per row, scale = 127 / amax as one fp32 division
//     (amax 0 or non-finite -> 1; an overflow to +Inf -> FLT_MAX), q = clamp(I1(x * scale),
//     -127, 127), scale_inv = 1.0f / scale. The GEMM accumulates q_a * q_b exactly in
//     INT32 (|acc| <= 127^2 K fits for K <= 133,000) and writes
//     out = float(acc) * a.scale_inv[i] * b.scale_inv[j], fp32, left to right.
//  I3 w8a16 weight: per output channel (row), s = bf16(amax / 127) (fp32 division, then BF16
//     round to nearest even; amax 0 or non-finite, or a quotient that rounds to 0 -> 1),
//     q = clamp(I1(x / s), -127, 127);
//     the weight the GEMM reads is q * s; the activation stays BF16.
//  I4 w4a16 weight: per row and group of `group` elements along K (the last group may be
//     shorter), s = bf16(amax / 7) (amax 0 or non-finite, or a quotient that rounds to 0
//     -> 1), q = clamp(I1(x / s), -8, 7) (the group's amax lands on +-7: BF16 moves x / s by
//     under 0.4%, so -8 is only the clamp's floor);
//     packed two per byte, element 2j in the low nibble and 2j+1 in the high nibble of byte
//     j of its row, two's complement; each row starts on a byte (an odd row's last high
//     nibble is 0). The weight the GEMM reads is q * s.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gemmprof::core::quant {

// I1 with the range [lo, hi].
int32_t RoundToInt(float x, int32_t lo, int32_t hi);

// int8-rowwise (I2): one fp32 scale per row.
struct Int8RowScaled {
  int64_t rows = 0, cols = 0;
  std::vector<int8_t> data;      // rows*cols, row-major
  std::vector<float> scale_inv;  // one per row
};
Int8RowScaled QuantizeInt8Rowwise(std::span<const float> x, int64_t rows, int64_t cols);
std::vector<float> Dequantize(const Int8RowScaled& q);
// C[m, n] of I2 from A's and B's (both K-major [rows, K]) quantized forms.
std::vector<float> Int8RowwiseGemm(const Int8RowScaled& a, const Int8RowScaled& b);

// w8a16's weight (I3): one bf16 scale per row.
struct Int8ChannelScaled {
  int64_t rows = 0, cols = 0;
  std::vector<int8_t> data;   // rows*cols, row-major
  std::vector<float> scales;  // one per row, BF16 values
};
Int8ChannelScaled QuantizeW8(std::span<const float> x, int64_t rows, int64_t cols);
std::vector<float> Dequantize(const Int8ChannelScaled& q);

// w4a16's weight (I4): packed INT4 with one bf16 scale per row and group.
struct Int4GroupScaled {
  int64_t rows = 0, cols = 0, group = 128;
  std::vector<uint8_t> packed;  // rows * ceil(cols / 2)
  std::vector<float> scales;    // rows * ceil(cols / group), row-major, BF16 values
  // The signed value of element (r, c), unpacked.
  int32_t At(int64_t r, int64_t c) const;
};
Int4GroupScaled QuantizeW4(std::span<const float> x, int64_t rows, int64_t cols, int64_t group);
std::vector<float> Dequantize(const Int4GroupScaled& q);

}  // namespace gemmprof::core::quant
