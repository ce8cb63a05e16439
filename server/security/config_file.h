// Reading the small files gemmprofd's security flags name (certificates, keys, tokens).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::security {

// The whole of `path`. Errors are InvalidArgument and start with `flag` and the path:
// "--tls-key: cannot read '/etc/k.pem': Permission denied", "... is a directory, not a
// file", "... is larger than 1048576 bytes". The content is never part of a message.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path, std::string_view flag,
                                           size_t max_bytes = size_t{1} << 20);

}  // namespace gemmprof::security
