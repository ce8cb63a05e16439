// The `--server HOST:PORT` value.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::client {

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";

// Accepts "host:port", "[ipv6]:port" with a port in 1..65535 and a host of letters,
// digits, '.', '-', '_' (or a bracketed IPv6 literal). Returns the address unchanged.
// Errors: InvalidArgument naming `source` (where the value came from), the value and
// what is wrong.
absl::StatusOr<std::string> ParseServerAddress(std::string_view text,
                                               std::string_view source = "--server");

}  // namespace gemmprof::client
