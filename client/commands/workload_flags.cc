#include "client/commands/workload_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/commands/follow_job.h"
#include "core/hf_config.h"
#include "core/limits.h"
#include "core/presets.h"
#include "core/routing.h"
#include "core/shape_parser.h"
#include "core/validation.h"

namespace gemmprof::client {
namespace {

template <typename T>
void Override(std::optional<T> flag, T& field) {
  if (flag) field = *flag;
}

// 0.05, 600: the shortest text of a limit.
std::string Text(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError("--model: cannot read \"" + path + "\"");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "1,2,4" -> {1,2,4}; plain decimal digits only, each in 1..kMaxDim.
absl::StatusOr<std::vector<int64_t>> ParseSweep(const std::string& text) {
  std::vector<int64_t> out;
  for (const std::string& item : SplitList(text)) {
    // A size or a range (1:16384:*2); the parser names the bad part, this names the flag.
    absl::StatusOr<std::vector<int64_t>> values =
        core::ParseSizeRange(item, core::kMaxSweepEntries);
    if (!values.ok()) {
      std::string why(values.status().message());
      if (why.rfind("shapes: item 1 ", 0) == 0) why = why.substr(15);
      return absl::InvalidArgumentError("--sweep-m: " + why + " (sizes 1.." +
                                        std::to_string(core::kMaxDim) +
                                        ", or START:END:STEP / START:END:*F)");
    }
    out.insert(out.end(), values->begin(), values->end());
  }
  if (out.empty()) return absl::InvalidArgumentError("--sweep-m: empty list");
  if (static_cast<int64_t>(out.size()) > core::kMaxSweepEntries) {
    return absl::InvalidArgumentError("--sweep-m: " + std::to_string(out.size()) +
                                      " values, above the limit of " +
                                      std::to_string(core::kMaxSweepEntries));
  }
  return out;
}

// CLI11 accepts "nan" and "inf" for doubles and lets them through CLI::Range; these
// checks name what is valid.
CLI::Validator RealIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        const char* end = text.data() + text.size();
        const auto r = std::from_chars(text.data(), end, v);
        if (r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
          return "value " + text + " is not a number";
        if (v < lo || v > hi) return "value " + text + " is outside " + Text(lo) + ".." + Text(hi);
        return "";
      },
      "FLOAT in [" + Text(lo) + " - " + Text(hi) + "]");
}

// A count parsed exactly (CLI11 saturates out-of-range integers), or an error message.
std::variant<int64_t, std::string> ExactCount(const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  if (r.ec == std::errc::result_out_of_range) return "value " + text + " is out of range";
  if (r.ec != std::errc() || r.ptr != end) return "value " + text + " is not an integer";
  return v;
}

CLI::Validator RoundCount() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = ExactCount(text);
        if (const auto* error = std::get_if<std::string>(&v)) return *error;
        const int64_t n = std::get<int64_t>(v);
        if (n == 0) return "0 rounds: omit --num-iters for noise-aware stopping";
        if (n < core::kMinTimedIters || n > core::kMaxTimedIters)
          return "value " + text + " is outside " + std::to_string(core::kMinTimedIters) + ".." +
                 std::to_string(core::kMaxTimedIters) + " (omit it for noise-aware stopping)";
        return "";
      },
      "INT in [" + std::to_string(core::kMinTimedIters) + " - " +
          std::to_string(core::kMaxTimedIters) + "]");
}

CLI::Validator BackToBackCount() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = ExactCount(text);
        if (const auto* error = std::get_if<std::string>(&v)) return *error;
        const int64_t n = std::get<int64_t>(v);
        const std::string valid = std::to_string(core::kMinB2bCount) + ".." +
                                  std::to_string(core::kMaxB2bCount) + ", or 0 for auto";
        if (n == 1) return "1: one GEMM is not back to back; use " + valid;
        if (n != 0 && (n < core::kMinB2bCount || n > core::kMaxB2bCount))
          return "value " + text + " is outside " + valid;
        return "";
      },
      "INT 0 or [" + std::to_string(core::kMinB2bCount) + " - " +
          std::to_string(core::kMaxB2bCount) + "]");
}

template <typename E>
absl::StatusOr<E> ParseChoice(const std::string& flag, const std::string& value,
                              std::optional<E> (*parse)(std::string_view), const char* valid) {
  if (auto v = parse(value)) return *v;
  return absl::InvalidArgumentError(flag + ": unknown value \"" + value + "\"; valid: " + valid);
}

}  // namespace

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

void WorkloadFlags::Register(CLI::App& app) {
  const auto dim = CLI::Range(int64_t{1}, core::kMaxDim);
  const char* kModel = "Workload (seed flags)";
  app.add_option("--hidden_size", hidden_size_, "Hidden dimension H")->check(dim)->group(kModel);
  app.add_option("--intermediate_size", intermediate_size_, "MLP intermediate dimension I")
      ->check(dim)
      ->group(kModel);
  app.add_option("--num_attention_heads", num_attention_heads_, "Attention heads")
      ->check(dim)
      ->group(kModel);
  app.add_option("--num_hidden_layers", num_hidden_layers_, "Transformer layers")
      ->check(CLI::Range(core::kMinLayers, core::kMaxLayers))
      ->group(kModel);
  app.add_option("--micro_batch_size", micro_batch_size_, "Micro batch size")
      ->check(dim)
      ->group(kModel);
  app.add_option("--sequence_length", sequence_length_, "Sequence length (M = mbs x seq)")
      ->check(dim)
      ->group(kModel);
  app.add_option("--shapes", shapes_,
                 "GEMMs as MxKxN,... or square sizes 1024,2048; a dimension may be a range "
                 "START:END:STEP or START:END:*F, e.g. 1024:8192:*2x4096x4096 (4 shapes)")
      ->group(kModel);
  app.add_flag("--pre-quantize", pre_quantize_, "Time the GEMM only (mode prequant)")
      ->group(kModel);
  app.add_flag("--no-fp8-current", no_fp8_current_, "Skip fp8-current")->group(kModel);
  app.add_flag("--no-fp8-delayed", no_fp8_delayed_, "Skip fp8-delayed")->group(kModel);
  app.add_flag("--no-fp8", no_fp8_, "Skip MXFP8 (as in the seed tool)")->group(kModel);
  app.add_flag("--no-fp8-block", no_fp8_block_, "Skip fp8-block")->group(kModel);
  app.add_flag("--no-fp4", no_fp4_, "Skip nvfp4")->group(kModel);
  app.add_flag("--no-fp8-rowwise", no_fp8_rowwise_, "Skip fp8-rowwise")->group(kModel);
  app.add_option("--num-warmup", num_warmup_, "Warm-up iterations per item (default 10)")
      ->check(CLI::Range(0, core::kMaxWarmupIters))
      ->group(kModel);
  app.add_option("--num-iters", num_iters_,
                 "Fixed number of interleaved rounds (one timed sample per item each); omit for "
                 "noise-aware stopping")
      ->check(RoundCount())
      ->group(kModel);
  app.add_option("--gpu-warmup", gpu_warmup_s_, "Seconds of GPU warm-up before the job")
      ->check(CLI::Range(0.0, core::kMaxGpuWarmupS))
      ->group(kModel);

  RegisterMore(app);
}

void WorkloadFlags::RegisterMore(CLI::App& app) {
  const char* kMore = "Workload";
  app.add_option("--model", model_file_, "Hugging Face config.json")->group(kMore);
  std::string presets;
  for (const std::string& name : core::PresetNames())
    presets += (presets.empty() ? "" : ", ") + name;
  app.add_option("--preset", preset_, "Built-in model: " + presets)->group(kMore);
  app.add_option("--tp", tp_, "Tensor-parallel ranks (per-rank shapes)")
      ->check(CLI::Range(int64_t{1}, core::kMaxTensorParallel))
      ->group(kMore);
  app.add_flag("--sp", sp_, "Sequence parallel (changes no GEMM shape)")->group(kMore);
  app.add_flag("--split-gate-up", split_gate_up_, "Run MLP gate and up as two GEMMs")->group(kMore);
  app.add_option("--moe-skew", moe_skew_,
                 "MoE routing skew: the first expert's load / balanced load, the other "
                 "experts sharing the rest (the same as --moe-routing skew:S; default 1)")
      ->check(CLI::Range(1.0, 1e6))
      ->group(kMore);
  app.add_option("--moe-routing", moe_routing_,
                 std::string("How a step's tokens reach the MoE experts: ") +
                     core::kMoeRoutingForms +
                     " (default uniform). uniform: every expert the same share; skew:S: the "
                     "first expert S times the uniform share, the others the rest; zipf:A: "
                     "each token picks its experts with weight 1/rank^A, ranks drawn from "
                     "--moe-seed; hot:K:F: the first K experts take fraction F of the "
                     "assignments. Each expert group is timed at its own tokens")
      ->group(kMore);
  app.add_option("--moe-seed", moe_seed_, "Seeds zipf routing's draw (1 or more, default 1)")
      ->type_name("INT")
      ->check(ExactInteger(true).description(""))
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()).description(""))
      ->group(kMore);
  app.add_option("--moe-layout", moe_layout_,
                 "contiguous | masked: how the experts' tokens reach the grouped GEMM. "
                 "contiguous: each expert's rows packed as routed, the launch sized from the "
                 "counts; masked: a fixed capacity per expert with the counts beside it (CUDA "
                 "graphs, decode). Default: masked at or below 256 tokens per step, "
                 "contiguous above")
      ->group(kMore);
  app.add_option("--sweep-m", sweep_m_,
                 "Inference sweep: fprop GEMMs at each M, e.g. 1,16,128 or 1:16384:*2")
      ->group(kMore);
  app.add_option("--recipes", recipes_,
                 "Comma list of " + core::RecipeList() +
                     ". Default: the training recipes (bf16 through fp8-rowwise); the serving "
                     "recipes int8-rowwise, w8a16 and w4a16 (fprop only) run when named. A "
                     "recipe may give a pass another recipe: fp8-rowwise+wgrad:bf16 runs fprop "
                     "and dgrad in fp8-rowwise and wgrad in bf16 (passes: fprop, dgrad, wgrad); "
                     "it is reported beside the whole recipes, composed from their items. "
                     "+fast-accum:PASSES names the passes that accumulate fast, the others "
                     "split (fp8-current+fast-accum:fprop/dgrad; all; none): fp8-current, "
                     "fp8-delayed and fp8-rowwise passes only; a pass whose setting differs "
                     "from what --fast-accum gives it is measured as an item of its own")
      ->group(kMore);
  app.add_option("--mode", mode_,
                 "autocast (training: every operand quantized inside the timing) | prequant "
                 "(GEMM only) | dynamic (inference: activations quantized inside the timing, "
                 "weights once before it) | both (autocast,prequant) | all; a comma list also "
                 "works. Default: dynamic with --sweep-m, autocast otherwise")
      ->group(kMore);

  const char* kTiming = "Timing";
  app.add_option("--accounting", accounting_, "training-step | per-gemm")->group(kTiming);
  app.add_option(
         "--l2", l2_,
         "hot (default: the same buffers every iteration, as the seed tool; operands that "
         "fit the GPU's L2 are read from it) | cold (L2 flushed before every sample: "
         "every operand from memory, as a decode step reads each layer's weights, by writing "
         "a buffer of twice the L2, whose dirty lines the timed GEMM then writes back) | "
         "clean (the same, flushed by reading that buffer: no write-back inside the "
         "timing, as a decode step finds the L2; the setting to judge decode GEMMs and "
         "weight-only recipes by)")
      ->group(kTiming);
  app.add_option("--autotune", autotune_k_,
                 "Time the top K cuBLASLt candidates (default 1; for a GEMM of one cuBLASLt call "
                 "its answer for a 1 MiB workspace is timed too where it differs)")
      ->check(CLI::Range(core::kMinAutotuneK, core::kMaxAutotuneK))
      ->group(kTiming);
  app.add_option("--seed", seed_, "Random-normal input seed (0..2^64-1)")
      ->check(ExactInteger(false))
      ->group(kTiming);
  app.add_option("--fast-accum", fast_accum_,
                 "FP8 accumulation of fp8-current, fp8-delayed and fp8-rowwise GEMMs: default "
                 "(Transformer Engine's: fprop fast, dgrad and wgrad split) | on (every pass "
                 "fast) | off (every pass split); fp8-block always splits. Per pass: a recipe's "
                 "+fast-accum:PASSES (see --recipes)")
      ->group(kTiming);
  app.add_option("--precision-pct", precision_pct_,
                 "Noise-aware stopping: the items of one GEMM are timed together in interleaved "
                 "rounds until every figure compared has a 95% interval within \u00b1P% "
                 "(default 1) or --item-budget runs out; the precision reached is reported")
      ->check(RealIn(100 * core::kMinPrecisionTarget, 100 * core::kMaxPrecisionTarget))
      ->group(kTiming);
  app.add_option("--item-budget", item_budget_s_,
                 "Noise-aware stopping: seconds of rounds per distinct GEMM item (default 2)")
      ->check(RealIn(core::kMinItemBudgetS, core::kMaxItemBudgetS))
      ->group(kTiming);
  app.add_option("--b2b", b2b_count_,
                 "GEMMs back to back in one graph for the b2b figure (default 0: by GEMM size)")
      ->check(BackToBackCount())
      ->group(kTiming);
  app.add_option("--timing", timing_backend_,
                 "events (default): CUDA events around each launch of the timed graph. "
                 "kernels: events as well, plus each launch's kernel durations summed from "
                 "CUPTI (launch and graph gaps left out), shown beside them; a node without "
                 "CUPTI reports the items not_supported")
      ->group(kTiming);
  app.add_option("--context", context_,
                 "Which GEMMs share a batch of interleaved rounds, and so a power state. "
                 "workload (default): those that run together in your workload: one training "
                 "step; one M of a --sweep-m or of a --shapes list (a decode GEMM is not timed "
                 "beside a large one). isolated: each GEMM alone (its recipes and modes still "
                 "interleaved). The report names each batch and the power and clock it ran at")
      ->group(kTiming);
  app.add_option("--w4-group", w4_group_,
                 "w4a16: K elements sharing one bf16 weight scale, 64 or 128 (default 128, "
                 "as Marlin/Machete-class kernels)")
      ->group(kTiming);
  app.add_flag("--energy", energy_,
               "Also measure board energy: after its rounds, each item's back-to-back graph "
               "runs for a window of at least 1 s and 10 updates of the GPU's energy counter "
               "(NVML); joules per GEMM with a 95% interval, mean power, TFLOP/J. Items on a "
               "board without the counter (or the host runner) say why, never a number")
      ->group(kTiming);
  app.add_flag("--profile", profile_,
               "Nsight mode: after its rounds each item's timed graph runs once more between "
               "cudaProfilerStart/Stop in an NVTX range \"pass op MxKxN recipe mode\", for "
               "`nsys profile --capture-range=cudaProfilerApi` or `ncu --profile-from-start off` "
               "on the daemon (README); never served from or to the result cache")
      ->group(kTiming);
  app.add_flag("--force", force_, "Bypass the result cache")->group(kTiming);
  app.add_option("--retries", retries_,
                 "Times a batch whose GPU worker died, hung or lost its device context is "
                 "measured again before it is split to find the GEMM at fault (default 1, 0: "
                 "fail its items at the first fault, at most 3). Retried items say so in their "
                 "notes; the items of a GEMM whose fault comes back fail \"reproduced on retry\"")
      ->group(kTiming);
  app.add_option("--label", label_, "Free text shown in reports")->group(kTiming);
  app.add_option("--where", where_,
                 "Where the job runs: this-node (the daemon you talk to, on its GPUs), any "
                 "(any daemon of the cluster with this daemon's GPU model), model:NAME (any "
                 "daemon with that GPU, e.g. 'model:NVIDIA H200'), node:NAME; model:A,model:B "
                 "submits one job per model under one campaign (report --campaign). Default: "
                 "any with a PostgreSQL store, this-node with SQLite (`gemmprof cluster` lists "
                 "the models)")
      ->group(kMore);
  app.add_option("--campaign", campaign_,
                 "Name of the campaign the job(s) join (default with several --where models: "
                 "a new name, printed); report --campaign NAME compares them")
      ->group(kMore);
  app.add_option("--priority", priority_,
                 "Order of the job's batches in the cluster queue, -10..10, higher first "
                 "(admin tokens only; default 0)")
      ->group(kMore);
  app.add_option("--devices", devices_,
                 "GPUs of the node to run on, e.g. 0,1 (default: every idle GPU of the job's "
                 "model; see `gemmprof devices`)")
      ->group(kMore);
}

absl::StatusOr<core::ModelConfig> WorkloadFlags::LoadModelFile(const std::string& path,
                                                               std::ostream& warnings) {
  ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  auto parsed = core::ParseHfConfigJson(text, std::filesystem::path(path).stem().string());
  if (!parsed.ok())
    return absl::InvalidArgumentError("--model " + path + ": " +
                                      std::string(parsed.status().message()));
  if (!parsed->unknown_fields.empty()) {
    std::string list;
    for (const auto& f : parsed->unknown_fields) list += (list.empty() ? "" : ", ") + f;
    warnings << "gemmprof: warning: " << path
             << ": fields not understood (the model may have GEMMs not derived): " << list << "\n";
  }
  return std::move(parsed->config);
}

absl::Status WorkloadFlags::CheckSeedFlagsComplete() const {
  // With --sweep-m the tokens come from the sweep, as in derive.h.
  const std::pair<const char*, bool> seed[] = {
      {"--hidden_size", hidden_size_.has_value()},
      {"--intermediate_size", intermediate_size_.has_value()},
      {"--num_attention_heads", num_attention_heads_.has_value()},
      {"--num_hidden_layers", num_hidden_layers_.has_value()},
      {"--micro_batch_size", micro_batch_size_.has_value() || sweep_m_.has_value()},
      {"--sequence_length", sequence_length_.has_value() || sweep_m_.has_value()}};
  std::string missing;
  for (const auto& [flag, given] : seed)
    if (!given) missing += (missing.empty() ? "" : ", ") + std::string(flag);
  if (missing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError("model flags need all six seed flags; missing: " + missing);
}

absl::StatusOr<std::optional<core::ModelConfig>> WorkloadFlags::BuildModel(
    std::ostream& warnings) const {
  const bool any_seed = hidden_size_ || intermediate_size_ || num_attention_heads_ ||
                        num_hidden_layers_ || micro_batch_size_ || sequence_length_;
  if (model_file_ && preset_)
    return absl::InvalidArgumentError("--model and --preset are mutually exclusive");
  if (shapes_ && (any_seed || model_file_ || preset_ || sweep_m_))
    return absl::InvalidArgumentError(
        "--shapes and model arguments (--hidden_size ..., --model, --preset, --sweep-m) are "
        "mutually exclusive");
  if (!any_seed && !model_file_ && !preset_) {
    if (tp_ || sp_ || split_gate_up_ || sweep_m_ || moe_skew_ || moe_routing_ || moe_seed_ ||
        moe_layout_)
      return absl::InvalidArgumentError(
          "--tp, --sp, --split-gate-up, --moe-skew, --moe-routing, --moe-seed, --moe-layout "
          "and --sweep-m need a model");
    return std::optional<core::ModelConfig>();
  }
  core::ModelConfig m;
  if (preset_) {
    auto preset = core::FindPreset(*preset_);
    if (!preset.ok())
      return absl::InvalidArgumentError("--preset: " + std::string(preset.status().message()));
    m = std::move(*preset);
  } else if (model_file_) {
    ASSIGN_OR_RETURN(m, LoadModelFile(*model_file_, warnings));
  } else {
    RETURN_IF_ERROR(CheckSeedFlagsComplete());
  }
  Override(hidden_size_, m.hidden_size);
  Override(intermediate_size_, m.intermediate_size);
  Override(num_attention_heads_, m.num_attention_heads);
  Override(num_hidden_layers_, m.num_hidden_layers);
  Override(micro_batch_size_, m.micro_batch_size);
  Override(sequence_length_, m.sequence_length);
  Override(tp_, m.tensor_parallel);
  RETURN_IF_ERROR(ApplyRouting(m));
  if (sp_) m.sequence_parallel = true;
  if (split_gate_up_) m.split_gate_up = true;
  if (sweep_m_) {
    ASSIGN_OR_RETURN(m.sweep_m, ParseSweep(*sweep_m_));
  }
  return std::optional<core::ModelConfig>(std::move(m));
}

absl::Status WorkloadFlags::ApplyRouting(core::ModelConfig& m) const {
  if (moe_skew_ && moe_routing_) {
    return absl::InvalidArgumentError(
        "--moe-skew and --moe-routing: give one: --moe-skew S is --moe-routing skew:S");
  }
  Override(moe_skew_, m.moe_skew);
  if (moe_routing_) {
    // The form alone; the limits that need the model are the server's validation.
    RETURN_IF_ERROR(core::ParseMoeRouting(*moe_routing_, "--moe-routing").status());
    m.moe_routing = *moe_routing_;
  }
  Override(moe_seed_, m.moe_seed);
  if (moe_layout_) {
    RETURN_IF_ERROR(
        ParseChoice("--moe-layout", *moe_layout_, &core::ParseMoeLayout, "contiguous, masked")
            .status());
    m.moe_layout = *moe_layout_;
  }
  return absl::OkStatus();
}

absl::Status WorkloadFlags::ApplyRecipes(core::JobSpec& spec) const {
  std::vector<core::Recipe> recipes = core::DefaultRecipes();
  std::vector<core::RecipeVariant> variants;
  if (recipes_) {
    recipes.clear();
    std::vector<core::RecipeVariant> listed;
    for (const std::string& name : SplitList(*recipes_)) {
      const absl::StatusOr<core::RecipeVariant> v = core::ParseRecipeVariant(name);
      if (!v.ok())
        return absl::InvalidArgumentError("--recipes: " + std::string(v.status().message()));
      if (std::find(listed.begin(), listed.end(), *v) != listed.end())
        return absl::InvalidArgumentError("--recipes: \"" + name + "\" is listed twice");
      listed.push_back(*v);
      if (v->composite()) {
        variants.push_back(*v);
      } else {
        recipes.push_back(v->base);
      }
    }
    if (listed.empty()) return absl::InvalidArgumentError("--recipes: empty list");
  }
  const std::pair<bool, core::Recipe> skips[] = {{no_fp8_current_, core::Recipe::kFp8Current},
                                                 {no_fp8_delayed_, core::Recipe::kFp8Delayed},
                                                 {no_fp8_, core::Recipe::kMxfp8},
                                                 {no_fp8_block_, core::Recipe::kFp8Block},
                                                 {no_fp4_, core::Recipe::kNvfp4},
                                                 {no_fp8_rowwise_, core::Recipe::kFp8Rowwise}};
  for (const auto& [skip, recipe] : skips)
    if (skip) std::erase(recipes, recipe);
  if (recipes.empty() && variants.empty())
    return absl::InvalidArgumentError("no recipe left to run after the --no-* flags");
  // The default list travels as an empty list, which the server expands the same way.
  if (recipes != core::DefaultRecipes() || !variants.empty()) spec.recipes = std::move(recipes);
  spec.variants = std::move(variants);
  return absl::OkStatus();
}

absl::Status WorkloadFlags::ApplyModes(core::JobSpec& spec) const {
  if (!mode_) {
    if (pre_quantize_) spec.modes = {core::Mode::kPrequant};
    return absl::OkStatus();
  }
  constexpr const char* kValid = "autocast, prequant, dynamic, both, all (or a comma list)";
  if (*mode_ == "both") {
    spec.modes = {core::Mode::kAutocast, core::Mode::kPrequant};
  } else if (*mode_ == "all") {
    spec.modes = {core::Mode::kAutocast, core::Mode::kPrequant, core::Mode::kDynamic};
  } else {
    for (const std::string& name : SplitList(*mode_)) {
      const auto m = core::ParseMode(name);
      if (!m) {
        return absl::InvalidArgumentError("--mode: unknown value \"" + name +
                                          "\"; valid: " + kValid);
      }
      if (std::find(spec.modes.begin(), spec.modes.end(), *m) != spec.modes.end())
        return absl::InvalidArgumentError("--mode: \"" + name + "\" is listed twice");
      spec.modes.push_back(*m);
    }
    if (spec.modes.empty()) return absl::InvalidArgumentError("--mode: empty list");
  }
  if (pre_quantize_ && spec.modes != std::vector<core::Mode>{core::Mode::kPrequant})
    return absl::InvalidArgumentError(
        "--pre-quantize means --mode prequant; it conflicts with --mode " + *mode_);
  return absl::OkStatus();
}

absl::Status WorkloadFlags::ApplyTiming(core::JobSpec& spec) const {
  core::TimingOptions& t = spec.timing;
  if (num_iters_ && (precision_pct_ || item_budget_s_))
    return absl::InvalidArgumentError(
        std::string("--num-iters (a fixed number of rounds) conflicts with ") +
        (precision_pct_ ? "--precision-pct" : "--item-budget") +
        " (noise-aware stopping); give one or the other");
  Override(num_warmup_, t.warmup_iters);
  Override(num_iters_, t.timed_iters);
  // Asking for a precision or a budget asks for noise-aware rounds.
  if (precision_pct_ || item_budget_s_) t.timed_iters = 0;
  // The flag's range is the target's range in percent; clamping absorbs the rounding of /100.
  if (precision_pct_)
    t.precision_target =
        std::clamp(*precision_pct_ / 100, core::kMinPrecisionTarget, core::kMaxPrecisionTarget);
  Override(item_budget_s_, t.item_budget_s);
  Override(b2b_count_, t.b2b_count);
  Override(gpu_warmup_s_, t.gpu_warmup_s);
  Override(autotune_k_, t.autotune_k);
  Override(seed_, t.seed);
  if (accounting_) {
    ASSIGN_OR_RETURN(t.accounting, ParseChoice("--accounting", *accounting_, &core::ParseAccounting,
                                               "training-step, per-gemm"));
  }
  if (l2_) {
    ASSIGN_OR_RETURN(t.l2, ParseChoice("--l2", *l2_, &core::ParseL2Policy, "hot, cold, clean"));
  }
  if (fast_accum_) {
    ASSIGN_OR_RETURN(t.fast_accum, ParseChoice("--fast-accum", *fast_accum_, &core::ParseFastAccum,
                                               "default, on, off"));
  }
  if (timing_backend_) {
    ASSIGN_OR_RETURN(t.timing_backend, ParseChoice("--timing", *timing_backend_,
                                                   &core::ParseTimingBackend, "events, kernels"));
  }
  if (context_) {
    ASSIGN_OR_RETURN(t.context, ParseChoice("--context", *context_, &core::ParseMeasureContext,
                                            "workload, isolated"));
  }
  t.energy = energy_;
  if (w4_group_) {
    if (*w4_group_ != 64 && *w4_group_ != 128) {
      return absl::InvalidArgumentError(
          absl::StrCat("--w4-group: ", *w4_group_, " is not a w4a16 group size; give 64 or 128"));
    }
    t.w4_group = *w4_group_;
  }
  return absl::OkStatus();
}

absl::StatusOr<core::JobSpec> WorkloadFlags::BuildSpec(std::ostream& warnings) const {
  core::JobSpec spec;
  ASSIGN_OR_RETURN(spec.model, BuildModel(warnings));
  if (!spec.model) {
    if (!shapes_)
      return absl::InvalidArgumentError(
          "no workload: give --shapes, the six model flags (--hidden_size ...), --model or "
          "--preset");
    auto shapes = core::ParseShapeList(*shapes_);
    if (!shapes.ok()) {
      // The parser already names the field ("shapes: ..."); make it the flag's name.
      const std::string msg(shapes.status().message());
      return absl::InvalidArgumentError(msg.rfind("shapes:", 0) == 0 ? "--" + msg
                                                                     : "--shapes: " + msg);
    }
    spec.shapes = std::move(*shapes);
  }
  RETURN_IF_ERROR(ApplyRecipes(spec));
  RETURN_IF_ERROR(ApplyModes(spec));
  RETURN_IF_ERROR(ApplyTiming(spec));
  spec.force = force_;
  spec.profile = profile_;
  spec.label = label_;
  if (retries_) {
    if (*retries_ < 0 || *retries_ > core::kMaxRetries) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--retries: ", *retries_, " is out of range; give 0 (no retry) to ", core::kMaxRetries));
    }
    spec.retries = *retries_;
  }
  if (devices_) {
    ASSIGN_OR_RETURN(spec.devices, ParseDevices(*devices_));
  }
  ASSIGN_OR_RETURN(const std::vector<core::Placement> targets, WhereTargets());
  if (!targets.empty()) spec.where = targets.front();
  if (priority_) {
    if (*priority_ < core::kMinPriority || *priority_ > core::kMaxPriority) {
      return absl::InvalidArgumentError(absl::StrCat("--priority: ", *priority_,
                                                     " is out of range; give ", core::kMinPriority,
                                                     "..", core::kMaxPriority));
    }
    spec.priority = *priority_;
  }
  if (campaign_) {
    if (campaign_->empty() || campaign_->size() > core::kMaxCampaignChars) {
      return absl::InvalidArgumentError(absl::StrCat("--campaign: '", *campaign_, "' must be 1..",
                                                     core::kMaxCampaignChars, " characters"));
    }
    spec.campaign = *campaign_;
  }
  if (!spec.devices.empty() && spec.where.Clustered()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices: names GPUs of one node, but --where ", core::ToString(spec.where),
                     " hands the job to the cluster queue; give --where this-node with --devices"));
  }
  RETURN_IF_ERROR(core::ValidateJobSpec(spec));
  return spec;
}

absl::StatusOr<std::vector<core::Placement>> WorkloadFlags::WhereTargets() const {
  std::vector<core::Placement> targets;
  if (!where_) return targets;
  const std::vector<std::string> parts = absl::StrSplit(*where_, ',');
  for (const std::string& part : parts) {
    ASSIGN_OR_RETURN(
        core::Placement p,
        core::ParsePlacement("--where", std::string(absl::StripAsciiWhitespace(part))));
    if (p.kind == core::PlacementKind::kDefault) {
      return absl::InvalidArgumentError(
          absl::StrCat("--where: '", *where_, "' has an empty part; give ", core::kPlacementForms));
    }
    targets.push_back(std::move(p));
  }
  if (targets.size() > 1) {
    for (const core::Placement& p : targets) {
      if (p.kind != core::PlacementKind::kModel) {
        return absl::InvalidArgumentError(
            absl::StrCat("--where: '", *where_,
                         "': several targets make a campaign, one job per device "
                         "model; each part must be model:NAME (",
                         core::ToString(p), " is not)"));
      }
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (targets[i].name == targets[j].name) {
          return absl::InvalidArgumentError(
              absl::StrCat("--where: model:", targets[i].name, " is listed twice"));
        }
      }
    }
  }
  return targets;
}

absl::StatusOr<std::vector<int32_t>> ParseDevices(const std::string& text) {
  constexpr int32_t kMaxDevice = 1023;
  std::vector<int32_t> out;
  for (absl::string_view entry : absl::StrSplit(text, ',')) {
    const absl::string_view e = absl::StripAsciiWhitespace(entry);
    int32_t d = 0;
    if (!absl::SimpleAtoi(e, &d) || d < 0 || d > kMaxDevice) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: '", e, "' is not a device index (0..", kMaxDevice, "; e.g. --devices 0,1)"));
    }
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat("--devices: device ", d, " is listed twice"));
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace gemmprof::client
