// Turns a ResultFilter into validated SQL for SqliteStore::QueryResults.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"
#include "server/storage/result_store.h"

namespace gemmprof::storage {

inline constexpr int32_t kMaxResultPageSize = 10000;

// A SELECT over kResultColumns with its parameters, to bind 1..params.size() in order.
// It asks for page_size + 1 rows so the caller can tell whether another page follows.
struct ResultQuery {
  std::string sql;
  std::vector<std::variant<int64_t, std::string>> params;
};

// Errors: InvalidArgument naming the field, its value and the limit: page_size outside
// 1..10000, negative m / k / n / since_ms / until_ms / job_id, since_ms > until_ms,
// empty device_name, a page_token no earlier page produced. Thread-safe (pure).
absl::StatusOr<ResultQuery> BuildResultQuery(const ResultFilter& filter);

}  // namespace gemmprof::storage
