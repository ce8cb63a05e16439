#include "core/progress.h"

namespace gemmprof::core {

absl::Status MeasureProgress::Enter(int64_t item_id) {
  RETURN_IF_ERROR(CheckCancel());
  item_.store(item_id, std::memory_order_relaxed);
  return on_enter_ ? on_enter_(item_id) : absl::OkStatus();
}

void MeasureProgress::Step(double ms) {
  steps_.fetch_add(1, std::memory_order_relaxed);
  double seen = slowest_ms_.load(std::memory_order_relaxed);
  while (ms > seen && !slowest_ms_.compare_exchange_weak(seen, ms, std::memory_order_relaxed)) {
  }
}

absl::Status MeasureProgress::CheckCancel() const {
  if (!cancel_requested()) return absl::OkStatus();
  return absl::CancelledError("cancelled by request at a step boundary");
}

absl::Status EnterItem(MeasureProgress* progress, int64_t item_id) {
  return progress != nullptr ? progress->Enter(item_id) : absl::OkStatus();
}

void StepDone(MeasureProgress* progress, double ms) {
  if (progress != nullptr) progress->Step(ms);
}

absl::Status CheckCancel(const MeasureProgress* progress) {
  return progress != nullptr ? progress->CheckCancel() : absl::OkStatus();
}

}  // namespace gemmprof::core
