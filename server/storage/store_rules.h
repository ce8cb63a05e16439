// Checks and errors both stores share, so their behaviour stays the same.
#pragma once

#include <cstdint>

#include "core/job.h"
#include "core/status.h"

namespace gemmprof::storage {

absl::Status JobNotFound(int64_t job_id);
absl::Status ItemNotFound(int64_t item_id);

// FinishItem's argument rules that need no database (see sqlite_store.h).
absl::Status CheckFinishArguments(int64_t item_id, core::ItemStatus status, bool has_measurement,
                                  bool has_cached_result);

// SetJobState's rule: a terminal job keeps its state. OK when the change is allowed;
// `*noop` is set when the job already has this terminal state.
absl::Status CheckStateChange(int64_t job_id, core::JobState from, core::JobState to, bool* noop);

}  // namespace gemmprof::storage
