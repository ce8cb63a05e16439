// The `history --since` value.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace gemmprof::client {

// "2026-11-01" (00:00 UTC that day) or a age "7d", "12h", "30m" before `now_ms`.
// Returns unix epoch ms. Errors: InvalidArgument naming the value and both forms.
absl::StatusOr<int64_t> ParseSince(std::string_view text, int64_t now_ms);

}  // namespace gemmprof::client
