#include "server/storage/store_rules.h"

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"

namespace gemmprof::storage {

absl::Status JobNotFound(int64_t job_id) {
  return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
}

absl::Status ItemNotFound(int64_t item_id) {
  return absl::NotFoundError(absl::StrCat("item ", item_id, " not found"));
}

absl::Status CheckFinishArguments(int64_t item_id, core::ItemStatus status, bool has_measurement,
                                  bool has_cached_result) {
  if (!core::IsFinal(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("status: ", AbslSv(core::ToString(status)),
                     " is not final (done, failed, not_supported, cancelled)"));
  }
  const bool has_result = has_measurement || has_cached_result;
  if (status == core::ItemStatus::kDone && !has_result) {
    return absl::InvalidArgumentError(absl::StrCat(
        "measurement: item ", item_id, " finished done needs a measurement or cached_result_id"));
  }
  if (has_result && status != core::ItemStatus::kDone && status != core::ItemStatus::kFailed) {
    return absl::InvalidArgumentError(absl::StrCat("measurement: item ", item_id, " finished ",
                                                   AbslSv(core::ToString(status)),
                                                   " cannot carry a measurement"));
  }
  return absl::OkStatus();
}

absl::Status CheckStateChange(int64_t job_id, core::JobState from, core::JobState to, bool* noop) {
  *noop = false;
  if (!core::IsTerminal(from)) return absl::OkStatus();
  if (from == to) {
    *noop = true;
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      absl::StrCat("job ", job_id, " is already ", AbslSv(core::ToString(from)),
                   " and cannot become ", AbslSv(core::ToString(to))));
}

}  // namespace gemmprof::storage
