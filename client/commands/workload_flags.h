// The workload and timing flags shared by `submit` and `plan`: the seed tool's flags
// (benchmark_gemm.py) exactly as they are, plus model files, presets, recipes, modes and
// timing options. Builds a core::JobSpec and validates it locally (ValidateJobSpec).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/status.h"

namespace CLI {
class App;
}

namespace gemmprof::client {

class WorkloadFlags {
 public:
  // Adds the flags to `app` (grouped under "Workload" and "Timing").
  void Register(CLI::App& app);

  // The job the flags describe. Model sources: --model FILE, --preset NAME, or the
  // six seed flags (all six required unless a file or preset supplies them; explicit
  // flags override file values); --shapes is exclusive with all of them. Unknown
  // config.json fields are written as one warning line to `warnings`.
  // Errors: InvalidArgument naming the flag, the value and what is valid.
  absl::StatusOr<core::JobSpec> BuildSpec(std::ostream& warnings) const;
  // --where's targets: one, or several model:NAME for a campaign (one job per model;
  // BuildSpec's spec carries the first). InvalidArgument naming the flag and the part.
  absl::StatusOr<std::vector<core::Placement>> WhereTargets() const;

 private:
  // The gemmprof-only flags (model sources, recipes, modes, timing).
  void RegisterMore(CLI::App& app);
  // config.json -> ModelConfig; unknown fields become one warning line.
  static absl::StatusOr<core::ModelConfig> LoadModelFile(const std::string& path,
                                                         std::ostream& warnings);
  // All six seed flags given (micro batch and sequence length may come from --sweep-m).
  absl::Status CheckSeedFlagsComplete() const;
  absl::StatusOr<std::optional<core::ModelConfig>> BuildModel(std::ostream& warnings) const;
  // --moe-skew, --moe-routing, --moe-seed and --moe-layout into `m`.
  absl::Status ApplyRouting(core::ModelConfig& m) const;
  absl::Status ApplyRecipes(core::JobSpec& spec) const;
  absl::Status ApplyModes(core::JobSpec& spec) const;
  absl::Status ApplyTiming(core::JobSpec& spec) const;

  // Seed flags; nullopt = not given.
  std::optional<int64_t> hidden_size_, intermediate_size_, num_attention_heads_, num_hidden_layers_,
      micro_batch_size_, sequence_length_;
  std::optional<std::string> shapes_;
  bool pre_quantize_ = false, no_fp8_current_ = false, no_fp8_delayed_ = false, no_fp8_ = false,
       no_fp8_block_ = false, no_fp4_ = false, no_fp8_rowwise_ = false;
  std::optional<int32_t> num_warmup_, num_iters_;
  std::optional<double> gpu_warmup_s_;
  // gemmprof flags.
  std::optional<std::string> recipes_, mode_, accounting_, l2_, fast_accum_, timing_backend_,
      context_;
  std::optional<int32_t> autotune_k_;
  // Noise-aware stopping (--precision-pct in percent) and the back-to-back count.
  std::optional<double> precision_pct_, item_budget_s_;
  std::optional<int32_t> b2b_count_;
  std::optional<uint64_t> seed_;
  bool force_ = false;
  bool profile_ = false;
  bool energy_ = false;
  std::optional<int32_t> w4_group_;
  std::optional<int> retries_;
  std::string label_;
  std::optional<std::string> model_file_, preset_;
  std::optional<int64_t> tp_;
  std::optional<double> moe_skew_;
  // Routed experts (core/routing.h); checked in BuildModel.
  std::optional<std::string> moe_routing_, moe_layout_;
  std::optional<int64_t> moe_seed_;
  bool sp_ = false, split_gate_up_ = false;
  std::optional<std::string> sweep_m_;
  std::optional<std::string> devices_;
  std::optional<std::string> where_, campaign_;
  std::optional<int32_t> priority_;
};

// Splits "a,b,,c" into trimmed non-empty parts.
std::vector<std::string> SplitList(const std::string& text);

// `--devices 0,1`: distinct device indexes 0..1023; errors name the flag and the entry.
absl::StatusOr<std::vector<int32_t>> ParseDevices(const std::string& text);

}  // namespace gemmprof::client
