#include "server/storage/json_codec.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/record_json.h"
#include "server/storage/json_reader.h"

namespace gemmprof::storage {
namespace {

using nlohmann::json;

// The store's text of a mapped record. Keys are sorted (nlohmann::json keeps them so), as
// every row written so far has them.
std::string Dump(const report::Json& value) { return json(value).dump(); }

void Read(JsonReader& r, core::ModelConfig* c) {
  r.Str("name", &c->name);
  r.Int("hidden_size", &c->hidden_size);
  r.Int("intermediate_size", &c->intermediate_size);
  r.Int("num_attention_heads", &c->num_attention_heads);
  r.Int("num_key_value_heads", &c->num_key_value_heads);
  r.Int("head_dim", &c->head_dim);
  r.Int("num_hidden_layers", &c->num_hidden_layers);
  r.Int("micro_batch_size", &c->micro_batch_size);
  r.Int("sequence_length", &c->sequence_length);
  r.Int("vocab_size", &c->vocab_size);
  r.Str("hidden_act", &c->hidden_act);
  r.Bool("gated_mlp", &c->gated_mlp);
  r.Bool("split_gate_up", &c->split_gate_up);
  r.Bool("tie_word_embeddings", &c->tie_word_embeddings);
  r.Int("num_experts", &c->num_experts);
  r.Int("experts_per_token", &c->experts_per_token);
  r.Int("moe_intermediate_size", &c->moe_intermediate_size);
  r.Int("num_shared_experts", &c->num_shared_experts);
  r.Int("first_dense_layers", &c->first_dense_layers);
  r.Double("moe_skew", &c->moe_skew);
  // Specs stored before routings and layouts lack these keys and keep the defaults.
  r.Str("moe_routing", &c->moe_routing);
  r.Int("moe_seed", &c->moe_seed);
  r.Str("moe_layout", &c->moe_layout);
  r.Int("tensor_parallel", &c->tensor_parallel);
  r.Bool("sequence_parallel", &c->sequence_parallel);
  r.IntList("sweep_m", &c->sweep_m);
  r.Int("q_lora_rank", &c->q_lora_rank);
  r.Int("kv_lora_rank", &c->kv_lora_rank);
  r.Int("qk_nope_head_dim", &c->qk_nope_head_dim);
  r.Int("qk_rope_head_dim", &c->qk_rope_head_dim);
  r.Int("v_head_dim", &c->v_head_dim);
}

void Read(JsonReader& r, core::GemmShape* s) {
  r.Int("m", &s->m);
  r.Int("k", &s->k);
  r.Int("n", &s->n);
}

void Read(JsonReader& r, core::TimingOptions* t) {
  r.Int("warmup_iters", &t->warmup_iters);
  r.Int("timed_iters", &t->timed_iters);
  r.Enum("l2", &t->l2, core::ParseL2Policy);
  r.Int("autotune_k", &t->autotune_k);
  r.Uint("seed", &t->seed);
  r.Enum("accounting", &t->accounting, core::ParseAccounting);
  r.Enum("fast_accum", &t->fast_accum, core::ParseFastAccum);
  r.Int("amax_history_len", &t->amax_history_len);
  r.Enum("amax_algo", &t->amax_algo, core::ParseAmaxAlgo);
  r.Double("gpu_warmup_s", &t->gpu_warmup_s);
  r.Double("precision_target", &t->precision_target);
  r.Double("item_budget_s", &t->item_budget_s);
  r.Int("b2b_count", &t->b2b_count);
  r.Enum("timing_backend", &t->timing_backend, core::ParseTimingBackend);
  r.Enum("context", &t->context, core::ParseMeasureContext);
  r.Bool("energy", &t->energy);
  r.Int("w4_group", &t->w4_group);
}

std::optional<core::RecipeVariant> ParseVariant(std::string_view name) {
  absl::StatusOr<core::RecipeVariant> v = core::ParseRecipeVariant(name);
  if (!v.ok() || !v->composite()) return std::nullopt;
  return *v;
}

void Read(JsonReader& r, core::JobSpec* s) {
  if (std::optional<JsonReader> model = r.Child("model")) {
    s->model.emplace();
    Read(*model, &*s->model);
  }
  r.List("shapes", &s->shapes, [](JsonReader& e, core::GemmShape* v) { Read(e, v); });
  r.EnumList("recipes", &s->recipes, core::ParseRecipe);
  r.EnumList("variants", &s->variants, ParseVariant);  // absent in specs without them
  r.EnumList("modes", &s->modes, core::ParseMode);
  if (std::optional<JsonReader> timing = r.Child("timing")) Read(*timing, &s->timing);
  r.Bool("force", &s->force);
  r.Str("label", &s->label);
  std::vector<int64_t> devices;
  r.IntList("devices", &devices);
  s->devices.assign(devices.begin(), devices.end());
  r.Bool("profile", &s->profile);
  r.Int("retries", &s->retries);
  std::string where;
  r.Str("where", &where);
  if (absl::StatusOr<core::Placement> p = core::ParsePlacement("where", where); p.ok()) {
    s->where = *std::move(p);
  } else {
    r.Invalid("where", std::string(p.status().message()));
  }
  r.Int("priority", &s->priority);
  r.Str("campaign", &s->campaign);
}

void Read(JsonReader& r, core::GemmOp* op) {
  r.Str("name", &op->name);
  r.Enum("pass", &op->pass, core::ParsePass);
  if (std::optional<JsonReader> shape = r.Child("shape")) Read(*shape, &op->shape);
  r.Int("groups", &op->groups);
  r.IntList("group_tokens", &op->group_tokens);
  r.Enum("layout", &op->layout, core::ParseMoeLayout);
  r.Int("layers", &op->layers);
  r.Bool("per_layer", &op->per_layer);
}

void Read(JsonReader& r, core::Plan* p) {
  r.Str("model_name", &p->model_name);
  r.Int("num_layers", &p->num_layers);
  r.List("ops", &p->ops, [](JsonReader& e, core::GemmOp* v) { Read(e, v); });
}

void Read(JsonReader& r, core::DeviceInfo* d) {
  r.Str("backend", &d->backend);
  r.Str("name", &d->name);
  r.Str("uuid", &d->uuid);
  r.Int("sm", &d->sm);
  r.Int("sm_count", &d->sm_count);
  r.Int("memory_bytes", &d->memory_bytes);
  r.Str("driver_version", &d->driver_version);
  r.Str("cuda_version", &d->cuda_version);
  r.Str("cublaslt_version", &d->cublaslt_version);
  r.Str("gemmprof_version", &d->gemmprof_version);
  r.List("recipes", &d->recipes, [](JsonReader& e, core::RecipeSupport* v) {
    e.Enum("recipe", &v->recipe, core::ParseRecipe);
    e.Bool("supported", &v->supported);
    e.Str("reason", &v->reason);
  });
}

void Read(JsonReader& r, core::SampleStats* s) {
  r.Int("count", &s->count);
  r.Double("median_ms", &s->median_ms);
  r.Double("mean_ms", &s->mean_ms);
  r.Double("p20_ms", &s->p20_ms);
  r.Double("p80_ms", &s->p80_ms);
  r.Double("min_ms", &s->min_ms);
  r.Double("max_ms", &s->max_ms);
  r.Double("stdev_ms", &s->stdev_ms);
}

void Read(JsonReader& r, core::Telemetry* t) {
  r.Double("sm_clock_mhz_min", &t->sm_clock_mhz_min);
  r.Double("sm_clock_mhz_max", &t->sm_clock_mhz_max);
  r.Double("mem_clock_mhz", &t->mem_clock_mhz);
  r.Double("power_w_avg", &t->power_w_avg);
  r.Double("power_w_max", &t->power_w_max);
  r.Double("temp_c_max", &t->temp_c_max);
  r.Uint("throttle_reasons", &t->throttle_reasons);
  r.Int("throttled_samples", &t->throttled_samples);
  r.Int("telemetry_samples", &t->telemetry_samples);
  r.Double("sm_clock_mhz_mean", &t->sm_clock_mhz_mean);
}

void Read(JsonReader& r, core::Estimate* e) {
  r.Double("center_ms", &e->center_ms);
  r.Double("ci_low_ms", &e->ci_low_ms);
  r.Double("ci_high_ms", &e->ci_high_ms);
  r.Int("rounds", &e->rounds);
  r.Double("n_eff", &e->n_eff);
}

void Read(JsonReader& r, core::Energy* e) {
  r.Double("joules", &e->joules);
  r.Double("joules_ci_low", &e->joules_low);
  r.Double("joules_ci_high", &e->joules_high);
  r.DoubleList("period_joules", &e->period_joules);
  r.Double("n_eff", &e->n_eff);
  r.Double("power_w", &e->power_w);
  r.Double("sampled_power_w", &e->sampled_power_w);
  r.Double("window_s", &e->window_s);
  r.Int("counter_updates", &e->counter_updates);
  r.Double("iteration_ms", &e->iteration_ms);
  r.Double("idle_power_w", &e->idle_power_w);
  r.Str("not_measured", &e->not_measured);
}

void Read(JsonReader& r, core::Measurement* m) {
  if (std::optional<JsonReader> time = r.Child("time")) Read(*time, &m->time);
  r.Double("quant_ms", &m->quant_ms);
  r.Double("flops", &m->flops);
  r.Double("bytes", &m->bytes);
  r.Str("algorithm", &m->algorithm);
  r.Enum("verification", &m->verification, core::ParseVerification);
  r.Double("rel_error", &m->rel_error);
  r.Double("error_threshold", &m->error_threshold);
  r.Enum("accounting", &m->accounting, core::ParseAccounting);
  r.Bool("fast_accum", &m->fast_accum);
  if (std::optional<JsonReader> telemetry = r.Child("telemetry")) Read(*telemetry, &m->telemetry);
  r.Str("notes", &m->notes);
  // Interleaved rounds: rows stored before them lack these keys and keep the defaults.
  if (std::optional<JsonReader> e = r.Child("isolated")) Read(*e, &m->isolated);
  if (std::optional<JsonReader> e = r.Child("b2b")) Read(*e, &m->b2b);
  r.Int("b2b_count", &m->b2b_count);
  r.DoubleList("round_ms", &m->round_ms);
  r.DoubleList("b2b_round_ms", &m->b2b_round_ms);
  r.DoubleList("quant_round_ms", &m->quant_round_ms);
  if (std::optional<JsonReader> e = r.Child("quant")) Read(*e, &m->quant);
  r.Str("group_uid", &m->group_uid);
  r.Int("group_members", &m->group_members);
  r.Str("work_key", &m->work_key);
  r.Int("shared_with_item", &m->shared_with_item);
  r.Double("quant_bytes", &m->quant_bytes);
  r.Double("copy_bytes_per_s", &m->copy_bytes_per_s);
  r.Str("stop_reason", &m->stop_reason);
  if (std::optional<JsonReader> k = r.Child("kernel")) Read(*k, &m->kernel);
  r.Double("kernel_quant_ms", &m->kernel_quant_ms);
  r.Int("kernel_samples", &m->kernel_samples);
  r.Str("kernel_names", &m->kernel_names);
  r.Bool("profiled", &m->profiled);
  // Contexts and energy: rows stored before them lack these keys.
  r.Str("batch_id", &m->batch_id);
  r.Str("context", &m->context);
  r.Str("batch_gemms", &m->batch_gemms);
  if (std::optional<JsonReader> e = r.Child("energy")) Read(*e, &m->energy);
}

void Read(JsonReader& r, core::DaemonDeviceModel* m) {
  r.Str("name", &m->name);
  r.Int("count", &m->count);
  r.Int("unavailable", &m->unavailable);
}

void Read(JsonReader& r, core::DaemonRecord* d) {
  r.Str("node", &d->node);
  r.Str("version", &d->version);
  r.Str("backend", &d->backend);
  r.List("models", &d->models, [](JsonReader& e, core::DaemonDeviceModel* v) { Read(e, v); });
  r.Int("devices", &d->devices);
  r.Int("busy", &d->busy);
  r.Int("started_unix_ms", &d->started_unix_ms);
  r.Int("heartbeat_unix_ms", &d->heartbeat_unix_ms);
  r.Bool("stopped", &d->stopped);
}

template <typename T>
absl::StatusOr<T> Decode(std::string_view text, const char* what) {
  // allow_exceptions=false: invalid text yields a discarded value instead of a throw.
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::DataLossError(absl::StrCat(what, ": stored text is not valid JSON"));
  }
  absl::Status status;
  JsonReader reader(parsed, what, &status);
  T value{};
  Read(reader, &value);
  RETURN_IF_ERROR(status);
  return value;
}

}  // namespace

std::string EncodeJobSpec(const core::JobSpec& spec) { return Dump(report::JobSpecJson(spec)); }
std::string EncodePlan(const core::Plan& plan) { return Dump(report::PlanJson(plan)); }
std::string EncodeDeviceInfo(const core::DeviceInfo& device) {
  return Dump(report::DeviceJson(device));
}
std::string EncodeTimingOptions(const core::TimingOptions& timing) {
  return Dump(report::TimingJson(timing, report::JsonForm::kStore));
}
std::string EncodeMeasurement(const core::Measurement& measurement) {
  return Dump(report::StoredMeasurementJson(measurement));
}
std::string EncodeDaemon(const core::DaemonRecord& daemon) {
  return Dump(report::DaemonJson(daemon));
}

absl::StatusOr<core::JobSpec> DecodeJobSpec(std::string_view json) {
  return Decode<core::JobSpec>(json, "job_spec");
}
absl::StatusOr<core::Plan> DecodePlan(std::string_view json) {
  return Decode<core::Plan>(json, "plan");
}
absl::StatusOr<core::DeviceInfo> DecodeDeviceInfo(std::string_view json) {
  return Decode<core::DeviceInfo>(json, "device");
}
absl::StatusOr<core::TimingOptions> DecodeTimingOptions(std::string_view json) {
  return Decode<core::TimingOptions>(json, "timing");
}
absl::StatusOr<core::Measurement> DecodeMeasurement(std::string_view json) {
  return Decode<core::Measurement>(json, "measurement");
}
absl::StatusOr<core::DaemonRecord> DecodeDaemon(std::string_view json) {
  return Decode<core::DaemonRecord>(json, "daemon");
}

}  // namespace gemmprof::storage
