// GEMM problems as the rest of the system sees them: a shape, the pass it belongs to,
// and how often it occurs in a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/enums.h"

namespace gemmprof::core {

// C[M,N] = A[M,K] * B[K,N] in the pass's own orientation. Units: elements.
struct GemmShape {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;

  // 2*M*K*N floating-point operations.
  double Flops() const { return 2.0 * static_cast<double>(m) * k * n; }
  // "MxKxN".
  std::string ToString() const;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// One GEMM of a model (or of a shape list) in one pass.
struct GemmOp {
  std::string name;  // "qkv", "attn_out", "mlp_up", "mlp_down", "lm_head", ... or "MxKxN"
  Pass pass = Pass::kFprop;
  GemmShape shape;
  int64_t groups = 1;     // GEMMs of one shape run as one grouped call (MoE experts)
  int64_t layers = 1;     // number of layers containing this op (full-model multiplier)
  bool per_layer = true;  // false for once-per-model ops (LM head)
  // Routed experts whose tokens routing left uneven: each group's tokens (the token
  // dimension: M in fprop and dgrad, K in wgrad), in expert order, each 0..that
  // dimension of `shape` (the capacity: the largest); empty when every group runs the
  // whole shape. Size `groups` when not empty.
  std::vector<int64_t> group_tokens;
  MoeLayout layout = MoeLayout::kContiguous;  // grouped ops only

  // The token dimension of `pass`'s shape: M in fprop and dgrad, K in wgrad.
  int64_t TokenDim() const { return pass == Pass::kWgrad ? shape.k : shape.m; }
  // Flops of the whole op: groups * 2MKN, each group at its own tokens.
  double Flops() const;
  friend bool operator==(const GemmOp&, const GemmOp&) = default;
};

// The derived GEMMs of a job, nothing run.
struct Plan {
  std::string model_name;   // preset name, file name, "custom" or "shapes"
  int64_t num_layers = 1;   // 1 for shape lists
  std::vector<GemmOp> ops;  // in report order: per pass, per op
};

}  // namespace gemmprof::core
