// The GPU benchmark: the seed tool's 5B configuration (hidden 4096, intermediate 16384,
// M = 31 * 512 tokens; 12 GEMMs per layer) run through the CUDA runner in the recipe /
// mode / autotune configurations the comparison table needs, with per-layer sums printed
// and every item written to a CSV.
#pragma once

#include <string>
#include <vector>

#include "core/job.h"
#include "core/status.h"

namespace gemmprof::bench {

// One benchmark configuration: a recipe in a mode with timing options.
struct BenchConfig {
  std::string label;  // "bf16 autotune 1", "fp8-current autocast per-gemm", ...
  core::Recipe recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
  core::TimingOptions timing;
};

struct BenchOptions {
  std::string csv_path;  // empty: no CSV
  int32_t warmup_iters = 10;
  int32_t timed_iters = 100;
  double gpu_warmup_s = 3.0;
  bool quick = false;     // one config, shapes divided by 4 (a smoke run)
  bool identity = false;  // run RunIdentityCheck instead of the comparison configs
  // Row-wise check (issue: fp8-rowwise vs PyTorch's row-wise scaled_mm): fp8-rowwise and
  // fp8-current prequant on the seed layer and on Llama-3.1-8B's fprop GEMMs at
  // M = 16, 128, 1024, 8192, instead of the comparison configs.
  bool rowwise = false;
  int32_t autotune_k = 1;  // --rowwise only: cuBLASLt candidates timed per item
};

// The 12 GEMMs of one layer of the seed's 5B model, in report order.
std::vector<core::GemmOp> SeedLayerOps(int64_t hidden, int64_t intermediate, int64_t tokens);

// Llama-3.1-8B's fprop GEMMs of one layer at M tokens: qkv (4096 -> 6144, 8 KV heads of
// 128), attn_out (4096 -> 4096), gate_up (4096 -> 2 x 14336), down (14336 -> 4096).
std::vector<core::GemmOp> Llama8bFpropOps(int64_t m);

// The configurations of the comparison table (the last repeats the first FP8 one to
// check run-to-run spread).
std::vector<BenchConfig> ComparisonConfigs(const BenchOptions& options);

// Measures identical work unshared in interleaved groups and checks the paired ratios
// (identity_bench.cc); false when a pair differs by more than 2%.
absl::StatusOr<bool> RunIdentityCheck(const BenchOptions& options);

// Runs everything on device 0 and prints per-item lines and per-layer sums.
absl::Status RunBenchmark(const BenchOptions& options);

}  // namespace gemmprof::bench
