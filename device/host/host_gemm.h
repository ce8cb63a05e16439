// The host reference GEMM: deterministic random operands, every recipe's quantization
// emulated with gemmprof::quant, an fp32 GEMM of the dequantized operands and a
// double-accumulated reference GEMM of the unquantized BF16 operands. Pure functions;
// thread-safe; the GPU tests use them to cross-check the CUDA runner.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <variant>
#include <vector>

#include "core/enums.h"
#include "core/gemm.h"
#include "core/job.h"
#include "core/quant/integer_quant.h"
#include "core/quant/quant.h"
#include "core/status.h"

namespace gemmprof::device {

// Largest M*K*N*groups the host accepts: 2^28 multiply-adds, about 0.1-0.3 s per
// iteration for the blocked fp32 loop on one core.
inline constexpr int64_t kMaxHostMacs = int64_t{1} << 28;
// Largest element count of any one operand or output (M*K, N*K, M*N, times groups):
// 2^24 elements = 64 MiB of fp32, so a skinny shape cannot exhaust host memory.
inline constexpr int64_t kMaxHostElements = int64_t{1} << 24;
// Delayed scaling on the host builds its amax history from at most this many previous
// random tensors (timing.amax_history_len is honoured up to this cap).
inline constexpr int32_t kMaxHostAmaxHistory = 8;

// Relative Frobenius error ||out - ref|| / ||ref|| above which a recipe's result is
// `incorrect`. Chosen from host measurements on random normal BF16 data (33 x K x 47,
// K in {1, 3, 31, 257, 1024, 4096}, every pass, 3 seeds) with a margin of 1.7-2x over the
// worst case seen:
//   bf16 1e-2 (worst 6e-7 on the host: fp32 vs double accumulation; a GPU's BF16 output
//   rounding adds about 2e-3); fp8-current / fp8-delayed 1.2e-1 (worst 0.068, dgrad and
//   wgrad, whose E5M2 gradients dominate; fprop about 0.037); fp8-block 8e-2 and mxfp8
//   8e-2 (worst 0.045); nvfp4 3e-1 (worst 0.141). Serving recipes, fprop only (the
//   same sweep, host_serving_test): int8-rowwise 2.5e-2 (worst 0.0125), w8a16 2e-2 (worst
//   0.0093), w4a16 2.2e-1 (worst 0.122 at group 128; group 64 errs less): 4-bit weights
//   cost about 12% relative error on random normal data, ten times INT8's.
double ErrorThreshold(core::Recipe recipe);

// What an operand is in the training step; it decides the FP8 format (E5M2 for
// gradients in the HYBRID recipes) and the fp8-block block shape (128x128 for weights).
enum class OperandRole { kActivation, kWeight, kGradient };

// Roles of A and B in `pass`, with the ops' shape convention (derive.h): fprop (M, K, N)
// A = X, B = W; dgrad (M, N, K) A = dY, B = W^T; wgrad (K, M, N) computes dW^T = X^T dY,
// so A = X^T (activation) and B = dY^T (gradient, E5M2 in the HYBRID recipes).
OperandRole RoleOfA(core::Pass pass);
OperandRole RoleOfB(core::Pass pass);

// The operands of one (possibly grouped) GEMM C[m, n] = A[m, k] * B[n, k]^T, both
// row-major with K contiguous ("TN"), values BF16-representable.
struct HostOperands {
  int64_t m = 0, k = 0, n = 0, groups = 1;
  std::vector<float> a;  // groups * m * k
  std::vector<float> b;  // groups * n * k
  // fp8-delayed only: amaxes of previous tensors of the same distribution, index 0 = most
  // recent, per group: groups * history_len entries.
  std::vector<float> a_amax_history, b_amax_history;
  // Routed experts at uneven tokens in fprop or dgrad (ApplyGroupTokens): the rows of
  // each group's A that hold tokens (0..m; the rest are zeros and C's rows there stay
  // zero); empty: m rows each.
  std::vector<int64_t> rows;

  int64_t RowsOf(int64_t g) const { return rows.empty() ? m : rows[g]; }
  // w4a16: K elements per weight scale (TimingOptions::w4_group).
  int64_t w4_group = 128;
};

// Lays `op`'s experts out as the CUDA runner does (kernels/runner/measure_parts.h): each
// expert at the capacity, its tokens first and zeros after them, in A's rows (fprop,
// dgrad: `rows` set, so each expert's GEMM runs its own rows) or in A's and B's K columns
// (wgrad: every expert at the capacity K). No-op for ops without group_tokens.
void ApplyGroupTokens(const core::GemmOp& op, HostOperands& ops);

// Standard normal BF16-rounded values from std::mt19937_64(seed) and a Box-Muller
// transform written here, so the values do not depend on the standard library's
// distributions. Same seed, same values (std::log / cos / sin come from libm; a libm that
// differs in the last ulp could, rarely, move a value across a BF16 rounding boundary).
std::vector<float> RandomNormalBf16(int64_t count, uint64_t seed);

// Deterministic operands for `shape` x `groups` from `seed`; history_len previous
// tensors per operand are drawn (their amaxes kept) when history_len > 0.
HostOperands MakeHostOperands(const core::GemmShape& shape, int64_t groups, uint64_t seed,
                              int32_t history_len);

struct HostGemmResult {
  std::vector<float> out;         // groups * m * n: fp32 GEMM of the dequantized operands
  std::vector<double> reference;  // groups * m * n: double-accumulated GEMM of A and B
  double rel_error = 0;           // ||out - reference||_F / ||reference||_F (0 when ref is 0)
};

// Quantizes A and B with `recipe`'s formats for `pass`, dequantizes, multiplies in fp32
// and compares against the reference. Uses up to `threads` threads.
// Errors: InvalidArgument when the operand sizes do not match m, k, n, groups, or when
// fp8-delayed is asked for without an amax history.
absl::StatusOr<HostGemmResult> HostReferenceGemm(core::Recipe recipe, core::Pass pass,
                                                 const HostOperands& operands,
                                                 core::AmaxAlgo amax_algo, int threads = 2);

// Convenience for cross-checks (groups 1): `a` [m, k] and `b` [n, k] as above; for
// fp8-delayed the amax histories are the ones MakeHostOperands draws from timing.seed
// (min(timing.amax_history_len, kMaxHostAmaxHistory) tensors), so a runner that takes its
// operands from MakeHostOperands gets the same scales. Errors as above.
absl::StatusOr<HostGemmResult> HostReferenceGemm(core::Recipe recipe, core::Pass pass,
                                                 std::span<const float> a, std::span<const float> b,
                                                 int64_t m, int64_t k, int64_t n,
                                                 const core::TimingOptions& timing,
                                                 int threads = 2);

// C[m, n] = A[m, k] * B[n, k]^T in fp32, k summed in order; blocked; `threads` >= 1.
void GemmFp32(std::span<const float> a, std::span<const float> b, int64_t m, int64_t k, int64_t n,
              std::span<float> c, int threads);

// One operand's quantized form for `recipe` and `role`, and back. Quantize is what an
// autocast step pays; Dequantize is the host's stand-in for the low-precision GEMM's
// operand load. A value type; thread-compatible.
class QuantizedOperand {
 public:
  // `x` is row-major [rows, cols], K = cols. `amax_history` is used by fp8-delayed only
  // (index 0 = most recent; empty gives scale 1), `w4_group` by w4a16 only. The
  // weight-only recipes quantize the weight and keep any other operand BF16.
  static QuantizedOperand Quantize(core::Recipe recipe, OperandRole role, std::span<const float> x,
                                   int64_t rows, int64_t cols, std::span<const float> amax_history,
                                   core::AmaxAlgo amax_algo, int64_t w4_group = 128);
  // Row-major [rows, cols] fp32.
  std::vector<float> Dequantize() const;
  // Bytes of data plus scales, as a GPU stores them (BF16 2 bytes per element).
  double Bytes() const;
  // The int8-rowwise form, when this operand is one (the INT32 GEMM of I2 reads it).
  const core::quant::Int8RowScaled* Int8Rows() const {
    return std::get_if<core::quant::Int8RowScaled>(&value_);
  }

 private:
  struct Fp8Tensor {
    core::quant::TensorScaled q;
    core::quant::Fp8Format format;
  };
  using Value =
      std::variant<std::vector<float>, Fp8Tensor, core::quant::BlockScaled, core::quant::MxScaled,
                   core::quant::Nvfp4Scaled, core::quant::RowScaled, core::quant::Int8RowScaled,
                   core::quant::Int8ChannelScaled, core::quant::Int4GroupScaled>;
  explicit QuantizedOperand(Value value) : value_(std::move(value)) {}
  Value value_;
};

}  // namespace gemmprof::device
