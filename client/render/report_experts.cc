#include "client/render/report_experts.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "client/render/format.h"
#include "client/render/text_table.h"
#include "core/derive.h"
#include "core/routing.h"

namespace gemmprof::client::render {
namespace {

// Each grouped op once (per pass and name), in plan order.
std::vector<const core::GemmOp*> GroupedOps(const std::vector<core::GemmOp>& ops) {
  std::vector<const core::GemmOp*> out;
  std::set<std::pair<core::Pass, std::string>> seen;
  for (const core::GemmOp& op : ops) {
    if (op.groups > 1 && seen.emplace(op.pass, op.name).second) out.push_back(&op);
  }
  return out;
}

std::vector<int64_t> Counts(const core::GemmOp& op) {
  return op.group_tokens.empty() ? std::vector<int64_t>(op.groups, op.TokenDim()) : op.group_tokens;
}

int64_t Total(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t t : counts) total += t;
  return total;
}

}  // namespace

std::optional<Block> ExpertsBlock(const std::vector<core::GemmOp>& ops,
                                  const std::optional<core::ModelConfig>& model) {
  const std::vector<const core::GemmOp*> grouped = GroupedOps(ops);
  if (grouped.empty()) return std::nullopt;
  TextTable table({"pass", "op", "experts", "tokens routed", "per expert min / median / max",
                   "without tokens", "capacity", "layout"},
                  {Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kLeft});
  for (const core::GemmOp* op : grouped) {
    const std::vector<int64_t> counts = Counts(*op);
    const core::TokenSpread s = core::SpreadOf(counts);
    table.AddRow(
        {std::string(core::ToString(op->pass)), op->name, std::to_string(op->groups),
         std::to_string(Total(counts)),
         std::to_string(s.min) + " / " + std::to_string(s.median) + " / " + std::to_string(s.max),
         std::to_string(s.zero), std::to_string(op->TokenDim()),
         std::string(core::ToString(op->layout))});
  }
  std::string routing = "uniform";
  if (model.has_value()) {
    routing = core::ToString(core::RoutingOf(model->moe_routing, model->moe_skew));
    if (routing.rfind("zipf", 0) == 0) routing += " (seed " + std::to_string(model->moe_seed) + ")";
  }
  return Table(std::move(table),
               "Routing " + routing +
                   ". Tokens are the token dimension: M in fprop and dgrad, K in wgrad (each "
                   "expert's padded to a multiple of 16, every expert run at the capacity K). "
                   "Contiguous: the launch follows each expert's tokens; masked: a fixed "
                   "capacity per expert with the counts beside it (each item's notes say "
                   "whether its kernel followed them).");
}

nlohmann::ordered_json ExpertsJson(const std::vector<core::GemmOp>& ops) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const core::GemmOp* op : GroupedOps(ops)) {
    const std::vector<int64_t> counts = Counts(*op);
    const core::TokenSpread s = core::SpreadOf(counts);
    out.push_back({{"pass", std::string(core::ToString(op->pass))},
                   {"op", op->name},
                   {"experts", op->groups},
                   {"tokens", Total(counts)},
                   {"min", s.min},
                   {"median", s.median},
                   {"max", s.max},
                   {"without_tokens", s.zero},
                   {"capacity", op->TokenDim()},
                   {"layout", std::string(core::ToString(op->layout))},
                   {"group_tokens", counts}});
  }
  return out;
}

namespace {

// An inference sweep's expert GEMMs (fprop) per step: their flops (each expert at its own
// tokens, times the op's layers) over the sum of their medians, per recipe and mode.
std::optional<Block> ExpertSweepBlock(const report::Analysis& a) {
  struct Sum {
    double flops = 0, ms = 0;
  };
  // Keyed by the item: its recipe, its own fast accumulation (a variant's) and its mode.
  using Key = std::tuple<core::Recipe, core::FastAccum, core::Mode>;
  std::map<int64_t, std::map<Key, Sum>> at;
  for (const core::ItemRecord& r : a.report().items) {
    const core::GemmOp& op = r.item.op;
    const std::optional<int64_t> m = core::SweepM(op.name);
    if (op.groups <= 1 || !m.has_value() || !r.result.has_value()) continue;
    const double layers = static_cast<double>(std::max<int64_t>(1, op.layers));
    Sum& s = at[*m][{r.item.recipe, r.item.fast_accum, r.item.mode}];
    s.flops += r.result->flops * layers;
    s.ms += r.result->time.median_ms * layers;
  }
  if (at.empty()) return std::nullopt;
  std::vector<std::string> headers = {"tokens per step"};
  std::vector<Align> align = {Align::kRight};
  std::vector<Key> keys;
  const core::FastAccum option = a.report().job.spec.timing.fast_accum;
  for (core::Mode mode : a.modes()) {
    for (const core::RecipeVariant& recipe : a.recipes()) {
      // A sweep is fprop only.
      const core::PassItem p = core::ItemFor(recipe, core::Pass::kFprop, option);
      keys.emplace_back(p.recipe, p.fast_accum, mode);
      headers.push_back(std::string(core::ToString(recipe)) +
                        (a.modes().size() > 1 ? " " + std::string(core::ToString(mode)) : ""));
      align.push_back(Align::kRight);
    }
  }
  TextTable table(headers, align);
  for (const auto& [m, sums] : at) {
    std::vector<std::string> row = {std::to_string(m)};
    for (const auto& key : keys) {
      const auto it = sums.find(key);
      row.push_back(it == sums.end() || it->second.ms <= 0
                        ? "-"
                        : FormatFixed(it->second.flops / (it->second.ms * 1e9), 0));
    }
    table.AddRow(std::move(row));
  }
  return Table(std::move(table),
               "Expert GEMMs' TFLOP/s per step (fprop, every layer's experts; each expert "
               "counted at its own tokens). \"-\": no result at that step.");
}

}  // namespace

std::optional<Section> ExpertsSection(const report::Analysis& a) {
  std::vector<core::GemmOp> ops;
  for (const core::ItemRecord& r : a.report().items) ops.push_back(r.item.op);
  std::optional<Block> block = ExpertsBlock(ops, a.report().job.spec.model);
  if (!block.has_value()) return std::nullopt;
  Section s{"Routed experts", {std::move(*block)}};
  if (std::optional<Block> sweep = ExpertSweepBlock(a)) s.blocks.push_back(std::move(*sweep));
  return s;
}

}  // namespace gemmprof::client::render
