// Page sizes and page tokens shared by the store's listing calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::storage {

// InvalidArgument "page_size: 0 is outside 1..1000" unless 1 <= page_size <= max.
absl::Status ValidatePageSize(int32_t page_size, int32_t max_page_size);

// A token resumes a listing after the row with this id (listings are in descending
// id order). Opaque to callers.
std::string MakePageToken(int64_t last_id);

// nullopt for "" (the first page); the id to continue below otherwise.
// Errors: InvalidArgument naming page_token and the value, for text that no
// MakePageToken produced.
absl::StatusOr<std::optional<int64_t>> ParsePageToken(std::string_view token);

}  // namespace gemmprof::storage
