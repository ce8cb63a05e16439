// The w4a16 decode GEMM: C[m, n] = A[m, k] * W'[n, k]^T for a decode step's handful of
// tokens (m <= 16), W' = q * s with q the INT4 weight and s its BF16 scale per row and
// group of `group` (64 or 128) along K (rule I4 of core/quant/integer_quant.h), BF16
// activations and out, fp32 accumulation. Made for decode, where a GEMM is bound by
// reading its weight: the weight is repacked once (outside every timing) so that each
// lane's 16-byte piece is exactly the MMA fragments it needs; a CTA of 8 warps covers 256
// weight rows and a range of K groups (K split across CTAs until the grid has about two
// CTAs per SM); the tokens of its K range are staged once per CTA in shared memory; each
// warp streams its weight through shared memory (cp.async, 2 groups ahead), turns each
// nibble pair into BF16 with one shift and one LOP3, and multiplies on the tensor cores
// (mma.sync m16n8k16, tokens as the 16 rows). The MMAs multiply q + 136 (the nibble as
// BF16, no subtraction), and 136 times the tokens' sum over the group is taken off each
// group's fp32 sum before its scale, so W' is never rounded to BF16: against the exact
// product of the quantized operands its relative error is 1.7e-3 where the CUTLASS forms,
// which round q * s to BF16, read 2.2e-3 (gpu_cuda_serving_test). Split CTAs add their
// fp32 sums in one of two ways (Reduce): into a workspace with atomics, then a second,
// small kernel (a programmatic dependent launch: it starts while the first ends) writes
// BF16 C from it and zeroes it for the next launch (no memset; graph-capturable; the splits
// add in the order they finish, so the BF16 output can differ in its last bit between
// launches); or, as one thread-block cluster, through each other's shared memory in a fixed
// order (no workspace; the same output every launch).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gemmprof::kernels {

struct W4a16DecodeProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t group = 128;                    // K elements per scale: 64 or 128
  const __nv_bfloat16* a = nullptr;       // [m, k] row-major, 16-byte aligned
  const void* w = nullptr;                // INT4 [n, k] row-major, two per byte, low first
  const __nv_bfloat16* scales = nullptr;  // [k / group, n]: n fastest
  __nv_bfloat16* c = nullptr;             // [m, n] row-major
};

class W4a16Decode {
 public:
  // The largest m it takes.
  static constexpr int64_t kMaxTokens = 16;
  // How the K splits of a column block are added. kAtomic: into an fp32 workspace with
  // atomics, a second launch writing C (the order they finish: the last bit of C can differ
  // between launches). kCluster: the splits are one thread-block cluster (at most 16 CTAs)
  // and add through distributed shared memory in a fixed order (no workspace; the same C
  // every launch); FailedPrecondition where K needs more splits or the device cannot
  // hold such a cluster.
  enum class Reduce { kAtomic, kCluster };

  // Why this problem cannot run on the decode kernel on a device of compute capability
  // `sm` (e.g. 90), naming the limit; "" when it can.
  static std::string Unsupported(const W4a16DecodeProblem& p, int sm);
  // Repacks the weight (on `stream`, after whatever wrote p.w; outside any timing) and
  // allocates the split-K workspace for CUDA device `device` with `sm_count` SMs.
  // FailedPrecondition with Unsupported's reason; ResourceExhausted when the copies do not
  // fit; a CUDA failure as Internal.
  static absl::StatusOr<W4a16Decode> Create(const W4a16DecodeProblem& p, int device, int sm,
                                            int sm_count, cudaStream_t stream,
                                            Reduce reduce = Reduce::kAtomic);

  W4a16Decode(W4a16Decode&&) noexcept;
  W4a16Decode& operator=(W4a16Decode&&) noexcept;
  ~W4a16Decode();

  // One GEMM: one launch, or two for the atomic reduction of several splits;
  // graph-capturable, any number of times in a row on one stream.
  cudaError_t Run(cudaStream_t stream) const;
  // "256 weight rows x 16 tokens per CTA, mma.sync m16n8k16, K split 11 ways (3 groups of
  // 128 per CTA), splits added by atomics, C written by a second launch".
  std::string Config() const;

 private:
  W4a16Decode() = default;
  void Release();
  cudaLaunchConfig_t LaunchConfig(cudaStream_t stream) const;
  cudaLaunchAttribute ClusterAttribute() const;

  W4a16DecodeProblem p_;
  void* packed_ = nullptr;      // the repacked weight
  float* workspace_ = nullptr;  // [m, n] fp32, zeros between launches; splits > 1 only
  int splits_ = 1, groups_per_split_ = 0;
  int finish_ctas_ = 0;  // the second launch's grid; kAtomic with splits > 1 only
  Reduce reduce_ = Reduce::kAtomic;
  size_t smem_bytes_ = 0;
};

}  // namespace gemmprof::kernels
