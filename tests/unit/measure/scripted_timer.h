// A measure::Timer whose times come from a script, and a clock that the timed work moves:
// the engine's rules tested on the CPU, drift and noise included.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "measure/timer.h"

namespace gemmprof::measure::testing {

// Simulated time: each timed sample moves it by ms x repeat, plus `overhead_s` per
// TimeVisits call.
class FakeClock final : public Clock {
 public:
  double NowS() const override { return now_s; }
  int64_t UnixMs() const override { return kUnixOriginMs + static_cast<int64_t>(now_s * 1e3); }

  static constexpr int64_t kUnixOriginMs = 1'800'000'000'000;
  double now_s = 0;
};

class ScriptedTimer final : public Timer {
 public:
  // ms per iteration of `unit` at simulated time `now_s`; `sample` counts every sample
  // this timer has returned so far (a deterministic source of noise).
  using Script = std::function<double(const UnitId& unit, double now_s, int64_t sample)>;

  ScriptedTimer(FakeClock* clock, Script script) : clock_(clock), script_(std::move(script)) {}

  absl::Status WarmUp(const Visit& visit, int32_t launches) override {
    warmups.push_back({visit, launches});
    return absl::OkStatus();
  }
  absl::Status PrepareBackToBack(size_t member, int32_t repeat) override {
    b2b.push_back({member, repeat});
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<std::vector<double>>> TimeVisits(
      const std::vector<Visit>& visits) override {
    if (static_cast<int>(calls.size()) == fail_call) return failure;
    calls.push_back(visits);
    std::vector<std::vector<double>> out;
    for (const Visit& v : visits) {
      std::vector<double>& samples = out.emplace_back();
      for (int32_t s = 0; s < v.samples; ++s) {
        const double ms = script_(v.unit, clock_->now_s, samples_++);
        clock_->now_s += ms * v.repeat / 1e3;
        samples.push_back(ms);
      }
    }
    clock_->now_s += overhead_s;
    return out;
  }
  int32_t MaxRoundsPerCall(const std::vector<Visit>&) const override { return max_rounds_per_call; }

  // What the engine asked for.
  std::vector<std::pair<Visit, int32_t>> warmups;
  std::vector<std::pair<size_t, int32_t>> b2b;
  std::vector<std::vector<Visit>> calls;  // calls[0] is the pilot when there is one
  // Knobs.
  int32_t max_rounds_per_call = kUnbounded;
  int fail_call = -1;  // this TimeVisits call (0-based) returns `failure`
  absl::Status failure = absl::InternalError("device fault");
  double overhead_s = 0;

 private:
  FakeClock* clock_;
  Script script_;
  int64_t samples_ = 0;
};

}  // namespace gemmprof::measure::testing
