#include "client/commands/devices_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/format_flag.h"
#include "client/render/listings.h"

namespace gemmprof::client {

DevicesCommand::DevicesCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("devices", "List the daemon's devices and supported recipes");
  AddListingFormatOption(*app_, format_);
  app_->footer(
      "Examples:\n  gemmprof --server gpu-node:50051 devices\n"
      "  gemmprof devices --format csv     one row per device and recipe\n"
      "  gemmprof devices --format json    one object per device, as in report --format json");
}

absl::Status DevicesCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const render::ListingFormat format, ParseListingFormatFlag(format_));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const auto devices, client->ListDevices());
  ctx.out << render::RenderListing(render::DevicesListing(devices), format);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
