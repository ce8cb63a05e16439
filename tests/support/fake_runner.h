// A deterministic Runner for queue and API tests: no GPU, no real arithmetic, with
// hooks to hold a group in flight (cancellation, shutdown), to fail a whole group or one
// item, and to count runs (cache).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "device/runner.h"

namespace gemmprof::testing {

class FakeRunner : public device::Runner {
 public:
  // Hopper-like: mxfp8 and nvfp4 are not supported, with the real reason text.
  FakeRunner();
  // Another model or another GPU of the same model ("Fake GPU", uuid empty by default).
  // Call before the runner is used.
  void SetIdentity(const std::string& name, const std::string& uuid) {
    info_.name = name;
    info_.uuid = uuid;
  }

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  // Per item: recipes the device lacks (Supports), then items whose M*K*N exceeds 2^40
  // with ResourceExhausted and non-bf16 items whose N is not a multiple of 16 with
  // FailedPrecondition (like FP8 on cuBLASLt). Unavailable as a whole once made so.
  // Counts the questions (fit_checks).
  absl::StatusOr<std::vector<absl::Status>> CanImplement(
      const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) const override;
  // OK unless FailBeginJobWith said otherwise.
  absl::Status BeginJob(const core::TimingOptions&) override;
  // Deterministic rounds: timed_iters rounds (capped at kMaxFakeRounds; 0 gives
  // kFakeNoiseAwareRounds), isolated round values flops / 1e9 ms x (1 + a fixed wobble
  // per recipe and mode) x (1 +- 1% by round), autocast of a non-bf16 recipe 10% more
  // (its quantization, also a series of its own), b2b 0.9 x isolated. bf16 autocast and
  // prequant are one member when request.share_identical_work. No CanImplement inside.
  absl::StatusOr<core::GroupResult> MeasureGroup(const core::GroupRequest& request) override;

  static constexpr int32_t kMaxFakeRounds = 20;
  static constexpr int32_t kFakeNoiseAwareRounds = 12;

  // Makes every later MeasureGroup fail as a whole with `status` (OK to
  // measure again).
  void FailRunsWith(absl::Status status);
  // Makes every later BeginJob (the job's device warm-up) return `status`.
  void FailBeginJobWith(absl::Status status);
  // Makes the outcome of the item with this seq `status` (its group goes on).
  void FailItem(int32_t seq, absl::Status status);
  // Every group request seen, in order.
  std::vector<core::GroupRequest> requests() const;

  // Unavailable with `reason` from now on (Availability and CanImplement), as a device
  // whose worker cannot start.
  void MakeUnavailable(const std::string& reason);
  absl::Status Availability() const override;

  // While held, MeasureGroup blocks after signalling that its items are in flight.
  void Hold();
  void Release();
  // Waits until `n` runs (items of groups) have started (true) or 10 s passed (false).
  bool WaitForRunsStarted(int n);
  // Items of groups started / finished; groups started.
  int runs_started() const { return runs_started_.load(); }
  int runs_finished() const { return runs_finished_.load(); }
  int groups_started() const { return groups_started_.load(); }
  // CanImplement questions asked so far.
  int fit_checks() const { return fit_checks_.load(); }
  // The next `n` CanImplement questions fail as a whole with Unavailable, as when the
  // worker that should answer is restarting (the device stays available).
  void FailFitChecks(int n) { failing_fit_checks_ = n; }

 private:
  core::DeviceInfo info_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  absl::Status run_status_;
  absl::Status begin_status_;
  std::map<int32_t, absl::Status> item_status_;
  std::vector<core::GroupRequest> requests_;
  std::string unavailable_reason_;  // empty: available
  mutable std::mutex availability_mu_;
  std::atomic<int> runs_started_{0};
  std::atomic<int> runs_finished_{0};
  std::atomic<int> groups_started_{0};
  mutable std::atomic<int> fit_checks_{0};
  mutable std::atomic<int> failing_fit_checks_{0};
};

}  // namespace gemmprof::testing
