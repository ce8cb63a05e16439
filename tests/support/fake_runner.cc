#include "tests/support/fake_runner.h"

#include <chrono>

namespace gemmprof::testing {

FakeRunner::FakeRunner() {
  info_.backend = "fake";
  info_.name = "Fake GPU";
  info_.sm = 90;
  info_.sm_count = 132;
  info_.memory_bytes = int64_t{80} << 30;
  info_.driver_version = "580.00";
  info_.cuda_version = "13.0";
  info_.cublaslt_version = "130100";
  info_.gemmprof_version = GEMMPROF_VERSION;
  for (core::Recipe r : core::AllRecipes()) info_.recipes.push_back(Supports(r));
}

core::RecipeSupport FakeRunner::Supports(core::Recipe recipe) const {
  if (recipe == core::Recipe::kMxfp8 || recipe == core::Recipe::kNvfp4) {
    return {recipe, false, std::string(core::ToString(recipe)) + " needs sm_100+, this is sm_90"};
  }
  return {recipe, true, ""};
}

absl::Status FakeRunner::CanImplement(const core::WorkItem& item,
                                      const core::TimingOptions&) const {
  RETURN_IF_ERROR(Availability());
  const auto& s = item.op.shape;
  if (item.recipe != core::Recipe::kBf16 && s.n % 16 != 0) {
    return absl::FailedPreconditionError(std::string(core::ToString(item.recipe)) +
                                         " needs N to be a multiple of 16; shape " + s.ToString() +
                                         " has N=" + std::to_string(s.n));
  }
  if (static_cast<double>(s.m) * s.k * s.n > static_cast<double>(int64_t{1} << 40)) {
    return absl::ResourceExhaustedError("shape " + s.ToString() +
                                        " does not fit the fake device's memory");
  }
  return absl::OkStatus();
}

absl::StatusOr<core::Measurement> FakeRunner::Run(const core::WorkItem& item,
                                                  const core::TimingOptions& timing) {
  {
    // Under the lock, so a waiter between its check and its sleep cannot miss it.
    std::lock_guard lock(mu_);
    runs_started_++;
  }
  cv_.notify_all();
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !held_; });
  }
  runs_finished_++;
  {
    std::lock_guard lock(mu_);
    if (!run_status_.ok()) return run_status_;
    if (auto it = item_status_.find(item.seq); it != item_status_.end()) return it->second;
  }
  core::Measurement m;
  m.flops = item.op.Flops();
  const double ms = m.flops / 1e9;
  m.time = core::SampleStats::FromSamples({ms, ms * 1.01, ms * 0.99});
  m.algorithm = "fake";
  m.verification = core::Verification::kPassed;
  m.accounting = timing.accounting;
  return m;
}

void FakeRunner::FailRunsWith(absl::Status status) {
  std::lock_guard lock(mu_);
  run_status_ = std::move(status);
}

void FakeRunner::FailItem(int32_t seq, absl::Status status) {
  std::lock_guard lock(mu_);
  item_status_[seq] = std::move(status);
}

void FakeRunner::MakeUnavailable(const std::string& reason) {
  std::lock_guard lock(availability_mu_);
  unavailable_reason_ = reason;
}

absl::Status FakeRunner::Availability() const {
  std::lock_guard lock(availability_mu_);
  if (unavailable_reason_.empty()) return absl::OkStatus();
  return absl::UnavailableError(info_.name + " is unavailable: " + unavailable_reason_);
}

void FakeRunner::Hold() {
  std::lock_guard lock(mu_);
  held_ = true;
}

void FakeRunner::Release() {
  {
    std::lock_guard lock(mu_);
    held_ = false;
  }
  cv_.notify_all();
}

bool FakeRunner::WaitForRunsStarted(int n) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return runs_started_.load() >= n; });
}

}  // namespace gemmprof::testing
