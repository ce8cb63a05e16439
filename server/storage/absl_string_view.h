// The Abseil this project builds against is configured with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), which does not accept a std::string_view. AbslSv
// bridges the two for absl::StrCat and friends.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace gemmprof::storage {

// A view of the same characters; no copy. Thread-safe.
inline absl::string_view AbslSv(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace gemmprof::storage
