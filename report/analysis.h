// The numbers behind every report format, computed once from a core::Report: the
// items arranged per GEMM, per-layer and full-model totals per recipe and mode, and
// speedups. Pure; the analysis keeps a pointer to the report, which must outlive it.
#pragma once

#include <array>
#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/stats.h"

namespace gemmprof::report {

// A recipe run in one mode: the columns of most tables. The recipe may be a variant with a
// recipe per pass (core/recipe_variant.h); a GEMM's cell of a variant is the item of the
// recipe its pass runs.
struct RecipeMode {
  core::RecipeVariant recipe = core::Recipe::kBf16;
  core::Mode mode = core::Mode::kAutocast;
  friend auto operator<=>(const RecipeMode&, const RecipeMode&) = default;
};

// The key of an item in GemmRow::cells: `recipe`, with `own` fast accumulation in every
// pass when the item has a setting of its own.
core::RecipeVariant CellRecipe(core::Recipe recipe, core::FastAccum own);

// Which time of an item: one GEMM per timed launch (the headline), or back to back.
enum class Figure { kIsolated, kB2b };

// One GEMM of the plan (pass, op, shape, groups) and its items per recipe and mode.
struct GemmRow {
  core::GemmOp op;
  // Keyed by the items' own recipes: a whole recipe, or for an item with its own fast
  // accumulation (core::WorkItem::fast_accum) the recipe with that setting in every pass
  // (CellRecipe); Item() resolves a variant.
  std::map<RecipeMode, const core::ItemRecord*> cells;
  // The job's --fast-accum, which decides whether a variant's pass has an item of its own.
  core::FastAccum fast_accum_option = core::FastAccum::kDefault;

  // The item that answers `key` for this GEMM: the item of the recipe key's recipe runs in
  // this GEMM's pass, in key's mode; nullptr when the job has none.
  const core::ItemRecord* Item(RecipeMode key) const;
  // The measurement of a done item, otherwise nullptr.
  const core::Measurement* Result(RecipeMode key) const;
  // The item's time when it is done, otherwise nullopt. kIsolated: the interleaved
  // rounds' estimate when measured so, else the median of iterations (results stored
  // before rounds); kB2b: the back-to-back estimate, nullopt when not measured.
  std::optional<double> TimeMs(RecipeMode key, Figure figure = Figure::kIsolated) const;
  // The estimate behind TimeMs (absent for results stored before rounds).
  core::Estimate EstimateOf(RecipeMode key, Figure figure = Figure::kIsolated) const;
};

// One item's share of a total: the measurement (bf16's for a router fallback) and its
// weight in the per-layer and full-model sums.
struct TotalTerm {
  size_t row = 0;  // index into Analysis::rows()
  const core::Measurement* m = nullptr;
  double layer_weight = 0;  // layers / num_layers for per-layer ops, 0 for once ops
  double model_weight = 0;  // layers, or 1 for once ops
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

  // Back to back (b2b) per layer by pass; meaningful when b2b_complete().
  std::array<double, 3> b2b_layer_ms{};
  int b2b_items = 0;  // done items with a back-to-back estimate
  // Done items measured before interleaved rounds (no estimate, no interval).
  int old_items = 0;
  // 95% intervals of LayerMs() and of the b2b per-layer sum (invalid when any term has
  // no interval: old results, or a single round).
  core::stats::Interval layer_ci, b2b_layer_ci;
  std::vector<TotalTerm> terms;  // plan order

  // True when every item has a measurement, so the sums are real totals.
  bool complete() const { return expected_items > 0 && done_items == expected_items; }
  double LayerMs() const { return layer_ms[0] + layer_ms[1] + layer_ms[2]; }
  double ModelMs() const { return model_ms[0] + model_ms[1] + model_ms[2]; }
  bool b2b_complete() const { return complete() && b2b_items == done_items; }
  double B2bLayerMs() const { return b2b_layer_ms[0] + b2b_layer_ms[1] + b2b_layer_ms[2]; }
  // True when every term came from interleaved rounds, so intervals and rankings exist.
  bool has_rounds() const { return complete() && old_items == 0; }
};

// What a comparison of totals sums over.
struct Scope {
  bool full_model = false;  // false: per layer (per-layer ops only, layers / num_layers)
  std::array<bool, 3> passes{true, true, true};  // by PassIndex
  Figure figure = Figure::kIsolated;
};

class Analysis {
 public:
  explicit Analysis(const core::Report& report);

  const core::Report& report() const { return *report_; }
  // The recipes a report shows, in canonical order (each whole recipe before its
  // variants): the whole recipes that occur in the items (of a job naming variants, only
  // those it named: a recipe measured only for a variant's pass has no column of its
  // own), then the job's variants. Modes that occur in the items.
  const std::vector<core::RecipeVariant>& recipes() const { return recipes_; }
  // The recipes of the items themselves (whole recipes, canonical order): the columns of
  // per-GEMM tables, where a variant's GEMMs are its passes' recipes' items.
  const std::vector<core::Recipe>& item_recipes() const { return item_recipes_; }
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
  std::optional<double> ModelSpeedup(const core::RecipeVariant& recipe,
                                     const core::RecipeVariant& baseline, core::Mode mode) const;
  // Time ratio of two complete totals, x / y (> 1: x is slower), over `scope`, with its
  // interval: per GEMM the terms are paired when both items share a non-empty group_uid
  // and their round series have equal lengths, unpaired otherwise; invalid (center only)
  // when a term has no rounds. Invalid with center 0 when a total is missing or 0.
  core::stats::Interval TotalRatio(RecipeMode x, RecipeMode y, const Scope& scope = {}) const;
  // Sum of x - y over `scope` in ms (e.g. autocast - prequant), paired as TotalRatio.
  core::stats::Interval TotalDifference(RecipeMode x, RecipeMode y, const Scope& scope = {}) const;
  // The interval of ModelSpeedup (baseline time / recipe time over the full model).
  core::stats::Interval ModelSpeedupCi(const core::RecipeVariant& recipe,
                                       const core::RecipeVariant& baseline, core::Mode mode) const;
  // True when every GEMM of the two totals is the same GPU work, measured once
  // (shared_with_item links them, or equal non-empty work_key).
  bool SameWork(RecipeMode x, RecipeMode y) const;
  // Done items without interleaved rounds (results stored before them).
  int OldItems() const;
  // Recipes whose totals are complete in `mode`, canonical order.
  std::vector<core::RecipeVariant> CompleteRecipes(core::Mode mode) const;
  // Items that are neither done nor in another final state.
  int PendingItems() const;

 private:
  // The plan's GEMMs as rows (fprop, dgrad, wgrad; plan order within a pass) with their
  // items, and the recipes and modes that occur.
  void ArrangeRows();
  // Per recipe and mode: the sums over the rows, their terms and intervals.
  void SumTotals();
  void AddTerm(Totals& t, size_t row_index, double ms, const core::Measurement& m);
  // Per-GEMM terms of x against y over `scope`, matched by row.
  std::vector<core::stats::Term> Terms(RecipeMode x, RecipeMode y, const Scope& scope) const;
  // The sum of a total over `scope` from its plain figures (no interval).
  double PlainSum(const Totals& t, const Scope& scope) const;

  const core::Report* report_;
  std::vector<core::RecipeVariant> recipes_;
  std::vector<core::Recipe> item_recipes_;
  std::vector<core::Mode> modes_;
  std::vector<core::Pass> passes_;
  std::vector<GemmRow> rows_;
  std::map<RecipeMode, Totals> totals_;
  std::vector<int64_t> sweep_ms_;
  int64_t num_layers_ = 1;
  bool has_once_ops_ = false;
};

// Sum of a total's estimates over `scope` (independent terms) with its interval.
core::stats::Interval TotalSum(const Analysis& a, RecipeMode key, const Scope& scope);

// The ratio of two items' isolated times, x / y: paired when they share a non-empty
// group_uid and round series of equal length, else unpaired; invalid without rounds.
core::stats::Interval ItemRatio(const core::Measurement& x, const core::Measurement& y);
// True when two items are the same GPU work measured once.
bool SharedWork(const core::ItemRecord& x, const core::ItemRecord& y);

// Index of a pass in Totals' arrays.
inline size_t PassIndex(core::Pass pass) { return static_cast<size_t>(pass); }

}  // namespace gemmprof::report
