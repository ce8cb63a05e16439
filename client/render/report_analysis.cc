#include "client/render/report_analysis.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace gemmprof::client::render {
namespace {

// Items are matched to plan ops by what makes a GEMM distinct; layers and per_layer
// are properties of the op, not of its identity.
auto OpIdentity(const core::GemmOp& op) {
  return std::make_tuple(op.pass, op.name, op.shape.m, op.shape.k, op.shape.n, op.groups);
}

template <typename T>
void InsertSorted(std::vector<T>& v, T x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) {
    v.push_back(x);
    std::sort(v.begin(), v.end());
  }
}

}  // namespace

std::optional<int64_t> SweepM(const std::string& op_name) {
  const size_t at = op_name.rfind("@m=");
  if (at == std::string::npos || at + 3 >= op_name.size()) return std::nullopt;
  int64_t m = 0;
  for (size_t i = at + 3; i < op_name.size(); ++i) {
    if (op_name[i] < '0' || op_name[i] > '9') return std::nullopt;
    m = m * 10 + (op_name[i] - '0');
  }
  return m;
}

std::optional<double> GemmRow::MedianMs(RecipeMode key) const {
  auto it = cells.find(key);
  if (it == cells.end()) return std::nullopt;
  const core::ItemRecord& item = *it->second;
  if (item.status != core::ItemStatus::kDone || !item.result) return std::nullopt;
  return item.result->time.median_ms;
}

ReportAnalysis::ReportAnalysis(const core::Report& report) : report_(&report) {
  num_layers_ = std::max<int64_t>(1, report.job.plan.num_layers);
  std::map<decltype(OpIdentity(core::GemmOp{})), size_t> index;
  auto row_of = [&](const core::GemmOp& op) -> GemmRow& {
    auto [it, inserted] = index.try_emplace(OpIdentity(op), rows_.size());
    if (inserted) rows_.push_back(GemmRow{op, {}});
    return rows_[it->second];
  };
  for (const core::GemmOp& op : report.job.plan.ops) row_of(op);

  std::vector<const core::ItemRecord*> items;
  for (const auto& item : report.items) items.push_back(&item);
  std::stable_sort(items.begin(), items.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  for (const core::ItemRecord* item : items) {
    const RecipeMode key{item->item.recipe, item->item.mode};
    GemmRow& row = row_of(item->item.op);
    row.cells[key] = item;
    InsertSorted(recipes_, key.recipe);
    InsertSorted(modes_, key.mode);
  }
  // Fprop first, then dgrad, then wgrad; ops keep their plan order within a pass.
  std::stable_sort(rows_.begin(), rows_.end(),
                   [](const GemmRow& a, const GemmRow& b) { return a.op.pass < b.op.pass; });

  // Recipe/modes with at least one measurement: only these borrow the bf16 router time
  // (a recipe the device lacks entirely stays without totals).
  std::set<RecipeMode> measured;
  for (const GemmRow& row : rows_)
    for (const auto& [key, item] : row.cells)
      if (row.MedianMs(key)) measured.insert(key);

  for (const GemmRow& row : rows_) {
    if (const auto m = SweepM(row.op.name);
        m && std::find(sweep_ms_.begin(), sweep_ms_.end(), *m) == sweep_ms_.end())
      sweep_ms_.push_back(*m);
    InsertSorted(passes_, row.op.pass);
    if (!row.op.per_layer) has_once_ops_ = true;
    for (const auto& [key, item] : row.cells) {
      Totals& t = totals_[key];
      t.key = key;
      ++t.expected_items;
      std::optional<double> ms = row.MedianMs(key);
      // Only the MoE router: training keeps it in high precision whatever the recipe (its
      // N = experts is often not FP8-alignable). Other GEMMs a recipe cannot take leave
      // the recipe without totals: borrowing bf16 for, say, the experts would misstate it.
      if (!ms && item->status == core::ItemStatus::kNotSupported && measured.count(key) &&
          key.recipe != core::Recipe::kBf16 && row.op.name.rfind("router", 0) == 0) {
        ms = row.MedianMs({core::Recipe::kBf16, key.mode});
        if (ms) {
          t.bf16_fallbacks.push_back(std::string(core::ToString(row.op.pass)) + " " + row.op.name);
        }
      }
      if (!ms) continue;
      ++t.done_items;
      const size_t p = PassIndex(row.op.pass);
      if (row.op.per_layer) {
        const double model = *ms * static_cast<double>(std::max<int64_t>(1, row.op.layers));
        t.model_ms[p] += model;
        t.layer_ms[p] += model / static_cast<double>(num_layers_);
      } else {
        t.model_ms[p] += *ms;
        t.once_ms += *ms;
      }
    }
  }
}

std::vector<const Totals*> ReportAnalysis::AllTotals() const {
  std::vector<const Totals*> out;
  for (core::Mode mode : modes_)
    for (core::Recipe recipe : recipes_)
      if (const Totals* t = FindTotals({recipe, mode})) out.push_back(t);
  return out;
}

std::optional<double> ReportAnalysis::SweepModelMs(int64_t m, RecipeMode key) const {
  double sum = 0;
  bool any = false;
  for (const GemmRow& row : rows_) {
    if (SweepM(row.op.name) != m || !row.cells.count(key)) continue;
    const std::optional<double> ms = row.MedianMs(key);
    if (!ms) return std::nullopt;
    sum += *ms * static_cast<double>(row.op.per_layer ? std::max<int64_t>(1, row.op.layers) : 1);
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
}

bool ReportAnalysis::is_shape_list() const { return report_->job.plan.model_name == "shapes"; }

const Totals* ReportAnalysis::FindTotals(RecipeMode key) const {
  auto it = totals_.find(key);
  return it == totals_.end() ? nullptr : &it->second;
}

std::optional<double> ReportAnalysis::ModelSpeedup(core::Recipe recipe, core::Recipe baseline,
                                                   core::Mode mode) const {
  const Totals* r = FindTotals({recipe, mode});
  const Totals* b = FindTotals({baseline, mode});
  if (!r || !b || !r->complete() || !b->complete() || r->ModelMs() <= 0) return std::nullopt;
  return b->ModelMs() / r->ModelMs();
}

std::vector<core::Recipe> ReportAnalysis::CompleteRecipes(core::Mode mode) const {
  std::vector<core::Recipe> out;
  for (core::Recipe r : recipes_) {
    const Totals* t = FindTotals({r, mode});
    if (t && t->complete()) out.push_back(r);
  }
  return out;
}

int ReportAnalysis::PendingItems() const {
  int n = 0;
  for (const auto& item : report_->items)
    if (!core::IsFinal(item.status)) ++n;
  return n;
}

}  // namespace gemmprof::client::render
