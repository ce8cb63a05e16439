#include "core/derive.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/limits.h"
#include "core/routing.h"
#include "core/validation.h"

namespace gemmprof::core {
namespace {

// Derived sizes multiply validated fields (each up to 2^31-1); 128 bits keeps every
// product exact until the range check in Add, so nothing wraps silently.
using Wide = __int128;

std::string WideToString(Wide v) {
  if (v < 0) return "-" + WideToString(-v);
  if (v < 10) return std::string(1, static_cast<char>('0' + static_cast<int>(v)));
  return WideToString(v / 10) + static_cast<char>('0' + static_cast<int>(v % 10));
}

// The experts' tokens at one step: routing's counts, the capacity (the largest count)
// and the layout (see derive.h). Uniform counts leave `counts` empty.
struct Experts {
  std::vector<int64_t> counts;
  Wide capacity = 0;
  MoeLayout layout = MoeLayout::kContiguous;
};

// Zipf routing draws each token's experts: tokens x experts draws for each step, about
// 20-30 ns each (one core of this project's build machines, optimized build), so the draws
// of all a plan's steps together are bounded to keep one derivation near half a second.
constexpr Wide kMaxRoutingDraws = Wide{1} << 24;
// Routing keeps one count per expert.
constexpr int64_t kMaxExperts = int64_t{1} << 20;

absl::StatusOr<Experts> ExpertsAt(const ModelConfig& c, Wide tokens) {
  Experts x;
  // A token count outside 1..kMaxDim (an unvalidated config's) fails in Add (M out of
  // range) before this result is used; clamped, routing never sees it.
  const int64_t t = static_cast<int64_t>(std::clamp<Wide>(tokens, 0, kMaxDim));
  const MoeRouting routing = RoutingOf(c.moe_routing, c.moe_skew);
  if (c.num_experts > kMaxExperts) {
    return absl::InvalidArgumentError(absl::StrCat("num_experts: ", c.num_experts, " is above ",
                                                   kMaxExperts,
                                                   " (routing counts each expert's tokens)"));
  }
  x.counts = ExpertTokenCounts(routing, c.num_experts,
                               std::clamp<int64_t>(c.experts_per_token, 1, c.num_experts), t,
                               static_cast<uint64_t>(c.moe_seed));
  x.capacity = std::max<int64_t>(1, *std::max_element(x.counts.begin(), x.counts.end()));
  x.layout = ResolveMoeLayout(c.moe_layout, t, "moe_layout").value_or(MoeLayout::kContiguous);
  // A masked layout's capacity is a whole number of 16-row blocks, as servers allocate it
  // (and as FP8 block scales need it).
  if (x.layout == MoeLayout::kMasked) x.capacity = (x.capacity + 15) / 16 * 16;
  if (std::all_of(x.counts.begin(), x.counts.end(), [&](int64_t n) { return n == x.capacity; })) {
    x.counts.clear();
  }
  return x;
}

// Builds the fprop ops of one model at a given token count.
class FpropBuilder {
 public:
  FpropBuilder(const ModelConfig& config, Wide tokens)
      : c_(config), tokens_(tokens), tp_(config.tensor_parallel) {}

  absl::StatusOr<std::vector<GemmOp>> Build() {
    const int64_t layers = c_.num_hidden_layers;
    AddAttention(layers);
    const int64_t dense_layers = c_.num_experts > 0 ? c_.first_dense_layers : layers;
    const int64_t moe_layers = layers - dense_layers;
    if (dense_layers > 0) AddMlp("mlp", c_.intermediate_size, tokens_, dense_layers, 1);
    if (c_.num_experts > 0 && moe_layers > 0) {
      const int64_t expert_size =
          c_.moe_intermediate_size > 0 ? c_.moe_intermediate_size : c_.intermediate_size;
      Add("router", tokens_, c_.hidden_size, c_.num_experts, moe_layers);
      const absl::StatusOr<Experts> experts = ExpertsAt(c_, tokens_);
      if (!experts.ok()) return experts.status();
      const size_t first = ops_.size();
      AddMlp("expert", expert_size, experts->capacity, moe_layers, c_.num_experts);
      for (size_t i = first; i < ops_.size(); ++i) {
        ops_[i].group_tokens = experts->counts;
        ops_[i].layout = experts->layout;
      }
      if (c_.num_shared_experts > 0) {
        AddMlp("shared", Wide{expert_size} * c_.num_shared_experts, tokens_, moe_layers, 1);
      }
    }
    if (c_.vocab_size > 0) {
      Add("lm_head", tokens_, c_.hidden_size, Wide{c_.vocab_size} / tp_, 1, 1, false);
    }
    if (!status_.ok()) return status_;
    return std::move(ops_);
  }

 private:
  void AddAttention(int64_t layers) {
    const Wide heads = c_.num_attention_heads / tp_;
    const Wide h = c_.hidden_size;
    if (c_.kv_lora_rank > 0) {
      const Wide qk_head = Wide{c_.qk_nope_head_dim} + c_.qk_rope_head_dim;
      if (c_.q_lora_rank > 0) {
        Add("q_a", tokens_, h, c_.q_lora_rank, layers);
        Add("q_b", tokens_, c_.q_lora_rank, heads * qk_head, layers);
      } else {
        Add("q", tokens_, h, heads * qk_head, layers);
      }
      Add("kv_a", tokens_, h, Wide{c_.kv_lora_rank} + c_.qk_rope_head_dim, layers);
      Add("kv_b", tokens_, c_.kv_lora_rank, heads * (Wide{c_.qk_nope_head_dim} + c_.v_head_dim),
          layers);
      Add("attn_out", tokens_, heads * c_.v_head_dim, h, layers);
      return;
    }
    const Wide kv = c_.num_key_value_heads > 0 ? c_.num_key_value_heads : c_.num_attention_heads;
    // Fewer KV heads than ranks: each rank keeps one (replicated) KV head.
    const Wide kv_per_rank = kv >= tp_ ? kv / tp_ : 1;
    const Wide head_dim = c_.head_dim > 0 ? c_.head_dim : h / c_.num_attention_heads;
    Add("qkv", tokens_, h, (heads + 2 * kv_per_rank) * head_dim, layers);
    Add("attn_out", tokens_, heads * head_dim, h, layers);
  }

  // An MLP (dense, shared or routed experts): up (or gate + up) then down.
  void AddMlp(const std::string& prefix, Wide intermediate, Wide m, int64_t layers,
              int64_t groups) {
    const Wide per_rank = intermediate / tp_;
    const Wide h = c_.hidden_size;
    if (IsGatedMlp(c_) && c_.split_gate_up) {
      Add(prefix + "_gate", m, h, per_rank, layers, groups);
      Add(prefix + "_up", m, h, per_rank, layers, groups);
    } else {
      Add(prefix + "_up", m, h, IsGatedMlp(c_) ? 2 * per_rank : per_rank, layers, groups);
    }
    Add(prefix + "_down", m, per_rank, h, layers, groups);
  }

  void Add(const std::string& name, Wide m, Wide k, Wide n, int64_t layers, int64_t groups = 1,
           bool per_layer = true) {
    if (!status_.ok()) return;
    for (auto [dim, value] : {std::pair{"M", m}, std::pair{"K", k}, std::pair{"N", n}}) {
      if (value < 1 || value > kMaxDim) {
        status_ = absl::InvalidArgumentError(absl::StrCat("model: derived GEMM ", name, " has ",
                                                          dim, " = ", WideToString(value),
                                                          ", outside 1..", kMaxDim));
        return;
      }
    }
    // m, k, n < 2^31, so m*k*n < 2^93 is exact in 128 bits.
    if (m * k * n > kMaxInt64) {
      status_ = absl::InvalidArgumentError(absl::StrCat("model: derived GEMM ", name,
                                                        " has M*K*N = ", WideToString(m * k * n),
                                                        ", above the int64 limit ", kMaxInt64));
      return;
    }
    GemmOp op;
    op.name = name;
    op.pass = Pass::kFprop;
    op.shape = {static_cast<int64_t>(m), static_cast<int64_t>(k), static_cast<int64_t>(n)};
    op.groups = groups;
    op.layers = layers;
    op.per_layer = per_layer;
    ops_.push_back(std::move(op));
  }

  const ModelConfig& c_;
  const Wide tokens_;
  const int64_t tp_;
  std::vector<GemmOp> ops_;
  absl::Status status_;
};

// Fprop ops, then their dgrad (M, N, K) and wgrad (K, M, N) counterparts.
std::vector<GemmOp> WithBackward(const std::vector<GemmOp>& fprop) {
  std::vector<GemmOp> ops = fprop;
  for (const GemmOp& f : fprop) {
    GemmOp d = f;
    d.pass = Pass::kDgrad;
    d.shape = {f.shape.m, f.shape.n, f.shape.k};
    ops.push_back(std::move(d));
  }
  for (const GemmOp& f : fprop) {
    GemmOp w = f;
    w.pass = Pass::kWgrad;
    w.shape = {f.shape.k, f.shape.m, f.shape.n};
    // Uneven experts' tokens are wgrad's K: each padded to a multiple of 16 with zero
    // rows, as FP8 MoE training pads them (FP8 GEMMs need K % 16 == 0).
    if (!w.group_tokens.empty()) {
      for (int64_t& t : w.group_tokens) t = (t + 15) / 16 * 16;
      w.shape.k = *std::max_element(w.group_tokens.begin(), w.group_tokens.end());
    }
    ops.push_back(std::move(w));
  }
  return ops;
}

// Fprop ops at one sweep M, identical GEMMs merged (see derive.h).
absl::StatusOr<std::vector<GemmOp>> SweepOps(const ModelConfig& c, int64_t m) {
  ASSIGN_OR_RETURN(std::vector<GemmOp> fprop, FpropBuilder(c, m).Build());
  std::vector<GemmOp> merged;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, bool, std::vector<int64_t>>, size_t>
      index;
  for (GemmOp& op : fprop) {
    auto key = std::make_tuple(op.shape.m, op.shape.k, op.shape.n, op.groups, op.per_layer,
                               op.group_tokens);
    auto [it, inserted] = index.emplace(key, merged.size());
    if (inserted) {
      merged.push_back(std::move(op));
    } else {
      merged[it->second].name += "+" + op.name;
      merged[it->second].layers += op.layers;
    }
  }
  for (GemmOp& op : merged) absl::StrAppend(&op.name, "@m=", m);
  return merged;
}

// Zipf routing's draws over every step of the plan (one, or one per sweep M) within
// kMaxRoutingDraws; the steps' tokens as ExpertsAt clamps them.
absl::Status CheckRoutingDraws(const ModelConfig& c) {
  const MoeRouting routing = RoutingOf(c.moe_routing, c.moe_skew);
  if (routing.kind != MoeRouting::Kind::kZipf || c.num_experts < 1) return absl::OkStatus();
  std::vector<Wide> steps;
  if (c.sweep_m.empty()) steps.push_back(Wide{c.micro_batch_size} * c.sequence_length);
  for (int64_t m : c.sweep_m) steps.push_back(m);
  Wide tokens = 0;
  for (Wide t : steps) tokens += std::clamp<Wide>(t, 0, kMaxDim);
  if (tokens * c.num_experts <= kMaxRoutingDraws) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "moe_routing: ", ToString(routing), " draws every token's experts, and ",
      WideToString(tokens), " tokens", steps.size() > 1 ? " over the sweep's steps" : "", " x ",
      c.num_experts, " experts is above ", WideToString(kMaxRoutingDraws),
      " draws; use fewer tokens per step or fewer sweep points, or hot:K:F"));
}

// Bounds that keep every 128-bit product in FpropBuilder exact and every divisor
// non-zero, for callers that skipped ValidateModelConfig.
absl::Status CheckDerivable(const ModelConfig& c) {
  for (int64_t v :
       {c.hidden_size,        c.intermediate_size,  c.num_attention_heads, c.num_key_value_heads,
        c.head_dim,           c.num_hidden_layers,  c.micro_batch_size,    c.sequence_length,
        c.vocab_size,         c.num_experts,        c.experts_per_token,   c.moe_intermediate_size,
        c.num_shared_experts, c.first_dense_layers, c.tensor_parallel,     c.q_lora_rank,
        c.kv_lora_rank,       c.qk_nope_head_dim,   c.qk_rope_head_dim,    c.v_head_dim}) {
    if (v < 0 || v > kMaxDim) {
      return absl::InvalidArgumentError(absl::StrCat("model: a size field is ", v, ", outside 0..",
                                                     kMaxDim, " (ValidateModelConfig names it)"));
    }
  }
  if (c.tensor_parallel < 1 || c.num_attention_heads < 1 || c.num_hidden_layers < 1) {
    return absl::InvalidArgumentError(
        "model: tensor_parallel, num_attention_heads and num_hidden_layers must be >= 1 "
        "(ValidateModelConfig names the field)");
  }
  return absl::OkStatus();
}

}  // namespace

bool IsGatedMlp(const ModelConfig& c) {
  return c.gated_mlp || c.hidden_act == "swiglu" || c.hidden_act == "geglu" ||
         c.hidden_act == "reglu";
}

absl::StatusOr<Plan> DeriveModelPlan(const ModelConfig& config) {
  RETURN_IF_ERROR(CheckDerivable(config));
  RETURN_IF_ERROR(CheckRoutingDraws(config));
  Plan plan;
  plan.model_name = config.name;
  plan.num_layers = config.num_hidden_layers;
  if (config.sweep_m.empty()) {
    const Wide tokens = Wide{config.micro_batch_size} * config.sequence_length;
    ASSIGN_OR_RETURN(std::vector<GemmOp> fprop, FpropBuilder(config, tokens).Build());
    plan.ops = WithBackward(fprop);
    return plan;
  }
  for (int64_t m : config.sweep_m) {
    ASSIGN_OR_RETURN(std::vector<GemmOp> ops, SweepOps(config, m));
    for (GemmOp& op : ops) plan.ops.push_back(std::move(op));
  }
  return plan;
}

absl::StatusOr<Plan> DerivePlan(const JobSpec& spec) {
  RETURN_IF_ERROR(ValidateJobSpec(spec));
  if (spec.model.has_value()) return DeriveModelPlan(*spec.model);
  Plan plan;
  plan.model_name = "shapes";
  plan.num_layers = 1;
  for (const GemmShape& shape : spec.shapes) {
    GemmOp op;
    op.name = shape.ToString();
    op.pass = Pass::kFprop;
    op.shape = shape;
    plan.ops.push_back(std::move(op));
  }
  return plan;
}

std::vector<WorkItem> ExpandItems(const Plan& plan, const std::vector<Recipe>& recipes,
                                  const std::vector<Mode>& modes,
                                  const std::vector<RecipeVariant>& variants,
                                  FastAccum job_fast_accum) {
  const std::vector<Recipe>& use_recipes =
      recipes.empty() && variants.empty() ? DefaultRecipes() : recipes;
  const std::vector<Mode> use_modes = modes.empty() ? std::vector<Mode>{Mode::kAutocast} : modes;
  std::vector<WorkItem> items;
  items.reserve(plan.ops.size() * (use_recipes.size() + variants.size()) * use_modes.size());
  int32_t seq = 0;
  for (const GemmOp& op : plan.ops) {
    std::vector<PassItem> op_items;
    for (Recipe r : use_recipes) op_items.push_back({r, FastAccum::kDefault});
    for (const RecipeVariant& v : variants) {
      const PassItem p = ItemFor(v, op.pass, job_fast_accum);
      if (std::find(op_items.begin(), op_items.end(), p) == op_items.end()) op_items.push_back(p);
    }
    for (const PassItem& p : op_items) {
      for (Mode mode : use_modes) {
        WorkItem item;
        item.seq = seq++;
        item.op = op;
        item.recipe = p.recipe;
        item.fast_accum = p.fast_accum;
        item.mode = mode;
        items.push_back(std::move(item));
      }
    }
  }
  return items;
}

std::vector<Pass> OwnItemPasses(const RecipeVariant& v, const Plan& plan,
                                FastAccum job_fast_accum) {
  std::vector<Pass> out;
  for (Pass pass : {Pass::kFprop, Pass::kDgrad, Pass::kWgrad}) {
    const bool in_plan = std::any_of(plan.ops.begin(), plan.ops.end(),
                                     [&](const GemmOp& op) { return op.pass == pass; });
    if (in_plan && ItemFor(v, pass, job_fast_accum).fast_accum != FastAccum::kDefault)
      out.push_back(pass);
  }
  return out;
}

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

}  // namespace gemmprof::core
