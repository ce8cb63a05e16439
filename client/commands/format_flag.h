// `--format table|csv|json|markdown` of the listing commands (jobs, history, devices,
// plan, compare), registered and checked in one place so they all say the same.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "client/render/listings.h"

namespace CLI {
class App;
}

namespace gemmprof::client {

// Adds `--format` to `app`, stored in `format` (default "table").
void AddListingFormatOption(CLI::App& app, std::string& format);
// The format named by `value`, or INVALID_ARGUMENT naming the flag, the value and the
// valid formats.
absl::StatusOr<render::ListingFormat> ParseListingFormatFlag(const std::string& value);

}  // namespace gemmprof::client
