#include "report/record_json.h"

#include <cmath>
#include <string>
#include <vector>

#include "report/figures.h"

namespace gemmprof::report {
namespace {

template <typename E>
std::string Name(E value) {
  return std::string(core::ToString(value));
}

template <typename E>
Json Names(const std::vector<E>& values) {
  Json out = Json::array();
  for (E v : values) out.push_back(Name(v));
  return out;
}

// A number as `form` writes it: the store spells out what JSON cannot hold.
Json Num(double v, JsonForm form) {
  if (form == JsonForm::kDocument || std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

Json Nums(const std::vector<double>& values, JsonForm form) {
  Json out = Json::array();
  for (double v : values) out.push_back(Num(v, form));
  return out;
}

Json OptionalNumber(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// The seven times of a sample summary, in ms.
Json Times(const core::SampleStats& s, JsonForm form) {
  return {{"median_ms", Num(s.median_ms, form)}, {"mean_ms", Num(s.mean_ms, form)},
          {"p20_ms", Num(s.p20_ms, form)},       {"p80_ms", Num(s.p80_ms, form)},
          {"min_ms", Num(s.min_ms, form)},       {"max_ms", Num(s.max_ms, form)},
          {"stdev_ms", Num(s.stdev_ms, form)}};
}

Json StoredSampleStats(const core::SampleStats& s) {
  Json out = {{"count", s.count}};
  out.update(Times(s, JsonForm::kStore));
  return out;
}

Json TelemetryJson(const core::Telemetry& t, JsonForm form) {
  Json out = {{"sm_clock_mhz_min", Num(t.sm_clock_mhz_min, form)},
              {"sm_clock_mhz_max", Num(t.sm_clock_mhz_max, form)},
              {"mem_clock_mhz", Num(t.mem_clock_mhz, form)},
              {"power_w_avg", Num(t.power_w_avg, form)},
              {"power_w_max", Num(t.power_w_max, form)},
              {"temp_c_max", Num(t.temp_c_max, form)},
              {"throttle_reasons", t.throttle_reasons},
              {"throttled_samples", t.throttled_samples},
              {"telemetry_samples", t.telemetry_samples}};
  // The report schema predates the mean clock; the store keeps it.
  if (form == JsonForm::kStore) out["sm_clock_mhz_mean"] = Num(t.sm_clock_mhz_mean, form);
  return out;
}

Json EstimateJson(const core::Estimate& e, JsonForm form) {
  if (form == JsonForm::kDocument && !e.present()) return nullptr;
  Json out = {{"center_ms", Num(e.center_ms, form)},
              {"ci_low_ms", Num(e.ci_low_ms, form)},
              {"ci_high_ms", Num(e.ci_high_ms, form)},
              {"rounds", e.rounds},
              {"n_eff", Num(e.n_eff, form)}};
  if (form == JsonForm::kDocument) out["rel_half_width"] = e.RelHalfWidth();
  return out;
}

// What the timed region cost: quantization share, flops and bytes per iteration.
void AddCost(const core::Measurement& m, JsonForm form, Json& out) {
  out["quant_ms"] = Num(m.quant_ms, form);
  out["flops"] = Num(m.flops, form);
  out["bytes"] = Num(m.bytes, form);
}

// How it ran: algorithm, verification, accounting, telemetry, notes.
void AddRun(const core::Measurement& m, JsonForm form, Json& out) {
  out["algorithm"] = m.algorithm;
  out["verification"] = Name(m.verification);
  out["rel_error"] = Num(m.rel_error, form);
  out["error_threshold"] = Num(m.error_threshold, form);
  out["accounting"] = Name(m.accounting);
  out["fast_accum"] = m.fast_accum;
  out["telemetry"] = TelemetryJson(m.telemetry, form);
  out["notes"] = m.notes;
}

// Interleaved rounds: the estimates, the per-round series and the measurement group.
void AddRounds(const core::Measurement& m, JsonForm form, Json& out) {
  out["isolated"] = EstimateJson(m.isolated, form);
  out["b2b"] = EstimateJson(m.b2b, form);
  out["b2b_count"] = m.b2b_count;
  out["quant"] = EstimateJson(m.quant, form);
  out["round_ms"] = Nums(m.round_ms, form);
  out["b2b_round_ms"] = Nums(m.b2b_round_ms, form);
  out["quant_round_ms"] = Nums(m.quant_round_ms, form);
  out["group_uid"] = m.group_uid;
  out["group_members"] = m.group_members;
  out["work_key"] = m.work_key;
  out["shared_with_item"] = m.shared_with_item;
  out["quant_bytes"] = Num(m.quant_bytes, form);
  out["copy_bytes_per_s"] = Num(m.copy_bytes_per_s, form);
  out["stop_reason"] = m.stop_reason;
}

// An item's energy (submit --energy): the figure with its window, or why it is missing.
Json EnergyJson(const core::Energy& e, JsonForm form) {
  Json out = {{"joules", Num(e.joules, form)},
              {"joules_ci_low", Num(e.joules_low, form)},
              {"joules_ci_high", Num(e.joules_high, form)},
              {"power_w", Num(e.power_w, form)},
              {"sampled_power_w", Num(e.sampled_power_w, form)},
              {"window_s", Num(e.window_s, form)},
              {"counter_updates", e.counter_updates},
              {"iteration_ms", Num(e.iteration_ms, form)},
              {"idle_power_w", Num(e.idle_power_w, form)},
              {"not_measured", e.not_measured}};
  if (form == JsonForm::kStore) {
    out["period_joules"] = Nums(e.period_joules, form);
    out["n_eff"] = Num(e.n_eff, form);
  }
  return out;
}

// The batch it was measured in, and its energy. The store writes them only where
// present, so rows of jobs without them stay as they were.
void AddContext(const core::Measurement& m, JsonForm form, Json& out) {
  const bool store = form == JsonForm::kStore;
  if (!store || !m.context.empty()) {
    out["batch_id"] = m.batch_id;
    out["context"] = m.context;
    out["batch_gemms"] = m.batch_gemms;
  }
  const bool energy = m.energy.present() || !m.energy.not_measured.empty();
  if (energy) {
    out["energy"] = EnergyJson(m.energy, form);
  } else if (!store) {
    out["energy"] = nullptr;
  }
}

Json EfficiencyJson(const Efficiency& e) {
  return {{"sm_clock_mhz", OptionalNumber(e.sm_clock_mhz)},
          {"peak_tflops", OptionalNumber(e.peak_tflops)},
          {"fraction_of_peak", OptionalNumber(e.of_peak)},
          {"fraction_of_copy_bandwidth", OptionalNumber(e.of_copy_bandwidth)},
          {"quant_fraction_of_copy_bandwidth", OptionalNumber(e.quant_of_copy_bandwidth)}};
}

// The document's kernel-only figures, null where not measured.
Json KernelJson(const core::Measurement& m) {
  if (m.kernel_samples <= 0) return nullptr;
  Json out = Pick(Times(m.kernel, JsonForm::kDocument),
                  {"median_ms", "p20_ms", "p80_ms", "min_ms", "max_ms"});
  out["quant_ms"] = m.kernel_quant_ms;
  out["samples"] = m.kernel_samples;
  out["names"] = m.kernel_names;
  return out;
}

// The document's "result" of an item: flat sample statistics and the derived figures.
Json ResultJson(const core::ItemRecord& item, const core::DeviceInfo& device) {
  if (!item.result) return nullptr;
  const core::Measurement& m = *item.result;
  constexpr JsonForm kDoc = JsonForm::kDocument;
  Json out = Times(m.time, kDoc);
  out["samples"] = m.time.count;
  AddCost(m, kDoc, out);
  out["tflops"] = TflopsOf(item);
  AddRun(m, kDoc, out);
  AddRounds(m, kDoc, out);
  out["efficiency"] = EfficiencyJson(EfficiencyOf(item, device));
  out["kernel"] = KernelJson(m);
  out["profiled"] = m.profiled;
  AddContext(m, kDoc, out);
  if (m.energy.present() && m.flops > 0)
    out["energy"]["tflop_per_joule"] = m.flops / m.energy.joules / 1e12;
  return out;
}

Json ModelConfigJson(const core::ModelConfig& c) {
  return {{"name", c.name},
          {"hidden_size", c.hidden_size},
          {"intermediate_size", c.intermediate_size},
          {"num_attention_heads", c.num_attention_heads},
          {"num_key_value_heads", c.num_key_value_heads},
          {"head_dim", c.head_dim},
          {"num_hidden_layers", c.num_hidden_layers},
          {"micro_batch_size", c.micro_batch_size},
          {"sequence_length", c.sequence_length},
          {"vocab_size", c.vocab_size},
          {"hidden_act", c.hidden_act},
          {"gated_mlp", c.gated_mlp},
          {"split_gate_up", c.split_gate_up},
          {"tie_word_embeddings", c.tie_word_embeddings},
          {"num_experts", c.num_experts},
          {"experts_per_token", c.experts_per_token},
          {"moe_intermediate_size", c.moe_intermediate_size},
          {"num_shared_experts", c.num_shared_experts},
          {"first_dense_layers", c.first_dense_layers},
          {"moe_skew", Num(c.moe_skew, JsonForm::kStore)},
          {"moe_routing", c.moe_routing},
          {"moe_seed", c.moe_seed},
          {"moe_layout", c.moe_layout},
          {"tensor_parallel", c.tensor_parallel},
          {"sequence_parallel", c.sequence_parallel},
          {"sweep_m", c.sweep_m},
          {"q_lora_rank", c.q_lora_rank},
          {"kv_lora_rank", c.kv_lora_rank},
          {"qk_nope_head_dim", c.qk_nope_head_dim},
          {"qk_rope_head_dim", c.qk_rope_head_dim},
          {"v_head_dim", c.v_head_dim}};
}

Json ShapeJson(const core::GemmShape& s) { return {{"m", s.m}, {"k", s.k}, {"n", s.n}}; }

// A routed op's per-group tokens and its layout, after "groups": only where they say
// something, so the JSON of dense and uniform ops stays as it was.
void AddGrouping(const core::GemmOp& op, Json& out) {
  if (!op.group_tokens.empty()) out["group_tokens"] = op.group_tokens;
  if (op.groups > 1) out["layout"] = Name(op.layout);
}

Json GemmOpJson(const core::GemmOp& op) {
  Json out = {{"name", op.name},
              {"pass", Name(op.pass)},
              {"shape", ShapeJson(op.shape)},
              {"groups", op.groups}};
  AddGrouping(op, out);
  out["layers"] = op.layers;
  out["per_layer"] = op.per_layer;
  return out;
}

}  // namespace

Json DaemonJson(const core::DaemonRecord& d) {
  Json models = Json::array();
  for (const core::DaemonDeviceModel& m : d.models) {
    models.push_back({{"name", m.name}, {"count", m.count}, {"unavailable", m.unavailable}});
  }
  return {{"node", d.node},
          {"version", d.version},
          {"backend", d.backend},
          {"models", models},
          {"devices", d.devices},
          {"busy", d.busy},
          {"started_unix_ms", d.started_unix_ms},
          {"heartbeat_unix_ms", d.heartbeat_unix_ms},
          {"stopped", d.stopped}};
}

Json DeviceJson(const core::DeviceInfo& d) {
  Json recipes = Json::array();
  for (const core::RecipeSupport& r : d.recipes)
    recipes.push_back(
        {{"recipe", Name(r.recipe)}, {"supported", r.supported}, {"reason", r.reason}});
  return {{"backend", d.backend},
          {"name", d.name},
          {"uuid", d.uuid},
          {"sm", d.sm},
          {"sm_count", d.sm_count},
          {"memory_bytes", d.memory_bytes},
          {"driver_version", d.driver_version},
          {"cuda_version", d.cuda_version},
          {"cublaslt_version", d.cublaslt_version},
          {"gemmprof_version", d.gemmprof_version},
          {"recipes", recipes}};
}

Json TimingJson(const core::TimingOptions& t, JsonForm form) {
  const bool store = form == JsonForm::kStore;
  Json out = {{"warmup_iters", t.warmup_iters},
              {"timed_iters", t.timed_iters},
              {"gpu_warmup_s", Num(t.gpu_warmup_s, form)},
              {store ? "l2" : "l2_policy", Name(t.l2)},
              {"accounting", Name(t.accounting)},
              {"seed", t.seed},
              {"fast_accum", Name(t.fast_accum)},
              {"autotune_k", t.autotune_k},
              {"amax_history_len", t.amax_history_len},
              {"amax_algo", Name(t.amax_algo)},
              {"precision_target", Num(t.precision_target, form)},
              {"item_budget_s", Num(t.item_budget_s, form)},
              {"b2b_count", t.b2b_count}};
  // The report schema predates kernel-only timing; the store keeps how a job was timed.
  if (store) out["timing_backend"] = Name(t.timing_backend);
  out["context"] = Name(t.context);
  out["energy"] = t.energy;
  out["w4_group"] = t.w4_group;
  return out;
}

Json StoredMeasurementJson(const core::Measurement& m) {
  constexpr JsonForm kStore = JsonForm::kStore;
  Json out = {{"time", StoredSampleStats(m.time)}};
  AddCost(m, kStore, out);
  AddRun(m, kStore, out);
  AddRounds(m, kStore, out);
  // Kernel-only timing and Nsight mode: only where present, so the common row stays small.
  if (m.kernel_samples > 0) {
    out["kernel"] = StoredSampleStats(m.kernel);
    out["kernel_quant_ms"] = Num(m.kernel_quant_ms, kStore);
    out["kernel_samples"] = m.kernel_samples;
    out["kernel_names"] = m.kernel_names;
  }
  if (m.profiled) out["profiled"] = true;
  AddContext(m, kStore, out);
  return out;
}

Json WorkItemJson(const core::WorkItem& item) {
  const core::GemmOp& op = item.op;
  Json out = {{"seq", item.seq}, {"id", item.id},   {"op", op.name},   {"pass", Name(op.pass)},
              {"m", op.shape.m}, {"k", op.shape.k}, {"n", op.shape.n}, {"groups", op.groups}};
  AddGrouping(op, out);
  out["layers"] = op.layers;
  out["per_layer"] = op.per_layer;
  out["recipe"] = Name(item.recipe);
  if (item.fast_accum != core::FastAccum::kDefault) out["fast_accum_own"] = Name(item.fast_accum);
  out["mode"] = Name(item.mode);
  return out;
}

Json ItemJson(const core::ItemRecord& item, const core::DeviceInfo& device) {
  Json out = WorkItemJson(item.item);
  out["status"] = Name(item.status);
  out["error"] = item.error;
  out["cached"] = item.cached;
  out["measured_unix_ms"] = item.measured_ms;
  out["measured_node"] = item.measured_node;
  out["device_uuid"] = item.device_uuid;
  out["result"] = ResultJson(item, device);
  return out;
}

// The recipes a spec names: whole ones, then those with a recipe per pass.
Json RequestedRecipes(const core::JobSpec& s) {
  Json out = Names(s.recipes);
  for (const core::RecipeVariant& v : s.variants) out.push_back(v.Name());
  return out;
}

Json JobJson(const core::JobRecord& j) {
  return {{"id", j.id},
          {"state", Name(j.state)},
          {"error", j.error},
          {"label", j.spec.label},
          {"model_name", j.plan.model_name},
          {"num_layers", j.plan.num_layers},
          {"requested_recipes", RequestedRecipes(j.spec)},
          {"requested_modes", Names(j.spec.modes)},
          {"force", j.spec.force},
          {"created_unix_ms", j.created_ms},
          {"started_unix_ms", j.started_ms},
          {"finished_unix_ms", j.finished_ms},
          {"total_items", j.total_items},
          {"finished_items", j.finished_items},
          {"failed_items", j.failed_items},
          {"node", j.node},
          {"devices", j.spec.devices},
          {"submitted_by", j.submitted_by},
          {"where", core::ToString(j.spec.where)},
          {"campaign", j.spec.campaign},
          {"measuring_nodes", j.measuring_nodes}};
}

Json JobSpecJson(const core::JobSpec& s) {
  Json shapes = Json::array();
  for (const core::GemmShape& shape : s.shapes) shapes.push_back(ShapeJson(shape));
  Json out = {{"model", s.model.has_value() ? ModelConfigJson(*s.model) : Json(nullptr)},
              {"shapes", shapes},
              {"recipes", Names(s.recipes)},
              {"modes", Names(s.modes)},
              {"timing", TimingJson(s.timing, JsonForm::kStore)},
              {"force", s.force},
              {"label", s.label},
              {"devices", s.devices},
              {"profile", s.profile},
              {"retries", s.retries},
              {"where", core::ToString(s.where)},
              {"priority", s.priority},
              {"campaign", s.campaign}};
  // Only when named, so the specs of jobs without them read as they always did.
  if (!s.variants.empty()) {
    Json variants = Json::array();
    for (const core::RecipeVariant& v : s.variants) variants.push_back(v.Name());
    out["variants"] = std::move(variants);
  }
  return out;
}

Json PlanJson(const core::Plan& p) {
  Json ops = Json::array();
  for (const core::GemmOp& op : p.ops) ops.push_back(GemmOpJson(op));
  return {{"model_name", p.model_name}, {"num_layers", p.num_layers}, {"ops", ops}};
}

Json Pick(const Json& object, std::initializer_list<std::string_view> keys) {
  Json out = Json::object();
  for (std::string_view key : keys) {
    const std::string name(key);
    if (auto it = object.find(name); it != object.end()) out[name] = *it;
  }
  return out;
}

}  // namespace gemmprof::report
