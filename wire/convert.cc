#include "wire/convert.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "wire/enum_field.h"

namespace gemmprof::wire {
namespace {

v1::Shape ToProto(const core::GemmShape& s) {
  v1::Shape p;
  p.set_m(s.m);
  p.set_k(s.k);
  p.set_n(s.n);
  return p;
}

core::GemmShape FromProto(const v1::Shape& p) { return {p.m(), p.k(), p.n()}; }

absl::StatusOr<core::Recipe> ParseRecipeField(std::string_view field, const std::string& v) {
  return ParseEnumField<core::Recipe>(field, v, core::ParseRecipe, core::RecipeList());
}

absl::StatusOr<core::Mode> ParseModeField(std::string_view field, const std::string& v) {
  return ParseEnumField<core::Mode>(field, v, core::ParseMode, "autocast, prequant");
}

// A set optional double must be finite and positive: there is no "default" to fall
// back to once a client sent a value.
absl::StatusOr<double> PositiveField(absl::string_view field, double value) {
  if (std::isfinite(value) && value > 0) return value;
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value,
                                                 " is out of range (a finite value > 0, or "
                                                 "unset for the default)"));
}

// An op's per-group tokens as GemmOp defines them: none, or one per group, each
// 0..the shape's token dimension.
absl::Status CheckGroupTokens(const core::GemmOp& op) {
  if (op.group_tokens.empty()) return absl::OkStatus();
  if (static_cast<int64_t>(op.group_tokens.size()) != op.groups) {
    return absl::InvalidArgumentError(absl::StrCat("op.group_tokens: ", op.group_tokens.size(),
                                                   " counts for ", op.groups,
                                                   " groups (one per group, or none)"));
  }
  for (size_t i = 0; i < op.group_tokens.size(); ++i) {
    const int64_t t = op.group_tokens[i];
    if (t < 0 || t > op.TokenDim()) {
      return absl::InvalidArgumentError(absl::StrCat("op.group_tokens[", i, "]: ", t,
                                                     " is outside 0..", op.TokenDim(),
                                                     " (the shape's token dimension)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

v1::ModelConfig ToProto(const core::ModelConfig& m) {
  v1::ModelConfig p;
  p.set_name(m.name);
  p.set_hidden_size(m.hidden_size);
  p.set_intermediate_size(m.intermediate_size);
  p.set_num_attention_heads(m.num_attention_heads);
  p.set_num_key_value_heads(m.num_key_value_heads);
  p.set_head_dim(m.head_dim);
  p.set_num_hidden_layers(m.num_hidden_layers);
  p.set_micro_batch_size(m.micro_batch_size);
  p.set_sequence_length(m.sequence_length);
  p.set_vocab_size(m.vocab_size);
  p.set_hidden_act(m.hidden_act);
  p.set_gated_mlp(m.gated_mlp);
  p.set_split_gate_up(m.split_gate_up);
  p.set_tie_word_embeddings(m.tie_word_embeddings);
  p.set_num_experts(m.num_experts);
  p.set_experts_per_token(m.experts_per_token);
  p.set_moe_intermediate_size(m.moe_intermediate_size);
  p.set_num_shared_experts(m.num_shared_experts);
  p.set_first_dense_layers(m.first_dense_layers);
  p.set_moe_skew(m.moe_skew);
  p.set_moe_routing(m.moe_routing);
  p.set_moe_seed(m.moe_seed);
  p.set_moe_layout(m.moe_layout);
  p.set_tensor_parallel(m.tensor_parallel);
  p.set_sequence_parallel(m.sequence_parallel);
  for (int64_t v : m.sweep_m) p.add_sweep_m(v);
  p.set_q_lora_rank(m.q_lora_rank);
  p.set_kv_lora_rank(m.kv_lora_rank);
  p.set_qk_nope_head_dim(m.qk_nope_head_dim);
  p.set_qk_rope_head_dim(m.qk_rope_head_dim);
  p.set_v_head_dim(m.v_head_dim);
  return p;
}

core::ModelConfig FromProto(const v1::ModelConfig& p) {
  core::ModelConfig m;
  if (!p.name().empty()) m.name = p.name();
  m.hidden_size = p.hidden_size();
  m.intermediate_size = p.intermediate_size();
  m.num_attention_heads = p.num_attention_heads();
  m.num_key_value_heads = p.num_key_value_heads();
  m.head_dim = p.head_dim();
  m.num_hidden_layers = p.num_hidden_layers();
  m.micro_batch_size = p.micro_batch_size();
  m.sequence_length = p.sequence_length();
  m.vocab_size = p.vocab_size();
  m.hidden_act = p.hidden_act();
  m.gated_mlp = p.gated_mlp();
  m.split_gate_up = p.split_gate_up();
  m.tie_word_embeddings = p.tie_word_embeddings();
  m.num_experts = p.num_experts();
  m.experts_per_token = p.experts_per_token();
  m.moe_intermediate_size = p.moe_intermediate_size();
  m.num_shared_experts = p.num_shared_experts();
  m.first_dense_layers = p.first_dense_layers();
  // proto3 cannot tell 0 from unset; a skew of 0 is meaningless, so 0 means default.
  m.moe_skew = p.moe_skew() == 0 ? 1.0 : p.moe_skew();
  // The routing and layout stay text: the server's validation names a bad value.
  m.moe_routing = p.moe_routing();
  m.moe_seed = p.moe_seed() == 0 ? 1 : p.moe_seed();
  m.moe_layout = p.moe_layout();
  m.tensor_parallel = p.tensor_parallel() == 0 ? 1 : p.tensor_parallel();
  m.sequence_parallel = p.sequence_parallel();
  m.sweep_m.assign(p.sweep_m().begin(), p.sweep_m().end());
  m.q_lora_rank = p.q_lora_rank();
  m.kv_lora_rank = p.kv_lora_rank();
  m.qk_nope_head_dim = p.qk_nope_head_dim();
  m.qk_rope_head_dim = p.qk_rope_head_dim();
  m.v_head_dim = p.v_head_dim();
  return m;
}

v1::TimingOptions ToProto(const core::TimingOptions& t) {
  v1::TimingOptions p;
  p.set_warmup_iters(t.warmup_iters);
  p.set_timed_iters(t.timed_iters);
  p.set_l2(std::string(core::ToString(t.l2)));
  p.set_autotune_k(t.autotune_k);
  p.set_seed(t.seed);
  p.set_accounting(std::string(core::ToString(t.accounting)));
  p.set_fast_accum(std::string(core::ToString(t.fast_accum)));
  p.set_amax_history_len(t.amax_history_len);
  p.set_amax_algo(std::string(core::ToString(t.amax_algo)));
  p.set_gpu_warmup_s(t.gpu_warmup_s);
  p.set_precision_target(t.precision_target);
  p.set_item_budget_s(t.item_budget_s);
  p.set_b2b_count(t.b2b_count);
  p.set_timing_backend(std::string(core::ToString(t.timing_backend)));
  p.set_context(std::string(core::ToString(t.context)));
  p.set_energy(t.energy);
  p.set_w4_group(t.w4_group);
  return p;
}

absl::StatusOr<core::TimingOptions> FromProto(const v1::TimingOptions& p) {
  core::TimingOptions t;
  if (p.has_warmup_iters()) t.warmup_iters = p.warmup_iters();
  // 0 asks for the core default (noise-aware stopping), so a client need not know it.
  if (p.timed_iters() != 0) t.timed_iters = p.timed_iters();
  if (p.autotune_k() != 0) t.autotune_k = p.autotune_k();
  if (p.seed() != 0) t.seed = p.seed();
  if (p.amax_history_len() != 0) t.amax_history_len = p.amax_history_len();
  if (p.has_gpu_warmup_s()) t.gpu_warmup_s = p.gpu_warmup_s();
  if (p.has_precision_target()) {
    ASSIGN_OR_RETURN(t.precision_target,
                     PositiveField("timing.precision_target", p.precision_target()));
  }
  if (p.has_item_budget_s()) {
    ASSIGN_OR_RETURN(t.item_budget_s, PositiveField("timing.item_budget_s", p.item_budget_s()));
  }
  if (p.b2b_count() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("timing.b2b_count: ", p.b2b_count(), " is negative (0 = chosen per group)"));
  }
  t.b2b_count = p.b2b_count();
  ASSIGN_OR_RETURN(t.l2, ParseEnumField<core::L2Policy>("timing.l2", p.l2(), core::ParseL2Policy,
                                                        "hot, cold, clean", core::L2Policy::kHot));
  ASSIGN_OR_RETURN(t.accounting, ParseEnumField<core::Accounting>(
                                     "timing.accounting", p.accounting(), core::ParseAccounting,
                                     "training-step, per-gemm", core::Accounting::kTrainingStep));
  ASSIGN_OR_RETURN(t.fast_accum, ParseEnumField<core::FastAccum>(
                                     "timing.fast_accum", p.fast_accum(), core::ParseFastAccum,
                                     "default, on, off", core::FastAccum::kDefault));
  ASSIGN_OR_RETURN(t.amax_algo, ParseEnumField<core::AmaxAlgo>(
                                    "timing.amax_algo", p.amax_algo(), core::ParseAmaxAlgo,
                                    "max, most_recent", core::AmaxAlgo::kMax));
  ASSIGN_OR_RETURN(t.timing_backend,
                   ParseEnumField<core::TimingBackend>("timing.timing_backend", p.timing_backend(),
                                                       core::ParseTimingBackend, "events, kernels",
                                                       core::TimingBackend::kEvents));
  ASSIGN_OR_RETURN(t.context, ParseEnumField<core::MeasureContext>(
                                  "timing.context", p.context(), core::ParseMeasureContext,
                                  "workload, isolated", core::MeasureContext::kWorkload));
  t.energy = p.energy();
  if (p.w4_group() != 0) t.w4_group = p.w4_group();
  return t;
}

v1::SubmitJobRequest ToProto(const core::JobSpec& spec) {
  v1::SubmitJobRequest p;
  if (spec.model.has_value()) {
    *p.mutable_model() = ToProto(*spec.model);
  } else {
    auto* shapes = p.mutable_shapes();
    for (const auto& s : spec.shapes) *shapes->add_shapes() = ToProto(s);
  }
  for (auto r : spec.recipes) p.add_recipes(std::string(core::ToString(r)));
  for (const auto& v : spec.variants) p.add_recipes(v.Name());
  for (auto m : spec.modes) p.add_modes(std::string(core::ToString(m)));
  *p.mutable_timing() = ToProto(spec.timing);
  p.set_force(spec.force);
  p.set_label(spec.label);
  for (int32_t d : spec.devices) p.add_devices(d);
  p.set_profile(spec.profile);
  p.set_retries(spec.retries);
  p.set_where(core::ToString(spec.where));
  p.set_priority(spec.priority);
  p.set_campaign(spec.campaign);
  return p;
}

absl::StatusOr<core::JobSpec> FromProto(const v1::SubmitJobRequest& p) {
  core::JobSpec spec;
  switch (p.workload_case()) {
    case v1::SubmitJobRequest::kModel:
      spec.model = FromProto(p.model());
      break;
    case v1::SubmitJobRequest::kShapes:
      for (const auto& s : p.shapes().shapes()) spec.shapes.push_back(FromProto(s));
      break;
    default:
      return absl::InvalidArgumentError(
          "workload: neither a model config nor a shape list was given");
  }
  for (int i = 0; i < p.recipes_size(); ++i) {
    // A whole recipe, or one with a recipe per pass ("fp8-rowwise+wgrad:bf16").
    const std::string field = "recipes[" + std::to_string(i) + "]";
    if (p.recipes(i).find('+') == std::string::npos) {
      ASSIGN_OR_RETURN(core::Recipe r, ParseRecipeField(field, p.recipes(i)));
      spec.recipes.push_back(r);
      continue;
    }
    const absl::StatusOr<core::RecipeVariant> v = core::ParseRecipeVariant(p.recipes(i));
    if (!v.ok()) {
      return absl::InvalidArgumentError(field + ": " + std::string(v.status().message()));
    }
    spec.variants.push_back(*v);  // a name with '+' that parses overrides a pass
  }
  for (int i = 0; i < p.modes_size(); ++i) {
    ASSIGN_OR_RETURN(auto m, ParseModeField("modes[" + std::to_string(i) + "]", p.modes(i)));
    spec.modes.push_back(m);
  }
  ASSIGN_OR_RETURN(spec.timing, FromProto(p.timing()));
  spec.force = p.force();
  spec.label = p.label();
  spec.devices.assign(p.devices().begin(), p.devices().end());
  spec.profile = p.profile();
  if (p.has_retries()) spec.retries = p.retries();
  ASSIGN_OR_RETURN(spec.where, core::ParsePlacement("where", p.where()));
  spec.priority = p.priority();
  spec.campaign = p.campaign();
  return spec;
}

v1::GemmOp ToProto(const core::GemmOp& op) {
  v1::GemmOp p;
  p.set_name(op.name);
  p.set_pass(std::string(core::ToString(op.pass)));
  *p.mutable_shape() = ToProto(op.shape);
  p.set_groups(op.groups);
  p.set_layers(op.layers);
  p.set_per_layer(op.per_layer);
  for (int64_t t : op.group_tokens) p.add_group_tokens(t);
  p.set_layout(std::string(core::ToString(op.layout)));
  return p;
}

absl::StatusOr<core::GemmOp> FromProto(const v1::GemmOp& p) {
  core::GemmOp op;
  op.name = p.name();
  ASSIGN_OR_RETURN(op.pass, ParseEnumField<core::Pass>("op.pass", p.pass(), core::ParsePass,
                                                       "fprop, dgrad, wgrad"));
  op.shape = FromProto(p.shape());
  op.groups = p.groups() == 0 ? 1 : p.groups();
  op.layers = p.layers() == 0 ? 1 : p.layers();
  op.per_layer = p.per_layer();
  op.group_tokens.assign(p.group_tokens().begin(), p.group_tokens().end());
  RETURN_IF_ERROR(CheckGroupTokens(op));
  ASSIGN_OR_RETURN(op.layout, ParseEnumField<core::MoeLayout>(
                                  "op.layout", p.layout(), core::ParseMoeLayout,
                                  "contiguous, masked", core::MoeLayout::kContiguous));
  return op;
}

v1::PlanJobResponse ToProto(const core::Plan& plan, const std::vector<core::RecipeVariant>& recipes,
                            const std::vector<core::Mode>& modes, int32_t total_items) {
  v1::PlanJobResponse p;
  p.set_model_name(plan.model_name);
  p.set_num_layers(plan.num_layers);
  for (const auto& op : plan.ops) *p.add_ops() = ToProto(op);
  for (const auto& r : recipes) p.add_recipes(r.Name());
  for (auto m : modes) p.add_modes(std::string(core::ToString(m)));
  p.set_total_items(total_items);
  return p;
}

absl::StatusOr<core::Plan> FromProto(const v1::PlanJobResponse& p) {
  core::Plan plan;
  plan.model_name = p.model_name();
  plan.num_layers = p.num_layers();
  for (const auto& op : p.ops()) {
    ASSIGN_OR_RETURN(auto o, FromProto(op));
    plan.ops.push_back(std::move(o));
  }
  return plan;
}

v1::Daemon ToProto(const core::DaemonRecord& d) {
  v1::Daemon p;
  p.set_node(d.node);
  p.set_version(d.version);
  p.set_backend(d.backend);
  for (const core::DaemonDeviceModel& m : d.models) {
    v1::DaemonDeviceModel* mp = p.add_models();
    mp->set_name(m.name);
    mp->set_count(m.count);
    mp->set_unavailable(m.unavailable);
  }
  p.set_devices(d.devices);
  p.set_busy(d.busy);
  p.set_started_unix_ms(d.started_unix_ms);
  p.set_heartbeat_unix_ms(d.heartbeat_unix_ms);
  p.set_stopped(d.stopped);
  return p;
}

core::DaemonRecord FromProto(const v1::Daemon& p) {
  core::DaemonRecord d;
  d.node = p.node();
  d.version = p.version();
  d.backend = p.backend();
  for (const v1::DaemonDeviceModel& mp : p.models()) {
    d.models.push_back({mp.name(), mp.count(), mp.unavailable()});
  }
  d.devices = p.devices();
  d.busy = p.busy();
  d.started_unix_ms = p.started_unix_ms();
  d.heartbeat_unix_ms = p.heartbeat_unix_ms();
  d.stopped = p.stopped();
  return d;
}

v1::Device ToProto(const core::DeviceInfo& d) {
  v1::Device p;
  p.set_backend(d.backend);
  p.set_name(d.name);
  p.set_uuid(d.uuid);
  p.set_sm(d.sm);
  p.set_sm_count(d.sm_count);
  p.set_memory_bytes(d.memory_bytes);
  p.set_driver_version(d.driver_version);
  p.set_cuda_version(d.cuda_version);
  p.set_cublaslt_version(d.cublaslt_version);
  p.set_gemmprof_version(d.gemmprof_version);
  for (const auto& r : d.recipes) {
    auto* rp = p.add_recipes();
    rp->set_recipe(std::string(core::ToString(r.recipe)));
    rp->set_supported(r.supported);
    rp->set_reason(r.reason);
  }
  p.set_unavailable(d.unavailable);
  p.set_unavailable_reason(d.unavailable_reason);
  return p;
}

absl::StatusOr<core::DeviceInfo> FromProto(const v1::Device& p) {
  core::DeviceInfo d;
  d.backend = p.backend();
  d.name = p.name();
  d.uuid = p.uuid();
  d.sm = p.sm();
  d.sm_count = p.sm_count();
  d.memory_bytes = p.memory_bytes();
  d.driver_version = p.driver_version();
  d.cuda_version = p.cuda_version();
  d.cublaslt_version = p.cublaslt_version();
  d.gemmprof_version = p.gemmprof_version();
  for (const auto& rp : p.recipes()) {
    core::RecipeSupport r;
    ASSIGN_OR_RETURN(r.recipe, ParseRecipeField("device.recipes.recipe", rp.recipe()));
    r.supported = rp.supported();
    r.reason = rp.reason();
    d.recipes.push_back(std::move(r));
  }
  d.unavailable = p.unavailable();
  d.unavailable_reason = p.unavailable_reason();
  return d;
}

v1::Job ToProto(const core::JobRecord& job) {
  v1::Job p;
  p.set_id(job.id);
  p.set_state(std::string(core::ToString(job.state)));
  p.set_error(job.error);
  p.set_created_ms(job.created_ms);
  p.set_started_ms(job.started_ms);
  p.set_finished_ms(job.finished_ms);
  p.set_total_items(job.total_items);
  p.set_finished_items(job.finished_items);
  p.set_failed_items(job.failed_items);
  *p.mutable_spec() = ToProto(job.spec);
  *p.mutable_plan() = ToProto(job.plan, core::ReportedRecipes(job.spec),
                              core::EffectiveModes(job.spec), job.total_items);
  *p.mutable_device() = ToProto(job.device);
  p.set_submitted_by(job.submitted_by);
  p.set_node(job.node);
  for (const std::string& n : job.measuring_nodes) p.add_measuring_nodes(n);
  return p;
}

absl::StatusOr<core::JobRecord> FromProto(const v1::Job& p) {
  core::JobRecord job;
  job.id = p.id();
  ASSIGN_OR_RETURN(job.state, ParseEnumField<core::JobState>(
                                  "job.state", p.state(), core::ParseJobState,
                                  "queued, running, succeeded, partial, failed, cancelled"));
  job.error = p.error();
  job.created_ms = p.created_ms();
  job.started_ms = p.started_ms();
  job.finished_ms = p.finished_ms();
  job.total_items = p.total_items();
  job.finished_items = p.finished_items();
  job.failed_items = p.failed_items();
  ASSIGN_OR_RETURN(job.spec, FromProto(p.spec()));
  ASSIGN_OR_RETURN(job.plan, FromProto(p.plan()));
  ASSIGN_OR_RETURN(job.device, FromProto(p.device()));
  job.submitted_by = p.submitted_by();
  job.node = p.node();
  job.measuring_nodes.assign(p.measuring_nodes().begin(), p.measuring_nodes().end());
  return job;
}

v1::Item ToProto(const core::ItemRecord& r) {
  v1::Item p;
  p.set_id(r.item.id);
  p.set_job_id(r.item.job_id);
  p.set_seq(r.item.seq);
  *p.mutable_op() = ToProto(r.item.op);
  p.set_recipe(std::string(core::ToString(r.item.recipe)));
  p.set_mode(std::string(core::ToString(r.item.mode)));
  if (r.item.fast_accum != core::FastAccum::kDefault)
    p.set_fast_accum(std::string(core::ToString(r.item.fast_accum)));
  p.set_status(std::string(core::ToString(r.status)));
  p.set_error(r.error);
  p.set_cached(r.cached);
  p.set_measured_ms(r.measured_ms);
  if (r.result.has_value()) *p.mutable_result() = ToProto(*r.result);
  p.set_measured_node(r.measured_node);
  p.set_device_uuid(r.device_uuid);
  return p;
}

absl::StatusOr<core::ItemRecord> FromProto(const v1::Item& p) {
  core::ItemRecord r;
  r.item.id = p.id();
  r.item.job_id = p.job_id();
  r.item.seq = p.seq();
  ASSIGN_OR_RETURN(r.item.op, FromProto(p.op()));
  ASSIGN_OR_RETURN(r.item.recipe, ParseRecipeField("item.recipe", p.recipe()));
  ASSIGN_OR_RETURN(r.item.mode, ParseModeField("item.mode", p.mode()));
  if (!p.fast_accum().empty()) {
    ASSIGN_OR_RETURN(r.item.fast_accum,
                     ParseEnumField<core::FastAccum>("item.fast_accum", p.fast_accum(),
                                                     core::ParseFastAccum, "default, on, off"));
  }
  ASSIGN_OR_RETURN(r.status, ParseEnumField<core::ItemStatus>(
                                 "item.status", p.status(), core::ParseItemStatus,
                                 "queued, running, done, failed, not_supported, cancelled"));
  r.error = p.error();
  r.cached = p.cached();
  r.measured_ms = p.measured_ms();
  if (p.has_result()) {
    ASSIGN_OR_RETURN(auto m, FromProto(p.result()));
    r.result = std::move(m);
  }
  r.measured_node = p.measured_node();
  r.device_uuid = p.device_uuid();
  return r;
}

v1::Report ToProto(const core::Report& report) {
  v1::Report p;
  *p.mutable_job() = ToProto(report.job);
  for (const auto& item : report.items) *p.add_items() = ToProto(item);
  return p;
}

absl::StatusOr<core::Report> FromProto(const v1::Report& p) {
  core::Report report;
  ASSIGN_OR_RETURN(report.job, FromProto(p.job()));
  for (const auto& item : p.items()) {
    ASSIGN_OR_RETURN(auto r, FromProto(item));
    report.items.push_back(std::move(r));
  }
  return report;
}

}  // namespace gemmprof::wire
