// The numbers behind every report format, computed once from a core::Report: the
// items arranged per GEMM, per-layer and full-model totals per recipe and mode, and
// speedups. Pure; the analysis keeps a pointer to the report, which must outlive it.
#pragma once

#include <array>
#include <compare>
#include <map>
#include <optional>
#include <vector>

#include "core/job.h"

namespace gemmprof::client::render {

// A recipe run in one mode: the columns of most tables.
struct RecipeMode {
  core::Recipe recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
  friend auto operator<=>(const RecipeMode&, const RecipeMode&) = default;
};

// One GEMM of the plan (pass, op, shape, groups) and its items per recipe and mode.
struct GemmRow {
  core::GemmOp op;
  std::map<RecipeMode, const core::ItemRecord*> cells;

  // The item's median time when it is done, otherwise nullopt.
  std::optional<double> MedianMs(RecipeMode key) const;
};

// Times of one recipe in one mode, summed over the plan. Units: milliseconds.
// Per layer is the average layer: sum(time x layers) / num_layers over the ops that
// repeat per layer (for a dense model, the plain sum of its per-layer GEMMs). The full
// model adds every per-layer op time x layers and once-per-model ops (lm_head) once.
struct Totals {
  RecipeMode key;
  int expected_items = 0;            // items of this recipe and mode in the job
  int done_items = 0;                // with a measurement
  std::array<double, 3> layer_ms{};  // by pass: fprop, dgrad, wgrad
  std::array<double, 3> model_ms{};  // by pass, full model
  double once_ms = 0;                // once-per-model ops, all passes
  // MoE router GEMMs this recipe cannot take (not_supported, e.g. FP8 with N = 8 experts)
  // while it ran the others: counted at their bf16 time in the same mode, since training
  // keeps the router in high precision. "pass op" labels, plan order.
  std::vector<std::string> bf16_fallbacks;

  // True when every item has a measurement, so the sums are real totals.
  bool complete() const { return expected_items > 0 && done_items == expected_items; }
  double LayerMs() const { return layer_ms[0] + layer_ms[1] + layer_ms[2]; }
  double ModelMs() const { return model_ms[0] + model_ms[1] + model_ms[2]; }
};

class ReportAnalysis {
 public:
  explicit ReportAnalysis(const core::Report& report);

  const core::Report& report() const { return *report_; }
  // Recipes and modes that occur in the items, in canonical order.
  const std::vector<core::Recipe>& recipes() const { return recipes_; }
  const std::vector<core::Mode>& modes() const { return modes_; }
  // Passes that occur in the plan, in fprop, dgrad, wgrad order.
  const std::vector<core::Pass>& passes() const { return passes_; }
  // GEMMs in plan order.
  const std::vector<GemmRow>& rows() const { return rows_; }
  // Number of layers the per-layer figures are averaged over (>= 1).
  int64_t num_layers() const { return num_layers_; }
  // True when any op is once-per-model (per_layer == false).
  bool has_once_ops() const { return has_once_ops_; }
  bool is_shape_list() const;
  // True for an inference sweep (op names end in "@m=<M>", derive.h): per-layer sums
  // would add different M together, so reports show per-M forward totals instead.
  bool is_sweep() const { return !sweep_ms_.empty(); }
  // The sweep's M values in plan order.
  const std::vector<int64_t>& sweep_ms() const { return sweep_ms_; }
  // Full-model forward time at sweep point `m` (sum of median x layers over its ops),
  // when every item of that recipe, mode and M has a result.
  std::optional<double> SweepModelMs(int64_t m, RecipeMode key) const;

  // Totals of a recipe in a mode, or nullptr when that combination has no items.
  const Totals* FindTotals(RecipeMode key) const;
  // Every recipe/mode's totals, canonical order.
  std::vector<const Totals*> AllTotals() const;
  // baseline full-model time / recipe full-model time in `mode`, when both totals
  // are complete (> 1: `recipe` is faster).
  std::optional<double> ModelSpeedup(core::Recipe recipe, core::Recipe baseline,
                                     core::Mode mode) const;
  // Recipes whose totals are complete in `mode`, canonical order.
  std::vector<core::Recipe> CompleteRecipes(core::Mode mode) const;
  // Items that are neither done nor in another final state.
  int PendingItems() const;

 private:
  const core::Report* report_;
  std::vector<core::Recipe> recipes_;
  std::vector<core::Mode> modes_;
  std::vector<core::Pass> passes_;
  std::vector<GemmRow> rows_;
  std::map<RecipeMode, Totals> totals_;
  std::vector<int64_t> sweep_ms_;
  int64_t num_layers_ = 1;
  bool has_once_ops_ = false;
};

// The M of an inference-sweep op name ("qkv+mlp_up@m=16" -> 16), or nullopt.
std::optional<int64_t> SweepM(const std::string& op_name);

// Index of a pass in Totals' arrays.
inline size_t PassIndex(core::Pass pass) { return static_cast<size_t>(pass); }

}  // namespace gemmprof::client::render
