// What the CLI gets from gemmprofd beyond core's types (core/job.h, core/job_event.h,
// core/query.h). Plain values.
#pragma once

#include <cstdint>

namespace gemmprof::client {

// What SubmitJob answers.
struct SubmitResult {
  int64_t job_id = 0;
  int32_t total_items = 0;
};

}  // namespace gemmprof::client
