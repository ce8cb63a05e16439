#include "server/storage/json_codec.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage {
namespace {

using ::testing::HasSubstr;

TEST(JsonCodecTest, JobSpecRoundTripsEveryField) {
  core::JobSpec spec = testing::SeedJob("my run").spec;
  spec.model->name = "llama-3-8b";
  spec.model->num_key_value_heads = 8;
  spec.model->head_dim = 128;
  spec.model->vocab_size = 128256;
  spec.model->hidden_act = "silu";
  spec.model->gated_mlp = true;
  spec.model->split_gate_up = true;
  spec.model->tie_word_embeddings = true;
  spec.model->num_experts = 64;
  spec.model->experts_per_token = 6;
  spec.model->moe_intermediate_size = 1408;
  spec.model->num_shared_experts = 2;
  spec.model->first_dense_layers = 1;
  spec.model->moe_skew = 1.25;
  spec.model->moe_routing = "hot:4:0.5";
  spec.model->moe_seed = 9;
  spec.model->moe_layout = "masked";
  spec.model->tensor_parallel = 4;
  spec.model->sequence_parallel = true;
  spec.model->sweep_m = {1, 16, 4096};
  spec.model->q_lora_rank = 1536;
  spec.model->kv_lora_rank = 512;
  spec.model->qk_nope_head_dim = 128;
  spec.model->qk_rope_head_dim = 64;
  spec.model->v_head_dim = 128;
  spec.shapes = {{1024, 2048, 4096}, {8, 16, 32}};
  spec.timing.warmup_iters = 3;
  spec.timing.timed_iters = 77;
  spec.timing.l2 = core::L2Policy::kCold;
  spec.timing.autotune_k = 4;
  spec.timing.seed = 18446744073709551615ull;  // uint64 max survives JSON
  spec.timing.accounting = core::Accounting::kPerGemm;
  spec.timing.fast_accum = core::FastAccum::kOff;
  spec.timing.amax_history_len = 16;
  spec.timing.amax_algo = core::AmaxAlgo::kMostRecent;
  spec.timing.gpu_warmup_s = 0.25;
  spec.force = true;
  spec.retries = 3;

  absl::StatusOr<core::JobSpec> back = DecodeJobSpec(EncodeJobSpec(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->model.has_value());
  const core::ModelConfig& a = *spec.model;
  const core::ModelConfig& b = *back->model;
  EXPECT_EQ(b.name, a.name);
  EXPECT_EQ(b.hidden_size, a.hidden_size);
  EXPECT_EQ(b.intermediate_size, a.intermediate_size);
  EXPECT_EQ(b.num_attention_heads, a.num_attention_heads);
  EXPECT_EQ(b.num_key_value_heads, a.num_key_value_heads);
  EXPECT_EQ(b.head_dim, a.head_dim);
  EXPECT_EQ(b.num_hidden_layers, a.num_hidden_layers);
  EXPECT_EQ(b.micro_batch_size, a.micro_batch_size);
  EXPECT_EQ(b.sequence_length, a.sequence_length);
  EXPECT_EQ(b.vocab_size, a.vocab_size);
  EXPECT_EQ(b.hidden_act, a.hidden_act);
  EXPECT_EQ(b.gated_mlp, a.gated_mlp);
  EXPECT_EQ(b.split_gate_up, a.split_gate_up);
  EXPECT_EQ(b.tie_word_embeddings, a.tie_word_embeddings);
  EXPECT_EQ(b.num_experts, a.num_experts);
  EXPECT_EQ(b.experts_per_token, a.experts_per_token);
  EXPECT_EQ(b.moe_intermediate_size, a.moe_intermediate_size);
  EXPECT_EQ(b.num_shared_experts, a.num_shared_experts);
  EXPECT_EQ(b.first_dense_layers, a.first_dense_layers);
  EXPECT_EQ(b.moe_skew, a.moe_skew);
  EXPECT_EQ(b.moe_routing, "hot:4:0.5");
  EXPECT_EQ(b.moe_seed, 9);
  EXPECT_EQ(b.moe_layout, "masked");
  EXPECT_EQ(b.tensor_parallel, a.tensor_parallel);
  EXPECT_EQ(b.sequence_parallel, a.sequence_parallel);
  EXPECT_EQ(b.sweep_m, a.sweep_m);
  EXPECT_EQ(b.q_lora_rank, a.q_lora_rank);
  EXPECT_EQ(b.kv_lora_rank, a.kv_lora_rank);
  EXPECT_EQ(b.qk_nope_head_dim, a.qk_nope_head_dim);
  EXPECT_EQ(b.qk_rope_head_dim, a.qk_rope_head_dim);
  EXPECT_EQ(b.v_head_dim, a.v_head_dim);
  EXPECT_EQ(back->shapes, spec.shapes);
  EXPECT_EQ(back->recipes, spec.recipes);
  EXPECT_EQ(back->modes, spec.modes);
  EXPECT_EQ(back->timing, spec.timing);
  // The clean L2 policy is stored by name like the others.
  spec.timing.l2 = core::L2Policy::kClean;
  back = DecodeJobSpec(EncodeJobSpec(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->timing.l2, core::L2Policy::kClean);
  EXPECT_EQ(back->force, spec.force);
  EXPECT_EQ(back->label, spec.label);
  EXPECT_EQ(back->retries, 3);
  // Encoding is deterministic, so a second trip is byte-identical.
  EXPECT_EQ(EncodeJobSpec(*back), EncodeJobSpec(spec));
}

TEST(JsonCodecTest, ShapeListSpecHasNoModel) {
  core::JobSpec spec;
  spec.shapes = {{1, 2, 3}};
  absl::StatusOr<core::JobSpec> back = DecodeJobSpec(EncodeJobSpec(spec));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->model.has_value());
  EXPECT_EQ(back->shapes, spec.shapes);
  // No "variants" key without variants: specs read and written as they always were.
  EXPECT_EQ(EncodeJobSpec(spec).find("variants"), std::string::npos);
  // A spec stored before --retries existed reads as the default.
  std::string old = EncodeJobSpec(spec);
  const size_t at = old.find(",\"retries\":1");
  ASSERT_NE(at, std::string::npos) << old;
  old.erase(at, std::string(",\"retries\":1").size());
  EXPECT_EQ(DecodeJobSpec(old)->retries, 1);
}

TEST(JsonCodecTest, PlanRoundTrips) {
  core::Plan plan;
  plan.model_name = "deepseek-v3";
  plan.num_layers = 61;
  plan.ops = {{"qkv", core::Pass::kFprop, {15872, 4096, 12288}, 1, 61, true},
              {"experts_up", core::Pass::kWgrad, {4096, 15872, 2816}, 8, 58, true},
              {"lm_head", core::Pass::kDgrad, {15872, 129280, 7168}, 1, 1, false}};
  absl::StatusOr<core::Plan> back = DecodePlan(EncodePlan(plan));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->model_name, plan.model_name);
  EXPECT_EQ(back->num_layers, plan.num_layers);
  EXPECT_EQ(back->ops, plan.ops);
}

TEST(JsonCodecTest, PlanKeepsRoutedTokensAndLayouts) {
  core::Plan plan;
  core::GemmOp routed{"experts_up", core::Pass::kWgrad, {4096, 8, 2816}, 3, 58, true};
  routed.group_tokens = {3, 0, 5};
  routed.layout = core::MoeLayout::kMasked;
  plan.ops = {routed, {"qkv", core::Pass::kFprop, {16, 4096, 12288}, 1, 61, true}};
  const std::string text = EncodePlan(plan);
  EXPECT_THAT(text, HasSubstr("\"group_tokens\":[3,0,5]"));
  EXPECT_THAT(text, HasSubstr("\"layout\":\"masked\""));
  absl::StatusOr<core::Plan> back = DecodePlan(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ops, plan.ops);
  // A dense op writes neither key: plans stored before them read back the same.
  EXPECT_EQ(EncodePlan(core::Plan{"m", 1, {plan.ops[1]}}).find("layout"), std::string::npos);
  std::string bad = text;
  bad.replace(bad.find("\"masked\""), 8, "\"packed\"");
  EXPECT_EQ(DecodePlan(bad).status(),
            absl::DataLossError("plan.ops[0].layout has unknown value 'packed'"));
}

TEST(JsonCodecTest, SpecStoredBeforeRoutingReadsTheDefaults) {
  core::JobSpec spec = testing::SeedJob().spec;
  std::string old = EncodeJobSpec(spec);
  for (const std::string key :
       {",\"moe_layout\":\"\"", ",\"moe_routing\":\"\"", ",\"moe_seed\":1"}) {
    const size_t at = old.find(key);
    ASSERT_NE(at, std::string::npos) << key << " in " << old;
    old.erase(at, key.size());
  }
  absl::StatusOr<core::JobSpec> back = DecodeJobSpec(old);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->model->moe_routing, "");
  EXPECT_EQ(back->model->moe_seed, 1);
  EXPECT_EQ(back->model->moe_layout, "");
}

TEST(JsonCodecTest, DeviceInfoRoundTrips) {
  const core::DeviceInfo d = testing::H100();
  absl::StatusOr<core::DeviceInfo> back = DecodeDeviceInfo(EncodeDeviceInfo(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->backend, d.backend);
  EXPECT_EQ(back->name, d.name);
  EXPECT_EQ(back->uuid, d.uuid);
  EXPECT_EQ(back->sm, d.sm);
  EXPECT_EQ(back->sm_count, d.sm_count);
  EXPECT_EQ(back->memory_bytes, d.memory_bytes);
  EXPECT_EQ(back->driver_version, d.driver_version);
  EXPECT_EQ(back->cuda_version, d.cuda_version);
  EXPECT_EQ(back->cublaslt_version, d.cublaslt_version);
  EXPECT_EQ(back->gemmprof_version, d.gemmprof_version);
  ASSERT_EQ(back->recipes.size(), 2u);
  EXPECT_EQ(back->recipes[1].recipe, core::Recipe::kMxfp8);
  EXPECT_FALSE(back->recipes[1].supported);
  EXPECT_EQ(back->recipes[1].reason, d.recipes[1].reason);
}

struct BadCase {
  const char* json;
  const char* message;
};

TEST(JsonCodecTest, DaemonRecordRoundTripsAndBadRowsNameTheirField) {
  core::DaemonRecord d;
  d.node = "gpu-node-7";
  d.version = "0.1.0";
  d.backend = "cuda";
  d.models = {{"NVIDIA H200", 7, 1}, {"NVIDIA H100 80GB HBM3", 1, 0}};
  d.devices = 8;
  d.busy = 5;
  d.started_unix_ms = 1'700'000'000'000;
  d.heartbeat_unix_ms = 1'700'000'010'000;
  d.stopped = true;
  absl::StatusOr<core::DaemonRecord> back = DecodeDaemon(EncodeDaemon(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node, d.node);
  EXPECT_EQ(back->version, d.version);
  EXPECT_EQ(back->backend, d.backend);
  ASSERT_EQ(back->models.size(), 2u);
  EXPECT_EQ(back->models[0].name, "NVIDIA H200");
  EXPECT_EQ(back->models[0].count, 7);
  EXPECT_EQ(back->models[0].unavailable, 1);
  EXPECT_EQ(back->models[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back->devices, 8);
  EXPECT_EQ(back->busy, 5);
  EXPECT_EQ(back->started_unix_ms, d.started_unix_ms);
  EXPECT_EQ(back->heartbeat_unix_ms, d.heartbeat_unix_ms);
  EXPECT_TRUE(back->stopped);
  const BadCase cases[] = {
      {"{", "daemon: stored text is not valid JSON"},
      {R"({"busy": "two"})", "daemon.busy is not an integer"},
      {R"({"models": {"name": "x"}})", "daemon.models is not an array"},
      {R"({"models": [{"count": 1.5}]})", "daemon.models[0].count is not an integer"},
      {R"({"stopped": "yes"})", "daemon.stopped is not a boolean"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<core::DaemonRecord> r = DecodeDaemon(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << c.json;
    EXPECT_THAT(r.status().message(), HasSubstr(c.message)) << c.json;
  }
}

TEST(JsonCodecTest, MeasurementRoundTripsIncludingNonFiniteNumbers) {
  core::Measurement m = testing::SampleMeasurement(1.234);
  m.verification = core::Verification::kIncorrect;
  m.accounting = core::Accounting::kPerGemm;
  m.fast_accum = true;
  m.rel_error = std::numeric_limits<double>::quiet_NaN();
  m.error_threshold = std::numeric_limits<double>::infinity();
  m.quant_ms = -std::numeric_limits<double>::infinity();
  m.telemetry = {1200, 1980, 2619, 550.5, 700, 71, 0x4, 2, 9};
  m.notes = "throttled: \"power\"\n";
  absl::StatusOr<core::Measurement> back = DecodeMeasurement(EncodeMeasurement(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->time.count, 3);
  EXPECT_EQ(back->time.median_ms, m.time.median_ms);
  EXPECT_EQ(back->time.mean_ms, m.time.mean_ms);
  EXPECT_EQ(back->time.p20_ms, m.time.p20_ms);
  EXPECT_EQ(back->time.p80_ms, m.time.p80_ms);
  EXPECT_EQ(back->time.min_ms, m.time.min_ms);
  EXPECT_EQ(back->time.max_ms, m.time.max_ms);
  EXPECT_EQ(back->time.stdev_ms, m.time.stdev_ms);
  EXPECT_TRUE(std::isnan(back->rel_error));
  EXPECT_EQ(back->error_threshold, std::numeric_limits<double>::infinity());
  EXPECT_EQ(back->quant_ms, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(back->flops, m.flops);
  EXPECT_EQ(back->bytes, m.bytes);
  EXPECT_EQ(back->algorithm, m.algorithm);
  EXPECT_EQ(back->verification, m.verification);
  EXPECT_EQ(back->accounting, m.accounting);
  EXPECT_EQ(back->fast_accum, m.fast_accum);
  EXPECT_EQ(back->telemetry.sm_clock_mhz_min, 1200);
  EXPECT_EQ(back->telemetry.power_w_avg, 550.5);
  EXPECT_EQ(back->telemetry.temp_c_max, 71);
  EXPECT_EQ(back->telemetry.throttle_reasons, 0x4u);
  EXPECT_EQ(back->telemetry.throttled_samples, 2);
  EXPECT_EQ(back->telemetry.telemetry_samples, 9);
  EXPECT_EQ(back->notes, m.notes);
}

TEST(JsonCodecTest, MissingFieldsKeepDefaults) {
  absl::StatusOr<core::TimingOptions> t = DecodeTimingOptions(R"({"timed_iters": 5})");
  ASSERT_TRUE(t.ok()) << t.status();
  core::TimingOptions expected;
  expected.timed_iters = 5;
  EXPECT_EQ(*t, expected);
}

TEST(JsonCodecTest, BadInputIsDataLossNamingTheField) {
  const BadCase cases[] = {
      {"", "not valid JSON"},
      {"{\"timed_iters\": ", "not valid JSON"},
      {"[1, 2]", "timing is not an object"},
      {R"({"timed_iters": "100"})", "timing.timed_iters is not an integer"},
      {R"({"timed_iters": 1.5})", "timing.timed_iters is not an integer"},
      {R"({"timed_iters": 3000000000})", "timing.timed_iters is out of range for int32"},
      {R"({"seed": -1})", "timing.seed is not an unsigned integer"},
      {R"({"l2": "lukewarm"})", "timing.l2 has unknown value 'lukewarm'"},
      {R"({"l2": 1})", "timing.l2 is not a string"},
      {R"({"gpu_warmup_s": "fast"})", "timing.gpu_warmup_s is not a number"},
      {R"({"gpu_warmup_s": true})", "timing.gpu_warmup_s is not a number"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<core::TimingOptions> t = DecodeTimingOptions(c.json);
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << c.json;
    EXPECT_THAT(t.status().message(), HasSubstr(c.message)) << c.json;
  }
}

// Recipes with a recipe per pass are stored by name beside the whole recipes.
TEST(JsonCodecTest, VariantsRoundTripByName) {
  core::JobSpec spec;
  spec.shapes = {{1, 2, 3}};
  spec.recipes = {core::Recipe::kBf16};
  spec.variants = {*core::ParseRecipeVariant("fp8-rowwise+wgrad:bf16"),
                   *core::ParseRecipeVariant("bf16+fprop:fp8-current")};
  const std::string text = EncodeJobSpec(spec);
  EXPECT_NE(text.find(R"("variants":["fp8-rowwise+wgrad:bf16","bf16+fprop:fp8-current"])"),
            std::string::npos)
      << text;
  absl::StatusOr<core::JobSpec> back = DecodeJobSpec(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->recipes, spec.recipes);
  EXPECT_EQ(back->variants, spec.variants);
  EXPECT_THAT(DecodeJobSpec(R"({"variants": ["fp8-rowwise+wgard:bf16"]})").status().message(),
              HasSubstr("job_spec.variants[0] has unknown value 'fp8-rowwise+wgard:bf16'"));
  // A whole recipe is not a variant.
  EXPECT_THAT(DecodeJobSpec(R"({"variants": ["bf16"]})").status().message(),
              HasSubstr("job_spec.variants[0] has unknown value 'bf16'"));
}

TEST(JsonCodecTest, BadNestedValuesNameTheirPath) {
  EXPECT_THAT(DecodeJobSpec(R"({"recipes": ["bf16", "fp7"]})").status().message(),
              HasSubstr("job_spec.recipes[1] has unknown value 'fp7'"));
  EXPECT_THAT(DecodeJobSpec(R"({"recipes": "bf16"})").status().message(),
              HasSubstr("job_spec.recipes is not an array"));
  EXPECT_THAT(DecodeJobSpec(R"({"shapes": [{"m": 1}, {"k": "x"}]})").status().message(),
              HasSubstr("job_spec.shapes[1].k is not an integer"));
  EXPECT_THAT(DecodeJobSpec(R"({"model": {"sweep_m": [1, 2.5]}})").status().message(),
              HasSubstr("job_spec.model.sweep_m[1] is not an int64"));
  EXPECT_THAT(DecodeJobSpec(R"({"model": 7})").status().message(),
              HasSubstr("job_spec.model is not an object"));
  EXPECT_THAT(DecodeJobSpec(R"({"force": 1})").status().message(),
              HasSubstr("job_spec.force is not a boolean"));
  EXPECT_THAT(DecodePlan(R"({"ops": [{"pass": "backprop"}]})").status().message(),
              HasSubstr("plan.ops[0].pass has unknown value 'backprop'"));
  EXPECT_THAT(DecodeDeviceInfo(R"({"sm": 99999999999})").status().message(),
              HasSubstr("device.sm is out of range for int32"));
  EXPECT_THAT(DecodeDeviceInfo(R"({"memory_bytes": 18446744073709551615})").status().message(),
              HasSubstr("device.memory_bytes is out of range for int64"));
  EXPECT_THAT(DecodeMeasurement(R"({"verification": "maybe"})").status().message(),
              HasSubstr("measurement.verification has unknown value 'maybe'"));
  EXPECT_THAT(DecodeMeasurement(R"({"time": {"median_ms": "nope"}})").status().message(),
              HasSubstr("measurement.time.median_ms is not a number"));
}

}  // namespace
}  // namespace gemmprof::storage
