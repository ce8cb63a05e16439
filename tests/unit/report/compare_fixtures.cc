#include "tests/unit/report/compare_fixtures.h"

#include <vector>

namespace gemmprof::report::testing {

using core::Pass;
using core::Recipe;

core::ItemRecord CompareItem(const char* name, core::GemmShape s, Recipe r, double ms,
                             double half_spread, double stdev_frac) {
  core::ItemRecord item;
  item.item.op = {name, Pass::kFprop, s, 1, 1, true};
  item.item.recipe = r;
  item.status = core::ItemStatus::kDone;
  item.result = core::Measurement{};
  core::SampleStats& t = item.result->time;
  t.count = 100;
  t.median_ms = ms;
  t.stdev_ms = ms * stdev_frac;
  t.p20_ms = ms * (1 - half_spread);
  t.p80_ms = ms * (1 + half_spread);
  return item;
}

std::pair<core::Report, core::Report> CompareJobs() {
  struct Row {
    const char* name;
    core::GemmShape s;
    double ratio, half_spread, stdev;
  };
  const Row rows[] = {{"tight_slower", {1024, 1024, 1024}, 1.10, 0.005, 0.005},
                      {"tight_faster", {2048, 1024, 1024}, 0.90, 0.005, 0.005},
                      {"tight_flat", {4096, 1024, 1024}, 1.01, 0.005, 0.005},
                      {"noisy_3pct", {8192, 1024, 1024}, 1.03, 0.015, 0.03},
                      {"outliers_slower", {16384, 1024, 1024}, 1.10, 0.005, 0.10}};
  core::Report a, b;
  a.job.id = 1;
  b.job.id = 2;
  b.job.device.cublaslt_version = "13.1.0";
  a.job.device.cublaslt_version = "13.0.2";
  for (const Row& r : rows) {
    a.items.push_back(CompareItem(r.name, r.s, Recipe::kBf16, 1.0, r.half_spread, r.stdev));
    b.items.push_back(CompareItem(r.name, r.s, Recipe::kBf16, r.ratio, r.half_spread, r.stdev));
  }
  a.items.push_back(CompareItem("only_a", {64, 64, 64}, Recipe::kFp8Block, 1.0, 0.0, 0.0));
  return {a, b};
}

core::Estimate CompareEstimate(double ms, double half, int32_t rounds) {
  return {ms, ms * (1 - half), ms * (1 + half), rounds, static_cast<double>(rounds)};
}

core::ItemRecord RoundsItem(const char* name, double ms, double half, double b2b_ms) {
  core::ItemRecord item = CompareItem(name, {1024, 1024, 1024}, Recipe::kBf16, ms, 0.005, 0.005);
  item.result->time.median_ms = 123;
  item.result->isolated = CompareEstimate(ms, half);
  item.result->round_ms = std::vector<double>(30, ms);
  if (b2b_ms > 0) {
    item.result->b2b = CompareEstimate(b2b_ms, half);
    item.result->b2b_count = 8;
  }
  return item;
}

void SetTelemetry(core::ItemRecord& item, double clock_mean, double clock_min, double power,
                  double temp, int64_t throttled, int64_t samples) {
  core::Telemetry& t = item.result->telemetry;
  t.sm_clock_mhz_mean = clock_mean;
  t.sm_clock_mhz_min = clock_min;
  t.sm_clock_mhz_max = clock_mean + 100;
  t.power_w_avg = power;
  t.temp_c_max = temp;
  t.throttled_samples = throttled;
  t.telemetry_samples = samples;
}

}  // namespace gemmprof::report::testing
