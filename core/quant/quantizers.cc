// Tensor and block quantizers and their dequantizers (quant.h conventions).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/quant/check_shape.h"
#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

constexpr int64_t kBlockCols = 128;
constexpr int64_t kMxBlock = 32;
constexpr int64_t kNvfp4Block = 16;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// amax of the sub-rectangle [r0, r1) x [c0, c1) of a row-major matrix.
float RectAmax(std::span<const float> x, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
               int64_t c1) {
  float amax = 0.0f;
  for (int64_t r = r0; r < r1; ++r) {
    amax = std::max(amax, Amax(x.subspan(r * cols + c0, c1 - c0)));
  }
  return amax;
}

}  // namespace

TensorScaled QuantizeWithScale(std::span<const float> x, int64_t rows, int64_t cols, float scale,
                               Fp8Format f) {
  CheckShape(x, rows, cols, "QuantizeWithScale");
  TensorScaled q;
  q.rows = rows;
  q.cols = cols;
  q.scale = scale;
  q.scale_inv = 1.0f / scale;
  q.amax = Amax(x);
  q.data.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) q.data[i] = EncodeFp8(x[i] * scale, f);
  return q;
}

TensorScaled QuantizeCurrent(std::span<const float> x, int64_t rows, int64_t cols, Fp8Format f) {
  CheckShape(x, rows, cols, "QuantizeCurrent");
  return QuantizeWithScale(x, rows, cols, ScaleFromAmax(Amax(x), f), f);
}

BlockScaled QuantizeBlock(std::span<const float> x, int64_t rows, int64_t cols, int64_t block_rows,
                          bool pow2_scales) {
  CheckShape(x, rows, cols, "QuantizeBlock");
  if (block_rows != 1 && block_rows != 128) {
    std::fprintf(stderr, "gemmprof::core::quant::QuantizeBlock: block_rows %lld not 1 or 128\n",
                 static_cast<long long>(block_rows));
    std::abort();
  }
  BlockScaled q;
  q.rows = rows;
  q.cols = cols;
  q.block_rows = block_rows;
  q.block_cols = kBlockCols;
  q.data.resize(x.size());
  const int64_t grid_rows = CeilDiv(rows, block_rows);
  const int64_t grid_cols = CeilDiv(cols, kBlockCols);
  q.scale_inv.resize(grid_rows * grid_cols);
  for (int64_t br = 0; br < grid_rows; ++br) {
    const int64_t r0 = br * block_rows, r1 = std::min(rows, r0 + block_rows);
    for (int64_t bc = 0; bc < grid_cols; ++bc) {
      const int64_t c0 = bc * kBlockCols, c1 = std::min(cols, c0 + kBlockCols);
      const float amax = RectAmax(x, cols, r0, r1, c0, c1);
      const float scale = pow2_scales ? Pow2ScaleFromAmax(amax, Fp8Format::kE4M3)
                                      : ScaleFromAmax(amax, Fp8Format::kE4M3);
      q.scale_inv[br * grid_cols + bc] = 1.0f / scale;
      for (int64_t r = r0; r < r1; ++r) {
        for (int64_t c = c0; c < c1; ++c) {
          q.data[r * cols + c] = EncodeFp8(x[r * cols + c] * scale, Fp8Format::kE4M3);
        }
      }
    }
  }
  return q;
}

MxScaled QuantizeMxfp8(std::span<const float> x, int64_t rows, int64_t cols) {
  CheckShape(x, rows, cols, "QuantizeMxfp8");
  MxScaled q;
  q.rows = rows;
  q.cols = cols;
  q.data.resize(x.size());
  const int64_t blocks = CeilDiv(cols, kMxBlock);
  q.scales.resize(rows * blocks);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t c0 = b * kMxBlock, c1 = std::min(cols, c0 + kMxBlock);
      const uint8_t biased = MxScaleFromAmax(RectAmax(x, cols, r, r + 1, c0, c1));
      q.scales[r * blocks + b] = biased;
      const float multiplier = DecodeUe8m0(static_cast<uint8_t>(254 - biased));
      for (int64_t c = c0; c < c1; ++c) {
        q.data[r * cols + c] = EncodeFp8(x[r * cols + c] * multiplier, Fp8Format::kE4M3);
      }
    }
  }
  return q;
}

Nvfp4Scaled QuantizeNvfp4(std::span<const float> x, int64_t rows, int64_t cols) {
  CheckShape(x, rows, cols, "QuantizeNvfp4");
  Nvfp4Scaled q;
  q.rows = rows;
  q.cols = cols;
  q.tensor_scale = Nvfp4TensorScale(Amax(x));
  const int64_t row_bytes = CeilDiv(cols, 2);
  const int64_t blocks = CeilDiv(cols, kNvfp4Block);
  q.data.assign(rows * row_bytes, 0);
  q.scales.resize(rows * blocks);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t c0 = b * kNvfp4Block, c1 = std::min(cols, c0 + kNvfp4Block);
      const uint8_t sf = Nvfp4BlockScale(RectAmax(x, cols, r, r + 1, c0, c1), q.tensor_scale);
      q.scales[r * blocks + b] = sf;
      if (sf == 0) continue;  // R9: the block stays all-zero nibbles
      const float multiplier = std::min(q.tensor_scale / DecodeFp8(sf, Fp8Format::kE4M3),
                                        std::numeric_limits<float>::max());
      for (int64_t c = c0; c < c1; ++c) {
        const uint8_t nibble = EncodeE2M1(x[r * cols + c] * multiplier);
        q.data[r * row_bytes + c / 2] |= static_cast<uint8_t>(c % 2 == 0 ? nibble : nibble << 4);
      }
    }
  }
  return q;
}

std::vector<float> Dequantize(const TensorScaled& q, Fp8Format f) {
  std::vector<float> out(q.data.size());
  for (size_t i = 0; i < q.data.size(); ++i) out[i] = DecodeFp8(q.data[i], f) * q.scale_inv;
  return out;
}

std::vector<float> Dequantize(const BlockScaled& q) {
  std::vector<float> out(q.data.size());
  const int64_t grid_cols = CeilDiv(q.cols, q.block_cols);
  for (int64_t r = 0; r < q.rows; ++r) {
    const float* scale_row = &q.scale_inv[(r / q.block_rows) * grid_cols];
    for (int64_t c = 0; c < q.cols; ++c) {
      out[r * q.cols + c] =
          DecodeFp8(q.data[r * q.cols + c], Fp8Format::kE4M3) * scale_row[c / q.block_cols];
    }
  }
  return out;
}

RowScaled QuantizeRowwise(std::span<const float> x, int64_t rows, int64_t cols, Fp8Format f) {
  CheckShape(x, rows, cols, "QuantizeRowwise");
  RowScaled q;
  q.rows = rows;
  q.cols = cols;
  q.data.resize(x.size());
  q.scale_inv.resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> row = x.subspan(r * cols, cols);
    const float scale = ScaleFromAmax(Amax(row), f);
    q.scale_inv[r] = 1.0f / scale;
    for (int64_t c = 0; c < cols; ++c) q.data[r * cols + c] = EncodeFp8(row[c] * scale, f);
  }
  return q;
}

std::vector<float> Dequantize(const RowScaled& q, Fp8Format f) {
  std::vector<float> out(q.data.size());
  for (int64_t r = 0; r < q.rows; ++r) {
    for (int64_t c = 0; c < q.cols; ++c) {
      out[r * q.cols + c] = DecodeFp8(q.data[r * q.cols + c], f) * q.scale_inv[r];
    }
  }
  return out;
}

std::vector<float> Dequantize(const MxScaled& q) {
  std::vector<float> out(q.data.size());
  const int64_t blocks = CeilDiv(q.cols, kMxBlock);
  for (int64_t r = 0; r < q.rows; ++r) {
    for (int64_t c = 0; c < q.cols; ++c) {
      out[r * q.cols + c] = DecodeFp8(q.data[r * q.cols + c], Fp8Format::kE4M3) *
                            DecodeUe8m0(q.scales[r * blocks + c / kMxBlock]);
    }
  }
  return out;
}

std::vector<float> Dequantize(const Nvfp4Scaled& q) {
  std::vector<float> out(q.rows * q.cols);
  const int64_t row_bytes = CeilDiv(q.cols, 2);
  const int64_t blocks = CeilDiv(q.cols, kNvfp4Block);
  for (int64_t r = 0; r < q.rows; ++r) {
    for (int64_t c = 0; c < q.cols; ++c) {
      const uint8_t byte = q.data[r * row_bytes + c / 2];
      const uint8_t nibble = c % 2 == 0 ? (byte & 0xF) : (byte >> 4);
      const float sf = DecodeFp8(q.scales[r * blocks + c / kNvfp4Block], Fp8Format::kE4M3);
      out[r * q.cols + c] = (DecodeE2M1(nibble) * sf) / q.tensor_scale;
    }
  }
  return out;
}

std::vector<float> Transpose(std::span<const float> x, int64_t rows, int64_t cols) {
  CheckShape(x, rows, cols, "Transpose");
  std::vector<float> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = x[r * cols + c];
  }
  return out;
}

}  // namespace gemmprof::core::quant
