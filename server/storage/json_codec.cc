#include "server/storage/json_codec.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {
namespace {

using nlohmann::json;

json Number(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

template <typename E>
json Names(const std::vector<E>& values) {
  json out = json::array();
  for (E v : values) out.push_back(std::string(core::ToString(v)));
  return out;
}

// Reads fields of one JSON object; remembers the first problem instead of throwing,
// so decoders read straight through and report once. Missing fields keep defaults.
class Reader {
 public:
  Reader(const json& object, std::string path, absl::Status* status)
      : object_(object), path_(std::move(path)), status_(status) {
    if (!object_.is_object()) Fail(path_, "is not an object");
  }

  void Int(const char* key, int64_t* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      Fail(Name(key), "is out of range for int64");
    } else if (v->is_number_integer()) {
      *out = v->get<int64_t>();
    } else {
      Fail(Name(key), "is not an integer");
    }
  }
  void Int(const char* key, int32_t* out) {
    int64_t wide = *out;
    Int(key, &wide);
    if (wide < INT32_MIN || wide > INT32_MAX) return Fail(Name(key), "is out of range for int32");
    *out = static_cast<int32_t>(wide);
  }
  void Uint(const char* key, uint64_t* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) return Fail(Name(key), "is not an unsigned integer");
    *out = v->get<uint64_t>();
  }
  void Bool(const char* key, bool* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return Fail(Name(key), "is not a boolean");
    *out = v->get<bool>();
  }
  void Str(const char* key, std::string* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(Name(key), "is not a string");
    *out = v->get<std::string>();
  }
  void Double(const char* key, double* out) {
    const json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_number()) {
      *out = v->get<double>();
    } else if (v->is_string() && ParseNonFinite(v->get<std::string>(), out)) {
      return;
    } else {
      Fail(Name(key), "is not a number");
    }
  }
  template <typename E>
  void Enum(const char* key, E* out, std::optional<E> (*parse)(std::string_view)) {
    std::string text;
    if (Find(key) == nullptr) return;
    Str(key, &text);
    if (!status_->ok()) return;
    ParseEnum(Name(key), text, out, parse);
  }
  template <typename E>
  void EnumList(const char* key, std::vector<E>* out, std::optional<E> (*parse)(std::string_view)) {
    const json* v = Array(key);
    if (v == nullptr) return;
    out->clear();
    for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
      const std::string name = absl::StrCat(Name(key), "[", i, "]");
      if (!(*v)[i].is_string()) return Fail(name, "is not a string");
      E e{};
      ParseEnum(name, (*v)[i].get<std::string>(), &e, parse);
      out->push_back(e);
    }
  }
  void IntList(const char* key, std::vector<int64_t>* out) {
    const json* v = Array(key);
    if (v == nullptr) return;
    out->clear();
    for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
      const json& e = (*v)[i];
      if (!e.is_number_integer() ||
          (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t{INT64_MAX})) {
        return Fail(absl::StrCat(Name(key), "[", i, "]"), "is not an int64");
      }
      out->push_back(e.get<int64_t>());
    }
  }
  // Calls `read(Reader&, T*)` on each element of the array at `key`.
  template <typename T, typename F>
  void List(const char* key, std::vector<T>* out, F read) {
    const json* v = Array(key);
    if (v == nullptr) return;
    out->clear();
    for (size_t i = 0; i < v->size() && status_->ok(); ++i) {
      Reader element((*v)[i], absl::StrCat(Name(key), "[", i, "]"), status_);
      T value{};
      read(element, &value);
      out->push_back(std::move(value));
    }
  }
  // Reader over the object at `key`, or nullopt when the key is absent or null.
  std::optional<Reader> Child(const char* key) {
    const json* v = Find(key);
    if (v == nullptr || v->is_null()) return std::nullopt;
    return Reader(*v, Name(key), status_);
  }

 private:
  const json* Find(const char* key) {
    if (!status_->ok() || !object_.is_object()) return nullptr;
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  const json* Array(const char* key) {
    const json* v = Find(key);
    if (v != nullptr && !v->is_array()) {
      Fail(Name(key), "is not an array");
      return nullptr;
    }
    return v;
  }
  template <typename E>
  void ParseEnum(const std::string& name, const std::string& text, E* out,
                 std::optional<E> (*parse)(std::string_view)) {
    std::optional<E> e = parse(text);
    if (!e.has_value()) return Fail(name, absl::StrCat("has unknown value '", text, "'"));
    *out = *e;
  }
  static bool ParseNonFinite(const std::string& s, double* out) {
    if (s == "nan")
      *out = std::numeric_limits<double>::quiet_NaN();
    else if (s == "inf")
      *out = std::numeric_limits<double>::infinity();
    else if (s == "-inf")
      *out = -std::numeric_limits<double>::infinity();
    else
      return false;
    return true;
  }
  std::string Name(const char* key) const { return absl::StrCat(path_, ".", key); }
  void Fail(const std::string& name, std::string_view what) {
    if (status_->ok()) *status_ = absl::DataLossError(absl::StrCat(name, " ", AbslSv(what)));
  }

  const json& object_;
  std::string path_;
  absl::Status* status_;
};

json ToJson(const core::ModelConfig& c) {
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
          {"moe_skew", Number(c.moe_skew)},
          {"tensor_parallel", c.tensor_parallel},
          {"sequence_parallel", c.sequence_parallel},
          {"sweep_m", c.sweep_m},
          {"q_lora_rank", c.q_lora_rank},
          {"kv_lora_rank", c.kv_lora_rank},
          {"qk_nope_head_dim", c.qk_nope_head_dim},
          {"qk_rope_head_dim", c.qk_rope_head_dim},
          {"v_head_dim", c.v_head_dim}};
}

void Read(Reader& r, core::ModelConfig* c) {
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
  r.Int("tensor_parallel", &c->tensor_parallel);
  r.Bool("sequence_parallel", &c->sequence_parallel);
  r.IntList("sweep_m", &c->sweep_m);
  r.Int("q_lora_rank", &c->q_lora_rank);
  r.Int("kv_lora_rank", &c->kv_lora_rank);
  r.Int("qk_nope_head_dim", &c->qk_nope_head_dim);
  r.Int("qk_rope_head_dim", &c->qk_rope_head_dim);
  r.Int("v_head_dim", &c->v_head_dim);
}

json ToJson(const core::GemmShape& s) { return {{"m", s.m}, {"k", s.k}, {"n", s.n}}; }

void Read(Reader& r, core::GemmShape* s) {
  r.Int("m", &s->m);
  r.Int("k", &s->k);
  r.Int("n", &s->n);
}

json ToJson(const core::TimingOptions& t) {
  return {{"warmup_iters", t.warmup_iters},
          {"timed_iters", t.timed_iters},
          {"l2", std::string(core::ToString(t.l2))},
          {"autotune_k", t.autotune_k},
          {"seed", t.seed},
          {"accounting", std::string(core::ToString(t.accounting))},
          {"fast_accum", std::string(core::ToString(t.fast_accum))},
          {"amax_history_len", t.amax_history_len},
          {"amax_algo", std::string(core::ToString(t.amax_algo))},
          {"gpu_warmup_s", Number(t.gpu_warmup_s)}};
}

void Read(Reader& r, core::TimingOptions* t) {
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
}

json ToJson(const core::JobSpec& s) {
  json shapes = json::array();
  for (const auto& shape : s.shapes) shapes.push_back(ToJson(shape));
  return {{"model", s.model.has_value() ? ToJson(*s.model) : json(nullptr)},
          {"shapes", shapes},
          {"recipes", Names(s.recipes)},
          {"modes", Names(s.modes)},
          {"timing", ToJson(s.timing)},
          {"force", s.force},
          {"label", s.label}};
}

void Read(Reader& r, core::JobSpec* s) {
  if (std::optional<Reader> model = r.Child("model")) {
    s->model.emplace();
    Read(*model, &*s->model);
  }
  r.List("shapes", &s->shapes, [](Reader& e, core::GemmShape* v) { Read(e, v); });
  r.EnumList("recipes", &s->recipes, core::ParseRecipe);
  r.EnumList("modes", &s->modes, core::ParseMode);
  if (std::optional<Reader> timing = r.Child("timing")) Read(*timing, &s->timing);
  r.Bool("force", &s->force);
  r.Str("label", &s->label);
}

json ToJson(const core::GemmOp& op) {
  return {{"name", op.name},           {"pass", std::string(core::ToString(op.pass))},
          {"shape", ToJson(op.shape)}, {"groups", op.groups},
          {"layers", op.layers},       {"per_layer", op.per_layer}};
}

void Read(Reader& r, core::GemmOp* op) {
  r.Str("name", &op->name);
  r.Enum("pass", &op->pass, core::ParsePass);
  if (std::optional<Reader> shape = r.Child("shape")) Read(*shape, &op->shape);
  r.Int("groups", &op->groups);
  r.Int("layers", &op->layers);
  r.Bool("per_layer", &op->per_layer);
}

json ToJson(const core::Plan& p) {
  json ops = json::array();
  for (const auto& op : p.ops) ops.push_back(ToJson(op));
  return {{"model_name", p.model_name}, {"num_layers", p.num_layers}, {"ops", ops}};
}

void Read(Reader& r, core::Plan* p) {
  r.Str("model_name", &p->model_name);
  r.Int("num_layers", &p->num_layers);
  r.List("ops", &p->ops, [](Reader& e, core::GemmOp* v) { Read(e, v); });
}

json ToJson(const core::DeviceInfo& d) {
  json recipes = json::array();
  for (const auto& rs : d.recipes) {
    recipes.push_back({{"recipe", std::string(core::ToString(rs.recipe))},
                       {"supported", rs.supported},
                       {"reason", rs.reason}});
  }
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

void Read(Reader& r, core::DeviceInfo* d) {
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
  r.List("recipes", &d->recipes, [](Reader& e, core::RecipeSupport* v) {
    e.Enum("recipe", &v->recipe, core::ParseRecipe);
    e.Bool("supported", &v->supported);
    e.Str("reason", &v->reason);
  });
}

json ToJson(const core::SampleStats& s) {
  return {{"count", s.count},
          {"median_ms", Number(s.median_ms)},
          {"mean_ms", Number(s.mean_ms)},
          {"p20_ms", Number(s.p20_ms)},
          {"p80_ms", Number(s.p80_ms)},
          {"min_ms", Number(s.min_ms)},
          {"max_ms", Number(s.max_ms)},
          {"stdev_ms", Number(s.stdev_ms)}};
}

void Read(Reader& r, core::SampleStats* s) {
  r.Int("count", &s->count);
  r.Double("median_ms", &s->median_ms);
  r.Double("mean_ms", &s->mean_ms);
  r.Double("p20_ms", &s->p20_ms);
  r.Double("p80_ms", &s->p80_ms);
  r.Double("min_ms", &s->min_ms);
  r.Double("max_ms", &s->max_ms);
  r.Double("stdev_ms", &s->stdev_ms);
}

json ToJson(const core::Telemetry& t) {
  return {{"sm_clock_mhz_min", Number(t.sm_clock_mhz_min)},
          {"sm_clock_mhz_max", Number(t.sm_clock_mhz_max)},
          {"mem_clock_mhz", Number(t.mem_clock_mhz)},
          {"power_w_avg", Number(t.power_w_avg)},
          {"power_w_max", Number(t.power_w_max)},
          {"temp_c_max", Number(t.temp_c_max)},
          {"throttle_reasons", t.throttle_reasons},
          {"throttled_samples", t.throttled_samples},
          {"telemetry_samples", t.telemetry_samples}};
}

void Read(Reader& r, core::Telemetry* t) {
  r.Double("sm_clock_mhz_min", &t->sm_clock_mhz_min);
  r.Double("sm_clock_mhz_max", &t->sm_clock_mhz_max);
  r.Double("mem_clock_mhz", &t->mem_clock_mhz);
  r.Double("power_w_avg", &t->power_w_avg);
  r.Double("power_w_max", &t->power_w_max);
  r.Double("temp_c_max", &t->temp_c_max);
  r.Uint("throttle_reasons", &t->throttle_reasons);
  r.Int("throttled_samples", &t->throttled_samples);
  r.Int("telemetry_samples", &t->telemetry_samples);
}

json ToJson(const core::Measurement& m) {
  return {{"time", ToJson(m.time)},
          {"quant_ms", Number(m.quant_ms)},
          {"flops", Number(m.flops)},
          {"bytes", Number(m.bytes)},
          {"algorithm", m.algorithm},
          {"verification", std::string(core::ToString(m.verification))},
          {"rel_error", Number(m.rel_error)},
          {"error_threshold", Number(m.error_threshold)},
          {"accounting", std::string(core::ToString(m.accounting))},
          {"fast_accum", m.fast_accum},
          {"telemetry", ToJson(m.telemetry)},
          {"notes", m.notes}};
}

void Read(Reader& r, core::Measurement* m) {
  if (std::optional<Reader> time = r.Child("time")) Read(*time, &m->time);
  r.Double("quant_ms", &m->quant_ms);
  r.Double("flops", &m->flops);
  r.Double("bytes", &m->bytes);
  r.Str("algorithm", &m->algorithm);
  r.Enum("verification", &m->verification, core::ParseVerification);
  r.Double("rel_error", &m->rel_error);
  r.Double("error_threshold", &m->error_threshold);
  r.Enum("accounting", &m->accounting, core::ParseAccounting);
  r.Bool("fast_accum", &m->fast_accum);
  if (std::optional<Reader> telemetry = r.Child("telemetry")) Read(*telemetry, &m->telemetry);
  r.Str("notes", &m->notes);
}

template <typename T>
absl::StatusOr<T> Decode(std::string_view text, const char* what) {
  // allow_exceptions=false: invalid text yields a discarded value instead of a throw.
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::DataLossError(absl::StrCat(what, ": stored text is not valid JSON"));
  }
  absl::Status status;
  Reader reader(parsed, what, &status);
  T value{};
  Read(reader, &value);
  RETURN_IF_ERROR(status);
  return value;
}

}  // namespace

std::string EncodeJobSpec(const core::JobSpec& spec) { return ToJson(spec).dump(); }
std::string EncodePlan(const core::Plan& plan) { return ToJson(plan).dump(); }
std::string EncodeDeviceInfo(const core::DeviceInfo& device) { return ToJson(device).dump(); }
std::string EncodeTimingOptions(const core::TimingOptions& timing) { return ToJson(timing).dump(); }
std::string EncodeMeasurement(const core::Measurement& measurement) {
  return ToJson(measurement).dump();
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

}  // namespace gemmprof::storage
