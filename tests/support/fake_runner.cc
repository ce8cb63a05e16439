#include "tests/support/fake_runner.h"

#include <algorithm>
#include <chrono>

#include "core/stats.h"

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

namespace {

// The fake device's answer for an item of a recipe it supports.
absl::Status Fits(const core::WorkItem& item) {
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

}  // namespace

absl::StatusOr<std::vector<absl::Status>> FakeRunner::CanImplement(
    const std::vector<core::WorkItem>& items, const core::TimingOptions&) const {
  ++fit_checks_;
  RETURN_IF_ERROR(Availability());
  if (failing_fit_checks_ > 0) {
    --failing_fit_checks_;
    return absl::UnavailableError(info_.name + ": its worker restarted during a fit check");
  }
  return device::CheckEach(*this, items, [](const core::WorkItem& item) { return Fits(item); });
}

namespace {

bool Quantizes(const core::WorkItem& item) {
  return item.mode == core::Mode::kAutocast && item.recipe != core::Recipe::kBf16;
}

std::string FakeWorkKey(const core::WorkItem& item) {
  const auto& s = item.op.shape;
  return "fake " + s.ToString() + " g" + std::to_string(item.op.groups) + " " +
         std::string(core::ToString(item.recipe)) + (Quantizes(item) ? " quantize+gemm" : " gemm");
}

// The fixed per-member factor: recipes and modes differ by a few percent, reproducibly.
double Wobble(const core::WorkItem& item) {
  return 1.0 + 0.02 * static_cast<int>(item.recipe) + (Quantizes(item) ? 0.1 : 0.0);
}

core::Measurement FakeMeasurement(const core::WorkItem& item, const core::GroupRequest& request,
                                  int32_t rounds, int32_t members, const std::string& stop) {
  core::Measurement m;
  m.flops = item.op.Flops();
  const double base = m.flops / 1e9 * Wobble(item);
  for (int32_t r = 0; r < rounds; ++r) {
    const double drift = 1.0 + 0.01 * ((r % 3) - 1);
    m.round_ms.push_back(base * drift);
    m.b2b_round_ms.push_back(0.9 * base * drift);
    if (Quantizes(item)) m.quant_round_ms.push_back(0.1 * base * drift);
  }
  m.time = core::SampleStats::FromSamples(m.round_ms);
  m.isolated = core::stats::EstimateOf(m.round_ms);
  m.b2b = core::stats::EstimateOf(m.b2b_round_ms);
  m.b2b_count = request.timing.b2b_count > 0 ? request.timing.b2b_count : 2;
  m.quant = core::stats::EstimateOf(m.quant_round_ms);
  m.quant_ms = m.quant.present() ? m.quant.center_ms : 0.0;
  m.quant_bytes = Quantizes(item) ? 3.0 * (item.op.shape.m + item.op.shape.n) * item.op.shape.k : 0;
  m.copy_bytes_per_s = 3e12;
  m.algorithm = "fake";
  m.verification = core::Verification::kPassed;
  m.accounting = request.timing.accounting;
  m.group_uid = request.group_uid;
  m.group_members = members;
  m.work_key = FakeWorkKey(item);
  m.stop_reason = stop;
  return m;
}

}  // namespace

absl::StatusOr<core::GroupResult> FakeRunner::MeasureGroup(const core::GroupRequest& request) {
  {
    // Under the lock, so a waiter between its check and its sleep cannot miss it.
    std::lock_guard lock(mu_);
    runs_started_ += static_cast<int>(request.items.size());
    groups_started_++;
    requests_.push_back(request);
  }
  cv_.notify_all();
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return !held_; });
  }
  runs_finished_ += static_cast<int>(request.items.size());
  std::lock_guard lock(mu_);
  if (!run_status_.ok()) return run_status_;
  const int32_t t = request.timing.timed_iters;
  const int32_t rounds = t > 0 ? std::min(t, kMaxFakeRounds) : kFakeNoiseAwareRounds;
  const std::string stop =
      t > 0 ? "fixed " + std::to_string(rounds) + " rounds" : "precision +-0.5% reached";
  // Members: distinct work keys (every item when sharing is off); first item of each.
  std::map<std::string, size_t> first_of_key;
  std::vector<size_t> first_of(request.items.size());
  int32_t members = 0;
  for (size_t i = 0; i < request.items.size(); ++i) {
    const std::string key =
        request.share_identical_work ? FakeWorkKey(request.items[i]) : std::to_string(i);
    auto [it, inserted] = first_of_key.try_emplace(key, i);
    if (inserted) ++members;
    first_of[i] = it->second;
  }
  core::GroupResult result;
  result.rounds = rounds;
  result.stop_reason = stop;
  for (size_t i = 0; i < request.items.size(); ++i) {
    const core::WorkItem& item = request.items[i];
    core::ItemOutcome& out = result.outcomes.emplace_back();
    out.item_id = item.id;
    if (auto it = item_status_.find(item.seq); it != item_status_.end()) {
      out.status = it->second;
      continue;
    }
    const core::WorkItem& first = request.items[first_of[i]];
    out.measurement = FakeMeasurement(first, request, rounds, members, stop);
    if (first_of[i] != i) {
      out.measurement->shared_with_item = first.id;
      out.measurement->notes = "same GPU work as " + std::string(core::ToString(first.recipe)) +
                               " " + std::string(core::ToString(first.mode)) + " (item " +
                               std::to_string(first.seq) + "), one measurement";
    }
  }
  return result;
}

std::vector<core::GroupRequest> FakeRunner::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

void FakeRunner::FailRunsWith(absl::Status status) {
  std::lock_guard lock(mu_);
  run_status_ = std::move(status);
}

absl::Status FakeRunner::BeginJob(const core::TimingOptions&) {
  std::lock_guard lock(mu_);
  return begin_status_;
}

void FakeRunner::FailBeginJobWith(absl::Status status) {
  std::lock_guard lock(mu_);
  begin_status_ = std::move(status);
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
