// The JSON codec and the fields of interleaved rounds: every new field round-trips,
// rows stored before them still load, and wrong types are DataLoss naming the field.
#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/json_codec.h"
#include "tests/unit/storage/test_util.h"

namespace gemmprof::storage {
namespace {

using ::testing::HasSubstr;

// measurement_json and timing_json as gemmprof stored them before interleaved rounds:
// exactly the keys its encoder wrote then, in the sorted order nlohmann::json dumps.
constexpr char kOldMeasurementRow[] =
    R"({"accounting":"training-step","algorithm":"algo 12 tile 256x128","bytes":100663296.0,)"
    R"("error_threshold":0.05,"fast_accum":false,"flops":549755813888.0,"notes":"",)"
    R"("quant_ms":0.012,"rel_error":0.0031,"telemetry":{"mem_clock_mhz":2619.0,)"
    R"("power_w_avg":612.5,"power_w_max":699.0,"sm_clock_mhz_max":1980.0,)"
    R"("sm_clock_mhz_min":1755.0,"telemetry_samples":12,"temp_c_max":64.0,)"
    R"("throttle_reasons":4,"throttled_samples":3},"time":{"count":100,"max_ms":1.31,)"
    R"("mean_ms":1.25,"median_ms":1.24,"min_ms":1.2,"p20_ms":1.22,"p80_ms":1.27,)"
    R"("stdev_ms":0.02},"verification":"passed"})";
constexpr char kOldTimingRow[] =
    R"({"accounting":"training-step","amax_algo":"max","amax_history_len":1024,)"
    R"("autotune_k":1,"fast_accum":"default","gpu_warmup_s":1.0,"l2":"hot","seed":1234,)"
    R"("timed_iters":100,"warmup_iters":10})";

core::Measurement Interleaved() {
  core::Measurement m = testing::SampleMeasurement(0.5);
  m.isolated = {0.5, 0.49, 0.51, 40, 31.5};
  m.b2b = {0.45, 0.44, 0.47, 40, 38};
  m.b2b_count = 16;
  m.round_ms = {0.5, 0.52, 0.48, 0.1 + 0.2};  // 0.1 + 0.2: all 17 digits must survive
  m.b2b_round_ms = {0.45, 0.46};
  m.quant_round_ms = {0.01, 0.02, 0.015};
  m.quant = {0.015, 0.01, 0.02, 3, 3};
  m.group_uid = "GPU-1234/j3/s0/1700000000000";
  m.group_members = 5;
  m.work_key = "fp8-current/autocast/4096x4096x4096";
  m.shared_with_item = 2;
  m.quant_bytes = 3.5e7;
  m.copy_bytes_per_s = 2.9e12;
  m.stop_reason = "budget 2.0 s spent (+-1.4%)";
  return m;
}

TEST(JsonCodecRoundsTest, EveryRoundFieldRoundTrips) {
  const core::Measurement m = Interleaved();
  absl::StatusOr<core::Measurement> back = DecodeMeasurement(EncodeMeasurement(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->isolated, m.isolated);
  EXPECT_EQ(back->b2b, m.b2b);
  EXPECT_EQ(back->b2b_count, 16);
  EXPECT_EQ(back->round_ms, m.round_ms);
  EXPECT_EQ(back->b2b_round_ms, m.b2b_round_ms);
  EXPECT_EQ(back->quant_round_ms, m.quant_round_ms);
  EXPECT_EQ(back->quant, m.quant);
  EXPECT_EQ(back->group_uid, m.group_uid);
  EXPECT_EQ(back->group_members, 5);
  EXPECT_EQ(back->work_key, m.work_key);
  EXPECT_EQ(back->shared_with_item, 2);
  EXPECT_EQ(back->quant_bytes, m.quant_bytes);
  EXPECT_EQ(back->copy_bytes_per_s, m.copy_bytes_per_s);
  EXPECT_EQ(back->stop_reason, m.stop_reason);
  EXPECT_EQ(back->time.median_ms, m.time.median_ms);
  EXPECT_EQ(EncodeMeasurement(*back), EncodeMeasurement(m));
}

TEST(JsonCodecRoundsTest, NonFiniteRoundValuesSurvive) {
  core::Measurement m;
  m.round_ms = {1, std::numeric_limits<double>::infinity()};
  m.b2b_round_ms = {std::numeric_limits<double>::quiet_NaN()};
  m.isolated.ci_high_ms = std::numeric_limits<double>::infinity();
  absl::StatusOr<core::Measurement> back = DecodeMeasurement(EncodeMeasurement(m));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->round_ms.size(), 2u);
  EXPECT_EQ(back->round_ms[1], std::numeric_limits<double>::infinity());
  ASSERT_EQ(back->b2b_round_ms.size(), 1u);
  EXPECT_TRUE(std::isnan(back->b2b_round_ms[0]));
  EXPECT_EQ(back->isolated.ci_high_ms, std::numeric_limits<double>::infinity());
}

TEST(JsonCodecRoundsTest, AnOldMeasurementRowLoadsWithEmptyRoundFields) {
  absl::StatusOr<core::Measurement> m = DecodeMeasurement(kOldMeasurementRow);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->time.count, 100);
  EXPECT_EQ(m->time.median_ms, 1.24);
  EXPECT_EQ(m->verification, core::Verification::kPassed);
  EXPECT_EQ(m->telemetry.throttled_samples, 3);
  const core::Measurement none;
  EXPECT_FALSE(m->isolated.present());
  EXPECT_EQ(m->isolated, none.isolated);
  EXPECT_EQ(m->b2b, none.b2b);
  EXPECT_EQ(m->quant, none.quant);
  EXPECT_EQ(m->b2b_count, 0);
  EXPECT_TRUE(m->round_ms.empty());
  EXPECT_TRUE(m->b2b_round_ms.empty());
  EXPECT_TRUE(m->quant_round_ms.empty());
  EXPECT_EQ(m->group_uid, "");
  EXPECT_EQ(m->group_members, 0);
  EXPECT_EQ(m->work_key, "");
  EXPECT_EQ(m->shared_with_item, 0);
  EXPECT_EQ(m->quant_bytes, 0);
  EXPECT_EQ(m->copy_bytes_per_s, 0);
  EXPECT_EQ(m->stop_reason, "");
}

TEST(JsonCodecRoundsTest, AnOldTimingRowLoadsWithTheNewDefaults) {
  absl::StatusOr<core::TimingOptions> t = DecodeTimingOptions(kOldTimingRow);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->timed_iters, 100) << "an old spec stays fixed-round";
  EXPECT_EQ(t->precision_target, core::TimingOptions().precision_target);
  EXPECT_EQ(t->item_budget_s, core::TimingOptions().item_budget_s);
  EXPECT_EQ(t->b2b_count, 0);
}

TEST(JsonCodecRoundsTest, NoiseAwareTimingRoundTrips) {
  core::TimingOptions t;
  t.timed_iters = 0;
  t.precision_target = 0.005;
  t.item_budget_s = 12.5;
  t.b2b_count = 64;
  absl::StatusOr<core::TimingOptions> back = DecodeTimingOptions(EncodeTimingOptions(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
}

struct BadCase {
  const char* json;
  const char* message;
};

TEST(JsonCodecRoundsTest, WrongTypesAreDataLossNamingTheField) {
  const BadCase measurements[] = {
      {R"({"round_ms": 1.5})", "measurement.round_ms is not an array"},
      {R"({"round_ms": [1.5, "fast"]})", "measurement.round_ms[1] is not a number"},
      {R"({"b2b_round_ms": [true]})", "measurement.b2b_round_ms[0] is not a number"},
      {R"({"quant_round_ms": [1, null]})", "measurement.quant_round_ms[1] is not a number"},
      {R"({"quant_round_ms": [[1]]})", "measurement.quant_round_ms[0] is not a number"},
      {R"({"isolated": 3})", "measurement.isolated is not an object"},
      {R"({"isolated": {"rounds": 2.5}})", "measurement.isolated.rounds is not an integer"},
      {R"({"b2b": {"center_ms": "x"}})", "measurement.b2b.center_ms is not a number"},
      {R"({"quant": {"n_eff": []}})", "measurement.quant.n_eff is not a number"},
      {R"({"b2b_count": "16"})", "measurement.b2b_count is not an integer"},
      {R"({"group_uid": 7})", "measurement.group_uid is not a string"},
      {R"({"group_members": 1e3})", "measurement.group_members is not an integer"},
      {R"({"work_key": false})", "measurement.work_key is not a string"},
      {R"({"shared_with_item": "seven"})", "measurement.shared_with_item is not an integer"},
      {R"({"quant_bytes": "many"})", "measurement.quant_bytes is not a number"},
      {R"({"copy_bytes_per_s": {}})", "measurement.copy_bytes_per_s is not a number"},
      {R"({"stop_reason": ["deadline"]})", "measurement.stop_reason is not a string"},
  };
  for (const BadCase& c : measurements) {
    absl::StatusOr<core::Measurement> m = DecodeMeasurement(c.json);
    EXPECT_EQ(m.status().code(), absl::StatusCode::kDataLoss) << c.json;
    EXPECT_THAT(m.status().message(), HasSubstr(c.message)) << c.json;
  }
  const BadCase timings[] = {
      {R"({"precision_target": "tight"})", "timing.precision_target is not a number"},
      {R"({"item_budget_s": null})", "timing.item_budget_s is not a number"},
      {R"({"b2b_count": 2.5})", "timing.b2b_count is not an integer"},
  };
  for (const BadCase& c : timings) {
    absl::StatusOr<core::TimingOptions> t = DecodeTimingOptions(c.json);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << c.json;
    EXPECT_THAT(t.status().message(), HasSubstr(c.message)) << c.json;
  }
}

}  // namespace
}  // namespace gemmprof::storage
