#include "core/quant/integer_quant.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/quant/check_shape.h"
#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

// INT8 values times their row's factor.
std::vector<float> DequantizeRows(const std::vector<int8_t>& data, int64_t rows, int64_t cols,
                                  const std::vector<float>& row_factor) {
  std::vector<float> out(data.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = static_cast<float>(data[r * cols + c]) * row_factor[r];
    }
  }
  return out;
}

// I3/I4's scale: bf16(amax / qmax); 1 for amax 0 or non-finite, or a quotient that rounds
// to 0 (a tensor of BF16 subnormals: every value then quantizes to 0).
float Bf16Scale(float amax, float qmax) {
  if (amax == 0.0f || !std::isfinite(amax)) return 1.0f;
  const float s = RoundToBf16(amax / qmax);
  return s > 0.0f ? s : 1.0f;
}

}  // namespace

int32_t RoundToInt(float x, int32_t lo, int32_t hi) {
  if (std::isnan(x)) return 0;
  // Clamped first, so values beyond int32 convert safely; nearbyint rounds ties to even
  // in the default rounding mode.
  const float clamped = std::clamp(x, static_cast<float>(lo), static_cast<float>(hi));
  return static_cast<int32_t>(std::nearbyint(clamped));
}

Int8RowScaled QuantizeInt8Rowwise(std::span<const float> x, int64_t rows, int64_t cols) {
  CheckShape(x, rows, cols, "QuantizeInt8Rowwise");
  Int8RowScaled q;
  q.rows = rows;
  q.cols = cols;
  q.data.resize(x.size());
  q.scale_inv.resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> row = x.subspan(r * cols, cols);
    const float amax = Amax(row);
    float scale = 1.0f;
    if (amax != 0.0f && std::isfinite(amax)) {
      scale = 127.0f / amax;
      if (std::isinf(scale)) scale = std::numeric_limits<float>::max();
    }
    q.scale_inv[r] = 1.0f / scale;
    for (int64_t c = 0; c < cols; ++c) {
      q.data[r * cols + c] = static_cast<int8_t>(RoundToInt(row[c] * scale, -127, 127));
    }
  }
  return q;
}

std::vector<float> Dequantize(const Int8RowScaled& q) {
  return DequantizeRows(q.data, q.rows, q.cols, q.scale_inv);
}

std::vector<float> Int8RowwiseGemm(const Int8RowScaled& a, const Int8RowScaled& b) {
  if (a.cols != b.cols) {
    std::fprintf(stderr, "gemmprof::core::quant::Int8RowwiseGemm: K %lld vs %lld\n",
                 static_cast<long long>(a.cols), static_cast<long long>(b.cols));
    std::abort();
  }
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  std::vector<float> out(m * n);
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* ai = a.data.data() + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const int8_t* bj = b.data.data() + j * k;
      int64_t acc = 0;  // the INT32 accumulator's exact value (it never overflows, I2)
      for (int64_t kk = 0; kk < k; ++kk) acc += int32_t{ai[kk]} * int32_t{bj[kk]};
      out[i * n + j] = static_cast<float>(acc) * a.scale_inv[i] * b.scale_inv[j];
    }
  }
  return out;
}

Int8ChannelScaled QuantizeW8(std::span<const float> x, int64_t rows, int64_t cols) {
  CheckShape(x, rows, cols, "QuantizeW8");
  Int8ChannelScaled q;
  q.rows = rows;
  q.cols = cols;
  q.data.resize(x.size());
  q.scales.resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> row = x.subspan(r * cols, cols);
    const float s = Bf16Scale(Amax(row), 127.0f);
    q.scales[r] = s;
    for (int64_t c = 0; c < cols; ++c) {
      q.data[r * cols + c] = static_cast<int8_t>(RoundToInt(row[c] / s, -127, 127));
    }
  }
  return q;
}

std::vector<float> Dequantize(const Int8ChannelScaled& q) {
  return DequantizeRows(q.data, q.rows, q.cols, q.scales);
}

int32_t Int4GroupScaled::At(int64_t r, int64_t c) const {
  const uint8_t byte = packed[r * ((cols + 1) / 2) + c / 2];
  const int32_t nibble = (c % 2 == 0) ? (byte & 0xF) : (byte >> 4);
  return nibble >= 8 ? nibble - 16 : nibble;
}

Int4GroupScaled QuantizeW4(std::span<const float> x, int64_t rows, int64_t cols, int64_t group) {
  CheckShape(x, rows, cols, "QuantizeW4");
  if (group < 1) {
    std::fprintf(stderr, "gemmprof::core::quant::QuantizeW4: group %lld\n",
                 static_cast<long long>(group));
    std::abort();
  }
  Int4GroupScaled q;
  q.rows = rows;
  q.cols = cols;
  q.group = group;
  const int64_t row_bytes = (cols + 1) / 2, groups = (cols + group - 1) / group;
  q.packed.assign(rows * row_bytes, 0);
  q.scales.resize(rows * groups);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t c0 = g * group, c1 = std::min(cols, c0 + group);
      const float s = Bf16Scale(Amax(x.subspan(r * cols + c0, c1 - c0)), 7.0f);
      q.scales[r * groups + g] = s;
      for (int64_t c = c0; c < c1; ++c) {
        const uint8_t nibble = static_cast<uint8_t>(RoundToInt(x[r * cols + c] / s, -8, 7)) & 0xF;
        q.packed[r * row_bytes + c / 2] |= c % 2 == 0 ? nibble : static_cast<uint8_t>(nibble << 4);
      }
    }
  }
  return q;
}

std::vector<float> Dequantize(const Int4GroupScaled& q) {
  std::vector<float> out(q.rows * q.cols);
  const int64_t groups = (q.cols + q.group - 1) / q.group;
  for (int64_t r = 0; r < q.rows; ++r) {
    for (int64_t c = 0; c < q.cols; ++c) {
      out[r * q.cols + c] = static_cast<float>(q.At(r, c)) * q.scales[r * groups + c / q.group];
    }
  }
  return out;
}

}  // namespace gemmprof::core::quant
