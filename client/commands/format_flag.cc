#include "client/commands/format_flag.h"

#include <CLI/CLI.hpp>

namespace gemmprof::client {

void AddListingFormatOption(CLI::App& app, std::string& format) {
  app.add_option("--format", format,
                 "table (default, aligned text), csv (a header row, raw numbers), json (one "
                 "object, rows under one key) or markdown");
}

absl::StatusOr<render::ListingFormat> ParseListingFormatFlag(const std::string& value) {
  if (auto f = render::ParseListingFormat(value)) return *f;
  return absl::InvalidArgumentError("--format: unknown format \"" + value +
                                    "\"; valid: " + render::kListingFormats);
}

}  // namespace gemmprof::client
