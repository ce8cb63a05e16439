// Measurement <-> proto: every field of interleaved rounds round-trips, and every bad
// value is refused naming its field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "wire/convert.h"

namespace gemmprof::wire {
namespace {

using ::testing::HasSubstr;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

core::Measurement Interleaved() {
  core::Measurement m;
  m.time.count = 40;
  m.time.median_ms = 0.5;
  m.algorithm = "algo 7";
  m.verification = core::Verification::kPassed;
  m.accounting = core::Accounting::kPerGemm;
  m.notes = "clock dipped";
  m.isolated = {0.5, 0.49, 0.51, 40, 31.5};
  m.b2b = {0.45, 0.44, 0.47, 40, 38.0};
  m.b2b_count = 16;
  m.round_ms = {0.5, 0.52, 0.48};
  m.b2b_round_ms = {0.45, 0.46};
  m.quant_round_ms = {0.01, 0.02, 0.015};
  m.quant = {0.015, 0.01, 0.02, 3, 3};
  m.group_uid = "GPU-1/j3/s0/1700000000000";
  m.group_members = 5;
  m.work_key = "fp8-current/autocast/4096x4096x4096";
  m.shared_with_item = 2;
  m.quant_bytes = 3.5e7;
  m.copy_bytes_per_s = 2.9e12;
  m.stop_reason = "precision +-0.8% reached";
  m.batch_id = "GPU-1/j3/s0/1700000000000";
  m.context = "workload: m=16";
  m.batch_gemms = "16x4096x14336, 16x14336x4096";
  m.energy.joules = 0.0021;
  m.energy.joules_low = 0.0020;
  m.energy.joules_high = 0.0022;
  m.energy.period_joules = {0.0021, 0.00205, 0.00215};
  m.energy.n_eff = 2.5;
  m.energy.power_w = 612.5;
  m.energy.sampled_power_w = 608.1;
  m.energy.window_s = 1.2;
  m.energy.counter_updates = 12;
  m.energy.iteration_ms = 0.0034;
  m.energy.idle_power_w = 118;
  return m;
}

void ExpectRoundFieldsEqual(const core::Measurement& a, const core::Measurement& b) {
  EXPECT_EQ(a.isolated, b.isolated);
  EXPECT_EQ(a.b2b, b.b2b);
  EXPECT_EQ(a.b2b_count, b.b2b_count);
  EXPECT_EQ(a.round_ms, b.round_ms);
  EXPECT_EQ(a.b2b_round_ms, b.b2b_round_ms);
  EXPECT_EQ(a.quant_round_ms, b.quant_round_ms);
  EXPECT_EQ(a.quant, b.quant);
  EXPECT_EQ(a.group_uid, b.group_uid);
  EXPECT_EQ(a.group_members, b.group_members);
  EXPECT_EQ(a.work_key, b.work_key);
  EXPECT_EQ(a.shared_with_item, b.shared_with_item);
  EXPECT_EQ(a.quant_bytes, b.quant_bytes);
  EXPECT_EQ(a.copy_bytes_per_s, b.copy_bytes_per_s);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
}

TEST(MeasurementConvertTest, EveryRoundFieldRoundTrips) {
  const core::Measurement m = Interleaved();
  auto back = FromProto(ToProto(m));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectRoundFieldsEqual(*back, m);
  EXPECT_EQ(back->time.count, 40);
  EXPECT_EQ(back->verification, core::Verification::kPassed);
  EXPECT_EQ(back->accounting, core::Accounting::kPerGemm);
  EXPECT_EQ(back->notes, "clock dipped");
  EXPECT_EQ(back->batch_id, m.batch_id);
  EXPECT_EQ(back->context, "workload: m=16");
  EXPECT_EQ(back->batch_gemms, "16x4096x14336, 16x14336x4096");
  EXPECT_EQ(back->energy, m.energy);
}

TEST(MeasurementConvertTest, EnergyNotMeasuredKeepsItsReason) {
  core::Measurement m;
  m.energy.not_measured = "host reference runner: no energy counter";
  auto back = FromProto(ToProto(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->energy.present());
  EXPECT_EQ(back->energy.not_measured, m.energy.not_measured);
}

TEST(MeasurementConvertTest, AMeasurementFromBeforeRoundsHasEmptyRoundFields) {
  v1::Measurement old;
  old.mutable_time()->set_count(100);
  old.mutable_time()->set_median_ms(1.25);
  old.set_verification("passed");
  auto back = FromProto(old);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->time.median_ms, 1.25);
  ExpectRoundFieldsEqual(*back, core::Measurement());
  EXPECT_FALSE(back->isolated.present());
}

struct BadCase {
  std::string field;  // expected at the start of the message
  std::function<void(v1::Measurement&)> spoil;
};

TEST(MeasurementConvertTest, EachBadValueIsInvalidArgumentNamingItsField) {
  const std::vector<BadCase> cases = {
      {"measurement.isolated.center_ms: nan",
       [](auto& p) { p.mutable_isolated()->set_center_ms(kNan); }},
      {"measurement.isolated.ci_low_ms: nan is not a finite number",
       [](auto& p) { p.mutable_isolated()->set_ci_low_ms(std::nan("")); }},
      {"measurement.isolated.ci_high_ms: inf",
       [](auto& p) { p.mutable_isolated()->set_ci_high_ms(kInf); }},
      {"measurement.isolated.rounds: -2 is negative",
       [](auto& p) { p.mutable_isolated()->set_rounds(-2); }},
      {"measurement.isolated.n_eff: -inf", [](auto& p) { p.mutable_isolated()->set_n_eff(-kInf); }},
      {"measurement.isolated: ci_low_ms 0.6 is above ci_high_ms 0.51",
       [](auto& p) { p.mutable_isolated()->set_ci_low_ms(0.6); }},
      {"measurement.b2b.center_ms: -0.1", [](auto& p) { p.mutable_b2b()->set_center_ms(-0.1); }},
      {"measurement.b2b: ci_low_ms 0.5 is above ci_high_ms 0.4",
       [](auto& p) {
         p.mutable_b2b()->set_ci_high_ms(0.4);
         p.mutable_b2b()->set_ci_low_ms(0.5);
       }},
      {"measurement.quant.rounds: -1 is negative",
       [](auto& p) { p.mutable_quant()->set_rounds(-1); }},
      {"measurement.b2b_count: -1 is negative", [](auto& p) { p.set_b2b_count(-1); }},
      {"measurement.round_ms[1]: nan", [](auto& p) { p.set_round_ms(1, kNan); }},
      {"measurement.round_ms[2]: -0.5", [](auto& p) { p.set_round_ms(2, -0.5); }},
      {"measurement.b2b_round_ms[0]: inf", [](auto& p) { p.set_b2b_round_ms(0, kInf); }},
      {"measurement.quant_round_ms[2]: -1", [](auto& p) { p.set_quant_round_ms(2, -1); }},
      {"measurement.group_members: -3 is negative", [](auto& p) { p.set_group_members(-3); }},
      {"measurement.shared_with_item: -1 is negative", [](auto& p) { p.set_shared_with_item(-1); }},
      {"measurement.quant_bytes: nan", [](auto& p) { p.set_quant_bytes(kNan); }},
      {"measurement.copy_bytes_per_s: -1", [](auto& p) { p.set_copy_bytes_per_s(-1); }},
      {"measurement.energy.joules: nan", [](auto& p) { p.mutable_energy()->set_joules(kNan); }},
      {"measurement.energy: joules_low 0.003 is above joules_high 0.0022",
       [](auto& p) { p.mutable_energy()->set_joules_low(0.003); }},
      {"measurement.energy.period_joules[1]: -1",
       [](auto& p) { p.mutable_energy()->set_period_joules(1, -1); }},
      {"measurement.energy.power_w: inf", [](auto& p) { p.mutable_energy()->set_power_w(kInf); }},
      {"measurement.energy.window_s: -1", [](auto& p) { p.mutable_energy()->set_window_s(-1); }},
      {"measurement.energy.counter_updates: -4 is negative",
       [](auto& p) { p.mutable_energy()->set_counter_updates(-4); }},
      {"measurement.energy.idle_power_w: nan",
       [](auto& p) { p.mutable_energy()->set_idle_power_w(kNan); }},
  };
  for (const BadCase& c : cases) {
    v1::Measurement p = ToProto(Interleaved());
    c.spoil(p);
    auto back = FromProto(p);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(std::string(back.status().message()), ::testing::StartsWith(c.field));
  }
}

TEST(MeasurementConvertTest, RangeMessagesSayWhatIsAllowed) {
  v1::Measurement p = ToProto(Interleaved());
  p.set_round_ms(0, -2);
  EXPECT_EQ(FromProto(p).status().message(),
            "measurement.round_ms[0]: -2 is out of range (a finite value >= 0)");
}

TEST(MeasurementConvertTest, ACollapsedIntervalIsAccepted) {
  core::Measurement m;
  m.isolated = {0.5, 0.5, 0.5, 1, 1};
  m.round_ms = {0.5};
  auto back = FromProto(ToProto(m));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->isolated, m.isolated);
}

}  // namespace
}  // namespace gemmprof::wire
