#include "client/commands/devices_command.h"

#include <CLI/CLI.hpp>

#include "client/render/listings.h"

namespace gemmprof::client {

DevicesCommand::DevicesCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("devices", "List the daemon's devices and supported recipes");
  app_->footer("Example:\n  gemmprof --server gpu-node:50051 devices");
}

absl::Status DevicesCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const auto devices, client->ListDevices());
  ctx.out << render::RenderDevices(devices);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
