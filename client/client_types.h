// Domain types the CLI exchanges with gemmprofd beyond core's (core/job_event.h,
// core/query.h). Plain values; the transport converts them from the wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"

namespace gemmprof::client {

// What SubmitJob answers.
struct SubmitResult {
  int64_t job_id = 0;
  int32_t total_items = 0;
};

// Filters of `gemmprof history` (proto QueryResultsRequest); empty / 0 means any.
struct HistoryQuery {
  std::string device_name;
  std::optional<core::Recipe> recipe;
  std::optional<core::Pass> pass;
  std::optional<core::Mode> mode;
  int64_t m = 0, k = 0, n = 0;
  int64_t since_ms = 0;  // unix epoch ms
  std::string node;      // where measured; empty: any
  int32_t limit = 50;    // rows wanted
};

// One stored result (proto Result).
struct HistoryRow {
  int64_t result_id = 0;
  int64_t job_id = 0;
  int64_t measured_ms = 0;  // unix epoch ms
  core::DeviceInfo device;
  core::ItemRecord item;
  core::TimingOptions timing;
};

}  // namespace gemmprof::client
