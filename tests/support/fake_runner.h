// A deterministic Runner for queue and API tests: no GPU, no real arithmetic, with
// hooks to hold an item in flight (cancellation, shutdown) and to count runs (cache).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

#include "server/device/runner.h"

namespace gemmprof::testing {

class FakeRunner : public device::Runner {
 public:
  // Hopper-like: mxfp8 and nvfp4 are not supported, with the real reason text.
  FakeRunner();

  const core::DeviceInfo& Info() const override { return info_; }
  core::RecipeSupport Supports(core::Recipe recipe) const override;
  // Refuses items whose M*K*N exceeds 2^40 with ResourceExhausted, and non-bf16 items
  // whose N is not a multiple of 16 with FailedPrecondition (like FP8 on cuBLASLt).
  absl::Status CanImplement(const core::WorkItem& item,
                            const core::TimingOptions& timing) const override;
  absl::Status BeginJob(const core::TimingOptions&) override { return absl::OkStatus(); }
  // median_ms = flops / 1e9 ms, unless FailRunsWith set an error.
  absl::StatusOr<core::Measurement> Run(const core::WorkItem& item,
                                        const core::TimingOptions& timing) override;

  // Makes every later Run return `status` (OK to measure again).
  void FailRunsWith(absl::Status status);
  // Makes the Run of the item with this seq return `status`.
  void FailItem(int32_t seq, absl::Status status);

  // Unavailable with `reason` from now on (Availability and CanImplement), as a device
  // whose worker cannot start.
  void MakeUnavailable(const std::string& reason);
  absl::Status Availability() const override;

  // While held, Run blocks after signalling that an item is in flight.
  void Hold();
  void Release();
  // Waits until `n` runs have started (true) or 10 s passed (false).
  bool WaitForRunsStarted(int n);
  int runs_started() const { return runs_started_.load(); }
  int runs_finished() const { return runs_finished_.load(); }

 private:
  core::DeviceInfo info_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  absl::Status run_status_;
  std::map<int32_t, absl::Status> item_status_;
  std::string unavailable_reason_;  // empty: available
  mutable std::mutex availability_mu_;
  std::atomic<int> runs_started_{0};
  std::atomic<int> runs_finished_{0};
};

}  // namespace gemmprof::testing
