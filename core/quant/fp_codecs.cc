// Scalar codecs: BF16, FP8 E4M3 / E5M2, E2M1, UE8M0. Bit-exact rules: quant.h R1-R4, R8, R10.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/quant/quant.h"

namespace gemmprof::core::quant {
namespace {

// A small binary float format: sign, `exp_bits` exponent, `man_bits` mantissa.
struct MiniFormat {
  int exp_bits;
  int man_bits;
  int bias;
  uint8_t max_code;  // largest finite magnitude code
};

constexpr MiniFormat kE4M3{4, 3, 7, 0x7E};
constexpr MiniFormat kE5M2{5, 2, 15, 0x7B};
constexpr MiniFormat kE2M1{2, 1, 1, 0x7};

const MiniFormat& FormatOf(Fp8Format f) { return f == Fp8Format::kE4M3 ? kE4M3 : kE5M2; }

// Magnitude code of a finite, non-negative fp32 value: round to nearest even at the target
// precision with an unbounded exponent, then saturate to max_code (R2). Working on the
// integer significand keeps every step exact, so the only rounding is the one RNE step.
uint8_t EncodeMagnitude(uint32_t abs_bits, const MiniFormat& fmt) {
  const uint32_t float_exp = abs_bits >> 23;
  uint32_t sig = abs_bits & 0x7FFFFFu;
  int lsb_exp;    // exponent of sig's least significant bit
  int value_exp;  // floor(log2(value))
  if (float_exp == 0) {
    if (sig == 0) return 0;
    lsb_exp = -149;
    value_exp = (31 - std::countl_zero(sig)) - 149;
  } else {
    sig |= 0x800000u;
    value_exp = static_cast<int>(float_exp) - 127;
    lsb_exp = value_exp - 23;
  }
  const int min_normal_exp = 1 - fmt.bias;
  const int quantum_exp = std::max(value_exp, min_normal_exp) - fmt.man_bits;
  const int shift = quantum_exp - lsb_exp;
  uint64_t n;
  if (shift <= 0) {
    n = static_cast<uint64_t>(sig) << -shift;
  } else if (shift > 25) {
    n = 0;  // below a quarter of the smallest subnormal
  } else {
    const uint64_t half = uint64_t{1} << (shift - 1);
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    n = sig >> shift;
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  if (n == 0) return 0;
  const uint64_t implicit = uint64_t{1} << fmt.man_bits;
  if (n < implicit) return static_cast<uint8_t>(n);  // subnormal
  int exp = quantum_exp + fmt.man_bits;
  if (n >= 2 * implicit) {  // rounding carried into the next binade
    n >>= 1;
    ++exp;
  }
  const int64_t biased = exp + fmt.bias;
  const int64_t code = (biased << fmt.man_bits) | static_cast<int64_t>(n - implicit);
  return code > fmt.max_code ? fmt.max_code : static_cast<uint8_t>(code);
}

float DecodeMagnitude(uint8_t code, const MiniFormat& fmt) {
  const int biased = code >> fmt.man_bits;
  const int man = code & ((1 << fmt.man_bits) - 1);
  if (biased == 0) return std::ldexp(static_cast<float>(man), 1 - fmt.bias - fmt.man_bits);
  return std::ldexp(static_cast<float>((1 << fmt.man_bits) + man),
                    biased - fmt.bias - fmt.man_bits);
}

}  // namespace

uint16_t FloatToBf16Bits(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  const uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float Bf16BitsToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

float RoundToBf16(float x) { return Bf16BitsToFloat(FloatToBf16Bits(x)); }

float Fp8Max(Fp8Format f) { return f == Fp8Format::kE4M3 ? 448.0f : 57344.0f; }

uint8_t EncodeFp8(float x, Fp8Format f) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return 0x7F;  // R1: sign dropped, both formats
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const MiniFormat& fmt = FormatOf(f);
  if (abs_bits == 0x7F800000u) return sign | fmt.max_code;
  return sign | EncodeMagnitude(abs_bits, fmt);
}

float DecodeFp8(uint8_t bits, Fp8Format f) {
  const uint8_t mag = bits & 0x7F;
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  if (f == Fp8Format::kE4M3) {
    if (mag == 0x7F) return std::numeric_limits<float>::quiet_NaN();
  } else if (mag >= 0x7C) {
    return mag == 0x7C ? sign * std::numeric_limits<float>::infinity()
                       : std::numeric_limits<float>::quiet_NaN();
  }
  return sign * DecodeMagnitude(mag, FormatOf(f));
}

uint8_t EncodeE2M1(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return 0x7;  // R4: NaN -> +6
  const uint8_t sign = static_cast<uint8_t>((bits >> 28) & 0x8u);
  if (abs_bits == 0x7F800000u) return sign | kE2M1.max_code;
  return sign | EncodeMagnitude(abs_bits, kE2M1);
}

float DecodeE2M1(uint8_t nibble) {
  const float mag = DecodeMagnitude(nibble & 0x7, kE2M1);
  return (nibble & 0x8) ? -mag : mag;
}

uint8_t EncodeUe8m0RoundUp(float x) {
  const uint32_t abs_bits = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return 0xFF;
  // Values up to 2^-127 (the smallest UE8M0 value, fp32 bits 0x00400000) take byte 0; the
  // rest of the subnormal range rounds up to 2^-126.
  if (abs_bits <= 0x00400000u) return 0;
  const uint32_t biased = abs_bits >> 23;
  if (biased == 0) return 1;
  const uint32_t up = biased + ((abs_bits & 0x7FFFFFu) != 0 ? 1u : 0u);
  return static_cast<uint8_t>(std::min<uint32_t>(up, 254u));
}

float DecodeUe8m0(uint8_t bits) {
  if (bits == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

}  // namespace gemmprof::core::quant
