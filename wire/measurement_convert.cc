// Measurement <-> proto, with the checks a measurement from another process or an
// older daemon must pass before reports compute with it.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "wire/convert.h"
#include "wire/enum_field.h"

namespace gemmprof::wire {
namespace {

v1::SampleStats ToProto(const core::SampleStats& s) {
  v1::SampleStats p;
  p.set_count(s.count);
  p.set_median_ms(s.median_ms);
  p.set_mean_ms(s.mean_ms);
  p.set_p20_ms(s.p20_ms);
  p.set_p80_ms(s.p80_ms);
  p.set_min_ms(s.min_ms);
  p.set_max_ms(s.max_ms);
  p.set_stdev_ms(s.stdev_ms);
  return p;
}

core::SampleStats FromProto(const v1::SampleStats& p) {
  core::SampleStats s;
  s.count = p.count();
  s.median_ms = p.median_ms();
  s.mean_ms = p.mean_ms();
  s.p20_ms = p.p20_ms();
  s.p80_ms = p.p80_ms();
  s.min_ms = p.min_ms();
  s.max_ms = p.max_ms();
  s.stdev_ms = p.stdev_ms();
  return s;
}

v1::Telemetry ToProto(const core::Telemetry& t) {
  v1::Telemetry p;
  p.set_sm_clock_mhz_min(t.sm_clock_mhz_min);
  p.set_sm_clock_mhz_max(t.sm_clock_mhz_max);
  p.set_mem_clock_mhz(t.mem_clock_mhz);
  p.set_power_w_avg(t.power_w_avg);
  p.set_power_w_max(t.power_w_max);
  p.set_temp_c_max(t.temp_c_max);
  p.set_throttle_reasons(t.throttle_reasons);
  p.set_throttled_samples(t.throttled_samples);
  p.set_telemetry_samples(t.telemetry_samples);
  p.set_sm_clock_mhz_mean(t.sm_clock_mhz_mean);
  return p;
}

core::Telemetry FromProto(const v1::Telemetry& p) {
  core::Telemetry t;
  t.sm_clock_mhz_min = p.sm_clock_mhz_min();
  t.sm_clock_mhz_max = p.sm_clock_mhz_max();
  t.mem_clock_mhz = p.mem_clock_mhz();
  t.power_w_avg = p.power_w_avg();
  t.power_w_max = p.power_w_max();
  t.temp_c_max = p.temp_c_max();
  t.throttle_reasons = p.throttle_reasons();
  t.throttled_samples = p.throttled_samples();
  t.telemetry_samples = p.telemetry_samples();
  t.sm_clock_mhz_mean = p.sm_clock_mhz_mean();
  return t;
}

// Times, bytes and rates: a NaN, an infinity or a negative value would silently poison
// every interval and sum computed from it.
absl::StatusOr<double> NonNegative(absl::string_view field, double value) {
  if (std::isfinite(value) && value >= 0) return value;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", value, " is out of range (a finite value >= 0)"));
}

absl::StatusOr<int32_t> NonNegative(absl::string_view field, int32_t value) {
  if (value >= 0) return value;
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is negative"));
}

absl::StatusOr<int64_t> NonNegative(absl::string_view field, int64_t value) {
  if (value >= 0) return value;
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value, " is negative"));
}

absl::Status ReadSeries(absl::string_view field, const google::protobuf::RepeatedField<double>& p,
                        std::vector<double>* out) {
  out->clear();
  out->reserve(p.size());
  for (int i = 0; i < p.size(); ++i) {
    ASSIGN_OR_RETURN(double v, NonNegative(absl::StrCat(field, "[", i, "]"), p.Get(i)));
    out->push_back(v);
  }
  return absl::OkStatus();
}

v1::Estimate ToProto(const core::Estimate& e) {
  v1::Estimate p;
  p.set_center_ms(e.center_ms);
  p.set_ci_low_ms(e.ci_low_ms);
  p.set_ci_high_ms(e.ci_high_ms);
  p.set_rounds(e.rounds);
  p.set_n_eff(e.n_eff);
  return p;
}

absl::StatusOr<core::Estimate> FromProto(absl::string_view field, const v1::Estimate& p) {
  core::Estimate e;
  ASSIGN_OR_RETURN(e.center_ms, NonNegative(absl::StrCat(field, ".center_ms"), p.center_ms()));
  // A t-interval over few, spread rounds (the host runner's 5) may reach below zero: the
  // interval says how little the rounds pin the mean down, so it is kept as computed.
  if (!std::isfinite(p.ci_low_ms())) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".ci_low_ms: ", p.ci_low_ms(), " is not a finite number"));
  }
  e.ci_low_ms = p.ci_low_ms();
  ASSIGN_OR_RETURN(e.ci_high_ms, NonNegative(absl::StrCat(field, ".ci_high_ms"), p.ci_high_ms()));
  ASSIGN_OR_RETURN(e.rounds, NonNegative(absl::StrCat(field, ".rounds"), p.rounds()));
  ASSIGN_OR_RETURN(e.n_eff, NonNegative(absl::StrCat(field, ".n_eff"), p.n_eff()));
  if (e.ci_low_ms > e.ci_high_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ci_low_ms ", e.ci_low_ms, " is above ci_high_ms ", e.ci_high_ms));
  }
  return e;
}

void AddSeries(const std::vector<double>& values, google::protobuf::RepeatedField<double>* p) {
  p->Reserve(static_cast<int>(values.size()));
  for (double v : values) p->Add(v);
}

// The fields of interleaved rounds (13 on).
absl::Status ReadRoundFields(const v1::Measurement& p, core::Measurement* m) {
  ASSIGN_OR_RETURN(m->isolated, FromProto("measurement.isolated", p.isolated()));
  ASSIGN_OR_RETURN(m->b2b, FromProto("measurement.b2b", p.b2b()));
  ASSIGN_OR_RETURN(m->b2b_count, NonNegative("measurement.b2b_count", p.b2b_count()));
  RETURN_IF_ERROR(ReadSeries("measurement.round_ms", p.round_ms(), &m->round_ms));
  RETURN_IF_ERROR(ReadSeries("measurement.b2b_round_ms", p.b2b_round_ms(), &m->b2b_round_ms));
  RETURN_IF_ERROR(ReadSeries("measurement.quant_round_ms", p.quant_round_ms(), &m->quant_round_ms));
  ASSIGN_OR_RETURN(m->quant, FromProto("measurement.quant", p.quant()));
  m->group_uid = p.group_uid();
  ASSIGN_OR_RETURN(m->group_members, NonNegative("measurement.group_members", p.group_members()));
  m->work_key = p.work_key();
  ASSIGN_OR_RETURN(m->shared_with_item,
                   NonNegative("measurement.shared_with_item", p.shared_with_item()));
  ASSIGN_OR_RETURN(m->quant_bytes, NonNegative("measurement.quant_bytes", p.quant_bytes()));
  ASSIGN_OR_RETURN(m->copy_bytes_per_s,
                   NonNegative("measurement.copy_bytes_per_s", p.copy_bytes_per_s()));
  m->stop_reason = p.stop_reason();
  return absl::OkStatus();
}

// Kernel-only timing and Nsight mode (27 on).
absl::Status ReadKernelFields(const v1::Measurement& p, core::Measurement* m) {
  m->kernel = FromProto(p.kernel());
  ASSIGN_OR_RETURN(m->kernel_quant_ms,
                   NonNegative("measurement.kernel_quant_ms", p.kernel_quant_ms()));
  ASSIGN_OR_RETURN(m->kernel_samples,
                   NonNegative("measurement.kernel_samples", p.kernel_samples()));
  m->kernel_names = p.kernel_names();
  m->profiled = p.profiled();
  return absl::OkStatus();
}

v1::Energy ToProto(const core::Energy& e) {
  v1::Energy p;
  p.set_joules(e.joules);
  p.set_joules_low(e.joules_low);
  p.set_joules_high(e.joules_high);
  AddSeries(e.period_joules, p.mutable_period_joules());
  p.set_n_eff(e.n_eff);
  p.set_power_w(e.power_w);
  p.set_window_s(e.window_s);
  p.set_counter_updates(e.counter_updates);
  p.set_iteration_ms(e.iteration_ms);
  p.set_idle_power_w(e.idle_power_w);
  p.set_not_measured(e.not_measured);
  p.set_sampled_power_w(e.sampled_power_w);
  return p;
}

// Contexts and energy (32 on).
absl::Status ReadContextFields(const v1::Measurement& p, core::Measurement* m) {
  m->context = p.context();
  m->batch_gemms = p.batch_gemms();
  m->batch_id = p.batch_id();
  const v1::Energy& e = p.energy();
  core::Energy& out = m->energy;
  ASSIGN_OR_RETURN(out.joules, NonNegative("measurement.energy.joules", e.joules()));
  ASSIGN_OR_RETURN(out.joules_low, NonNegative("measurement.energy.joules_low", e.joules_low()));
  ASSIGN_OR_RETURN(out.joules_high, NonNegative("measurement.energy.joules_high", e.joules_high()));
  if (out.joules_low > out.joules_high) {
    return absl::InvalidArgumentError(absl::StrCat("measurement.energy: joules_low ",
                                                   out.joules_low, " is above joules_high ",
                                                   out.joules_high));
  }
  RETURN_IF_ERROR(
      ReadSeries("measurement.energy.period_joules", e.period_joules(), &out.period_joules));
  ASSIGN_OR_RETURN(out.n_eff, NonNegative("measurement.energy.n_eff", e.n_eff()));
  ASSIGN_OR_RETURN(out.power_w, NonNegative("measurement.energy.power_w", e.power_w()));
  ASSIGN_OR_RETURN(out.window_s, NonNegative("measurement.energy.window_s", e.window_s()));
  ASSIGN_OR_RETURN(out.counter_updates,
                   NonNegative("measurement.energy.counter_updates", e.counter_updates()));
  ASSIGN_OR_RETURN(out.iteration_ms,
                   NonNegative("measurement.energy.iteration_ms", e.iteration_ms()));
  ASSIGN_OR_RETURN(out.idle_power_w,
                   NonNegative("measurement.energy.idle_power_w", e.idle_power_w()));
  out.not_measured = e.not_measured();
  ASSIGN_OR_RETURN(out.sampled_power_w,
                   NonNegative("measurement.energy.sampled_power_w", e.sampled_power_w()));
  return absl::OkStatus();
}

}  // namespace

v1::Measurement ToProto(const core::Measurement& m) {
  v1::Measurement p;
  *p.mutable_time() = ToProto(m.time);
  p.set_quant_ms(m.quant_ms);
  p.set_flops(m.flops);
  p.set_bytes(m.bytes);
  p.set_algorithm(m.algorithm);
  p.set_verification(std::string(core::ToString(m.verification)));
  p.set_rel_error(m.rel_error);
  p.set_error_threshold(m.error_threshold);
  p.set_accounting(std::string(core::ToString(m.accounting)));
  p.set_fast_accum(m.fast_accum);
  *p.mutable_telemetry() = ToProto(m.telemetry);
  p.set_notes(m.notes);
  *p.mutable_isolated() = ToProto(m.isolated);
  *p.mutable_b2b() = ToProto(m.b2b);
  p.set_b2b_count(m.b2b_count);
  AddSeries(m.round_ms, p.mutable_round_ms());
  AddSeries(m.b2b_round_ms, p.mutable_b2b_round_ms());
  AddSeries(m.quant_round_ms, p.mutable_quant_round_ms());
  *p.mutable_quant() = ToProto(m.quant);
  p.set_group_uid(m.group_uid);
  p.set_group_members(m.group_members);
  p.set_work_key(m.work_key);
  p.set_shared_with_item(m.shared_with_item);
  p.set_quant_bytes(m.quant_bytes);
  p.set_copy_bytes_per_s(m.copy_bytes_per_s);
  p.set_stop_reason(m.stop_reason);
  *p.mutable_kernel() = ToProto(m.kernel);
  p.set_kernel_quant_ms(m.kernel_quant_ms);
  p.set_kernel_samples(m.kernel_samples);
  p.set_kernel_names(m.kernel_names);
  p.set_profiled(m.profiled);
  p.set_context(m.context);
  p.set_batch_gemms(m.batch_gemms);
  p.set_batch_id(m.batch_id);
  *p.mutable_energy() = ToProto(m.energy);
  return p;
}

absl::StatusOr<core::Measurement> FromProto(const v1::Measurement& p) {
  core::Measurement m;
  m.time = FromProto(p.time());
  m.quant_ms = p.quant_ms();
  m.flops = p.flops();
  m.bytes = p.bytes();
  m.algorithm = p.algorithm();
  ASSIGN_OR_RETURN(
      m.verification,
      ParseEnumField<core::Verification>(
          "measurement.verification", p.verification(), core::ParseVerification,
          "passed, incorrect, not_verified, not_supported", core::Verification::kNotVerified));
  m.rel_error = p.rel_error();
  m.error_threshold = p.error_threshold();
  ASSIGN_OR_RETURN(m.accounting,
                   ParseEnumField<core::Accounting>(
                       "measurement.accounting", p.accounting(), core::ParseAccounting,
                       "training-step, per-gemm", core::Accounting::kTrainingStep));
  m.fast_accum = p.fast_accum();
  m.telemetry = FromProto(p.telemetry());
  m.notes = p.notes();
  RETURN_IF_ERROR(ReadRoundFields(p, &m));
  RETURN_IF_ERROR(ReadKernelFields(p, &m));
  RETURN_IF_ERROR(ReadContextFields(p, &m));
  return m;
}

}  // namespace gemmprof::wire
