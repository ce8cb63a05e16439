#include "report/analysis.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/derive.h"
#include "report/figures.h"

namespace gemmprof::report {
namespace {

// Items are matched to plan ops by what makes a GEMM distinct; layers and per_layer
// are properties of the op, not of its identity.
auto OpIdentity(const core::GemmOp& op) {
  return std::make_tuple(op.pass, op.name, op.shape.m, op.shape.k, op.shape.n, op.groups);
}

// Same rounds: the per-round values can be paired.
bool Paired(const core::Measurement& x, const core::Measurement& y, Figure figure) {
  const auto& sx = figure == Figure::kB2b ? x.b2b_round_ms : x.round_ms;
  const auto& sy = figure == Figure::kB2b ? y.b2b_round_ms : y.round_ms;
  return !x.group_uid.empty() && x.group_uid == y.group_uid && sx.size() == sy.size() &&
         sx.size() >= 2;
}

const std::vector<double>& Series(const core::Measurement& m, Figure figure) {
  return figure == Figure::kB2b ? m.b2b_round_ms : m.round_ms;
}

const core::Estimate& Est(const core::Measurement& m, Figure figure) {
  return figure == Figure::kB2b ? m.b2b : m.isolated;
}

// A total's term. GEMMs of one batch share their rounds (group_uid): SumOfTerms adds
// their per-round values first, so the drift they share is counted.
core::stats::SumTerm SumTermOf(double weight, const core::Measurement& m, Figure figure) {
  return {weight, Series(m, figure), Est(m, figure), m.group_uid};
}

template <typename T>
void InsertSorted(std::vector<T>& v, T x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) {
    v.push_back(x);
    std::sort(v.begin(), v.end());
  }
}

}  // namespace

core::RecipeVariant CellRecipe(core::Recipe recipe, core::FastAccum own) {
  core::RecipeVariant v(recipe);
  if (own != core::FastAccum::kDefault) v.pass_fast_accum.fill(own);
  return v;
}

const core::ItemRecord* GemmRow::Item(RecipeMode key) const {
  const core::PassItem p = core::ItemFor(key.recipe, op.pass, fast_accum_option);
  auto it = cells.find({CellRecipe(p.recipe, p.fast_accum), key.mode});
  return it == cells.end() ? nullptr : it->second;
}

const core::Measurement* GemmRow::Result(RecipeMode key) const {
  const core::ItemRecord* found = Item(key);
  if (found == nullptr) return nullptr;
  const core::ItemRecord& item = *found;
  if (item.status != core::ItemStatus::kDone || !item.result) return nullptr;
  return &*item.result;
}

std::optional<double> GemmRow::TimeMs(RecipeMode key, Figure figure) const {
  const core::Measurement* m = Result(key);
  if (!m) return std::nullopt;
  if (figure == Figure::kB2b) {
    if (!m->b2b.present()) return std::nullopt;
    return m->b2b.center_ms;
  }
  return HeadlineMs(*m);
}

core::Estimate GemmRow::EstimateOf(RecipeMode key, Figure figure) const {
  const core::Measurement* m = Result(key);
  if (!m) return {};
  return figure == Figure::kB2b ? m->b2b : m->isolated;
}

core::stats::Interval ItemRatio(const core::Measurement& x, const core::Measurement& y) {
  if (!x.isolated.present() || !y.isolated.present()) {
    const double d = HeadlineMs(y);
    const double c = d > 0 ? HeadlineMs(x) / d : 0;
    return {c, c, c, false};
  }
  if (Paired(x, y, Figure::kIsolated)) return core::stats::PairedRatio(x.round_ms, y.round_ms);
  return core::stats::UnpairedRatio(x.isolated, y.isolated);
}

bool SharedWork(const core::ItemRecord& x, const core::ItemRecord& y) {
  if (!x.result || !y.result) return false;
  if (&x == &y || x.item.seq == y.item.seq) return true;
  const core::Measurement& a = *x.result;
  const core::Measurement& b = *y.result;
  if (a.shared_with_item > 0 &&
      (a.shared_with_item == y.item.id || a.shared_with_item == b.shared_with_item))
    return true;
  if (b.shared_with_item > 0 && b.shared_with_item == x.item.id) return true;
  return !a.work_key.empty() && a.work_key == b.work_key;
}

Analysis::Analysis(const core::Report& report) : report_(&report) {
  num_layers_ = std::max<int64_t>(1, report.job.plan.num_layers);
  ArrangeRows();
  SumTotals();
}

void Analysis::ArrangeRows() {
  const core::Report& report = *report_;
  std::map<decltype(OpIdentity(core::GemmOp{})), size_t> index;
  auto row_of = [&](const core::GemmOp& op) -> GemmRow& {
    auto [it, inserted] = index.try_emplace(OpIdentity(op), rows_.size());
    if (inserted) rows_.push_back(GemmRow{op, {}, report.job.spec.timing.fast_accum});
    return rows_[it->second];
  };
  for (const core::GemmOp& op : report.job.plan.ops) row_of(op);

  std::vector<const core::ItemRecord*> items;
  for (const auto& item : report.items) items.push_back(&item);
  std::stable_sort(items.begin(), items.end(),
                   [](auto* a, auto* b) { return a->item.seq < b->item.seq; });
  // A job naming variants shows only the whole recipes it named; others' items answer a
  // variant's pass.
  const core::JobSpec& spec = report.job.spec;
  const std::vector<core::Recipe> named = core::EffectiveRecipes(spec);
  for (const core::ItemRecord* item : items) {
    const RecipeMode key{CellRecipe(item->item.recipe, item->item.fast_accum), item->item.mode};
    GemmRow& row = row_of(item->item.op);
    row.cells[key] = item;
    InsertSorted(item_recipes_, item->item.recipe);
    // An item with its own accumulation answers a variant only.
    if (item->item.fast_accum == core::FastAccum::kDefault &&
        (spec.variants.empty() ||
         std::find(named.begin(), named.end(), item->item.recipe) != named.end()))
      InsertSorted(recipes_, key.recipe);
    InsertSorted(modes_, key.mode);
  }
  for (const core::RecipeVariant& v : spec.variants) {
    const bool has_items = std::any_of(rows_.begin(), rows_.end(), [&](const GemmRow& row) {
      for (core::Mode mode : modes_)
        if (row.Item({v, mode})) return true;
      return false;
    });
    if (has_items) InsertSorted(recipes_, v);
  }
  // Fprop first, then dgrad, then wgrad; ops keep their plan order within a pass.
  std::stable_sort(rows_.begin(), rows_.end(),
                   [](const GemmRow& a, const GemmRow& b) { return a.op.pass < b.op.pass; });
}

void Analysis::SumTotals() {
  // Recipe/modes with at least one measurement: only these borrow the bf16 router time
  // (a recipe the device lacks entirely stays without totals).
  // The (recipe, mode) keys a row answers, with their items: every recipe shown (whole
  // or variant) in every mode.
  auto keys_of = [&](const GemmRow& row) {
    std::vector<std::pair<RecipeMode, const core::ItemRecord*>> out;
    for (const core::RecipeVariant& recipe : recipes_)
      for (core::Mode mode : modes_)
        if (const core::ItemRecord* item = row.Item({recipe, mode}))
          out.push_back({{recipe, mode}, item});
    return out;
  };
  std::set<RecipeMode> measured;
  for (const GemmRow& row : rows_)
    for (const auto& [key, item] : keys_of(row))
      if (row.TimeMs(key)) measured.insert(key);

  for (const GemmRow& row : rows_) {
    if (const auto m = core::SweepM(row.op.name);
        m && std::find(sweep_ms_.begin(), sweep_ms_.end(), *m) == sweep_ms_.end())
      sweep_ms_.push_back(*m);
    InsertSorted(passes_, row.op.pass);
    if (!row.op.per_layer) has_once_ops_ = true;
    for (const auto& [key, item] : keys_of(row)) {
      Totals& t = totals_[key];
      t.key = key;
      ++t.expected_items;
      std::optional<double> ms = row.TimeMs(key);
      // Only the MoE router: training keeps it in high precision whatever the recipe (its
      // N = experts is often not FP8-alignable). Other GEMMs a recipe cannot take leave
      // the recipe without totals: borrowing bf16 for, say, the experts would misstate it.
      if (!ms && item->status == core::ItemStatus::kNotSupported && measured.count(key) &&
          key.recipe != core::Recipe::kBf16 && row.op.name.rfind("router", 0) == 0) {
        ms = row.TimeMs({core::Recipe::kBf16, key.mode});
        if (ms) {
          t.bf16_fallbacks.push_back(std::string(core::ToString(row.op.pass)) + " " + row.op.name);
        }
      }
      if (!ms) continue;
      const core::Measurement* m = row.Result(key);
      if (!m) m = row.Result({core::Recipe::kBf16, key.mode});  // the router fallback
      AddTerm(t, static_cast<size_t>(&row - rows_.data()), *ms, *m);
    }
  }
  for (auto& [key, t] : totals_) {
    std::vector<core::stats::SumTerm> iso, b2b;
    for (const TotalTerm& term : t.terms) {
      if (term.layer_weight <= 0) continue;
      iso.push_back(SumTermOf(term.layer_weight, *term.m, Figure::kIsolated));
      b2b.push_back(SumTermOf(term.layer_weight, *term.m, Figure::kB2b));
    }
    t.layer_ci = core::stats::SumOfTerms(iso);
    t.b2b_layer_ci = core::stats::SumOfTerms(b2b);
  }
}

void Analysis::AddTerm(Totals& t, size_t row_index, double ms, const core::Measurement& m) {
  const GemmRow& row = rows_[row_index];
  ++t.done_items;
  if (!m.isolated.present()) ++t.old_items;
  const size_t p = PassIndex(row.op.pass);
  const double layers = static_cast<double>(std::max<int64_t>(1, row.op.layers));
  TotalTerm term{row_index, &m, 0, 1};
  if (row.op.per_layer) {
    term.model_weight = layers;
    term.layer_weight = layers / static_cast<double>(num_layers_);
    t.model_ms[p] += ms * layers;
    t.layer_ms[p] += ms * layers / static_cast<double>(num_layers_);
    if (m.b2b.present()) t.b2b_layer_ms[p] += m.b2b.center_ms * term.layer_weight;
  } else {
    t.model_ms[p] += ms;
    t.once_ms += ms;
  }
  if (m.b2b.present()) ++t.b2b_items;
  t.terms.push_back(term);
}

std::vector<core::stats::Term> Analysis::Terms(RecipeMode x, RecipeMode y,
                                               const Scope& scope) const {
  std::vector<core::stats::Term> out;
  const Totals* tx = FindTotals(x);
  const Totals* ty = FindTotals(y);
  if (!tx || !ty) return out;
  std::map<size_t, const TotalTerm*> in_y;
  for (const TotalTerm& term : ty->terms) in_y[term.row] = &term;
  std::set<size_t> seen;
  auto weight = [&](const TotalTerm& term) {
    if (!scope.passes[PassIndex(rows_[term.row].op.pass)]) return 0.0;
    return scope.full_model ? term.model_weight : term.layer_weight;
  };
  for (const TotalTerm& a : tx->terms) {
    seen.insert(a.row);
    const double w = weight(a);
    if (w <= 0) continue;
    core::stats::Term term;
    term.weight = w;
    term.x = Series(*a.m, scope.figure);
    term.x_est = Est(*a.m, scope.figure);
    if (auto it = in_y.find(a.row); it != in_y.end()) {
      term.y = Series(*it->second->m, scope.figure);
      term.y_est = Est(*it->second->m, scope.figure);
      term.paired = Paired(*a.m, *it->second->m, scope.figure);
      // GEMMs of one batch share their rounds: RatioOfSums counts their covariance.
      if (term.paired) term.rounds_id = a.m->group_uid;
    }
    out.push_back(term);
  }
  for (const TotalTerm& b : ty->terms) {
    const double w = weight(b);
    if (seen.count(b.row) || w <= 0) continue;
    core::stats::Term term;
    term.weight = w;
    term.y = Series(*b.m, scope.figure);
    term.y_est = Est(*b.m, scope.figure);
    out.push_back(term);
  }
  return out;
}

core::stats::Interval Analysis::TotalRatio(RecipeMode x, RecipeMode y, const Scope& scope) const {
  const Totals* tx = FindTotals(x);
  const Totals* ty = FindTotals(y);
  if (!tx || !ty || !tx->complete() || !ty->complete()) return {};
  if (!tx->has_rounds() || !ty->has_rounds() ||
      (scope.figure == Figure::kB2b && (!tx->b2b_complete() || !ty->b2b_complete()))) {
    if (scope.figure == Figure::kB2b) return {};
    const double sx = PlainSum(*tx, scope), sy = PlainSum(*ty, scope);
    const double c = sy > 0 ? sx / sy : 0;
    return {c, c, c, false};
  }
  const std::vector<core::stats::Term> terms = Terms(x, y, scope);
  return core::stats::RatioOfSums(terms);
}

core::stats::Interval Analysis::TotalDifference(RecipeMode x, RecipeMode y,
                                                const Scope& scope) const {
  const Totals* tx = FindTotals(x);
  const Totals* ty = FindTotals(y);
  if (!tx || !ty || !tx->complete() || !ty->complete()) return {};
  if (!tx->has_rounds() || !ty->has_rounds()) {
    const double c = PlainSum(*tx, scope) - PlainSum(*ty, scope);
    return {c, c, c, false};
  }
  const std::vector<core::stats::Term> terms = Terms(x, y, scope);
  return core::stats::DifferenceOfSums(terms);
}

double Analysis::PlainSum(const Totals& t, const Scope& scope) const {
  double sum = 0;
  for (size_t p = 0; p < 3; ++p) {
    if (!scope.passes[p]) continue;
    sum += scope.full_model ? t.model_ms[p]
                            : (scope.figure == Figure::kB2b ? t.b2b_layer_ms[p] : t.layer_ms[p]);
  }
  return sum;
}

core::stats::Interval Analysis::ModelSpeedupCi(const core::RecipeVariant& recipe,
                                               const core::RecipeVariant& baseline,
                                               core::Mode mode) const {
  Scope scope;
  scope.full_model = true;
  return TotalRatio({baseline, mode}, {recipe, mode}, scope);
}

bool Analysis::SameWork(RecipeMode x, RecipeMode y) const {
  const Totals* tx = FindTotals(x);
  const Totals* ty = FindTotals(y);
  if (!tx || !ty || !tx->complete() || !ty->complete()) return false;
  bool any = false;
  for (const GemmRow& row : rows_) {
    const core::ItemRecord* ix = row.Item(x);
    const core::ItemRecord* iy = row.Item(y);
    if (ix == nullptr && iy == nullptr) continue;
    if (ix == nullptr || iy == nullptr) return false;
    if (!SharedWork(*ix, *iy)) return false;
    any = true;
  }
  return any;
}

int Analysis::OldItems() const {
  int n = 0;
  for (const auto& item : report_->items)
    if (item.status == core::ItemStatus::kDone && item.result && !item.result->isolated.present())
      ++n;
  return n;
}

std::vector<const Totals*> Analysis::AllTotals() const {
  std::vector<const Totals*> out;
  for (core::Mode mode : modes_)
    for (const core::RecipeVariant& recipe : recipes_)
      if (const Totals* t = FindTotals({recipe, mode})) out.push_back(t);
  return out;
}

std::optional<double> Analysis::SweepModelMs(int64_t m, RecipeMode key) const {
  double sum = 0;
  bool any = false;
  for (const GemmRow& row : rows_) {
    if (core::SweepM(row.op.name) != m || row.Item(key) == nullptr) continue;
    const std::optional<double> ms = row.TimeMs(key);
    if (!ms) return std::nullopt;
    sum += *ms * static_cast<double>(row.op.per_layer ? std::max<int64_t>(1, row.op.layers) : 1);
    any = true;
  }
  if (!any) return std::nullopt;
  return sum;
}

bool Analysis::is_shape_list() const { return report_->job.plan.model_name == "shapes"; }

const Totals* Analysis::FindTotals(RecipeMode key) const {
  auto it = totals_.find(key);
  return it == totals_.end() ? nullptr : &it->second;
}

std::optional<double> Analysis::ModelSpeedup(const core::RecipeVariant& recipe,
                                             const core::RecipeVariant& baseline,
                                             core::Mode mode) const {
  const Totals* r = FindTotals({recipe, mode});
  const Totals* b = FindTotals({baseline, mode});
  if (!r || !b || !r->complete() || !b->complete() || r->ModelMs() <= 0) return std::nullopt;
  return b->ModelMs() / r->ModelMs();
}

std::vector<core::RecipeVariant> Analysis::CompleteRecipes(core::Mode mode) const {
  std::vector<core::RecipeVariant> out;
  for (const core::RecipeVariant& r : recipes_) {
    const Totals* t = FindTotals({r, mode});
    if (t && t->complete()) out.push_back(r);
  }
  return out;
}

int Analysis::PendingItems() const {
  int n = 0;
  for (const auto& item : report_->items)
    if (!core::IsFinal(item.status)) ++n;
  return n;
}

core::stats::Interval TotalSum(const Analysis& a, RecipeMode key, const Scope& scope) {
  const Totals* t = a.FindTotals(key);
  if (!t) return {};
  std::vector<core::stats::SumTerm> terms;
  for (const TotalTerm& term : t->terms) {
    const double weight = scope.full_model ? term.model_weight : term.layer_weight;
    if (weight <= 0 || !scope.passes[PassIndex(a.rows()[term.row].op.pass)]) continue;
    terms.push_back(SumTermOf(weight, *term.m, scope.figure));
  }
  return core::stats::SumOfTerms(terms);
}

}  // namespace gemmprof::report
