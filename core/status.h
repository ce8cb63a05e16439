// Status helpers shared by every layer: absl::Status / absl::StatusOr plus the
// early-return macros the code base uses instead of exceptions.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GEMMPROF_CONCAT_INNER_(a, b) a##b
#define GEMMPROF_CONCAT_(a, b) GEMMPROF_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                         \
  do {                                                \
    ::absl::Status gemmprof_status_ = (expr);         \
    if (!gemmprof_status_.ok()) return gemmprof_status_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.status();          \
  lhs = std::move(*tmp)

// `ASSIGN_OR_RETURN(auto x, MakeX());` evaluates an absl::StatusOr<T>, returns its
// status on error, otherwise moves the value into `lhs`.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL_(GEMMPROF_CONCAT_(gemmprof_statusor_, __LINE__), lhs, expr)
