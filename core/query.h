// What a reader asks for beyond a job id, and the stored results it gets back: the
// filters of ListJobs and QueryResults and their rows. The store answers them, the API
// converts them (wire/), the CLI asks them and the HTTP API parses them from its query
// string. Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/job.h"

namespace gemmprof::core {

// Jobs newest first. Unset fields match everything.
struct JobFilter {
  std::optional<JobState> state;
  std::optional<std::string> node;  // the daemon that accepted the job; unset = every node
  // The jobs of one campaign (submit --campaign; 1..kMaxCampaignChars); unset = any.
  std::optional<std::string> campaign;
  int32_t page_size = 50;  // 1..1000
  std::string page_token;  // from a previous page
};

// Stored results newest first (history for dashboards). Unset fields match everything.
struct ResultFilter {
  std::optional<std::string> device_name;  // exact match
  std::optional<Recipe> recipe;
  std::optional<Pass> pass;
  std::optional<Mode> mode;
  std::optional<int64_t> m, k, n;
  std::optional<int64_t> since_ms, until_ms;  // measured_ms range, inclusive
  std::optional<int64_t> job_id;
  std::optional<std::string> node;  // where it was measured; unset = every node
  int32_t page_size = 100;          // 1..10000
  std::string page_token;
};

// One stored measurement with its full context.
struct ResultRow {
  int64_t result_id = 0;
  int64_t job_id = 0;
  int64_t item_id = 0;
  int64_t measured_ms = 0;  // unix epoch ms
  std::string node;         // where it was measured (device.uuid says which GPU)
  DeviceInfo device;
  WorkItem item;
  TimingOptions timing;
  // Set on every row the store reads; a reply of the daemon without one converts to a row
  // without it, which listings show with empty figures.
  std::optional<Measurement> measurement;
  bool cached = false;
};

}  // namespace gemmprof::core
