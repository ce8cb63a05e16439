#include "client/commands/cluster_command.h"

#include <CLI/CLI.hpp>
#include <string>

#include "client/commands/format_flag.h"
#include "client/render/listings.h"
#include "core/daemon_record.h"

namespace gemmprof::client {

ClusterCommand::ClusterCommand(CLI::App& parent) {
  app_ = parent.add_subcommand(
      "cluster",
      "List the daemons that share this daemon's store: node, state, devices, how many were "
      "busy at the last heartbeat, version, last heartbeat");
  AddListingFormatOption(*app_, format_);
  const int64_t period = core::kDaemonHeartbeatS;
  const int64_t lost = core::kDaemonLostPeriods * period;
  app_->footer(
      "Every daemon writes its record to the store at start, every " + std::to_string(period) +
      " s while it serves and when it stops cleanly. state: serving; stopped (it said so); "
      "lost (no heartbeat for " +
      std::to_string(lost) +
      " s by the answering daemon's clock: its process, node or connection to the store "
      "died). With SQLite (one daemon per database) the list is that daemon; with "
      "PostgreSQL it is every daemon of the cluster.\n"
      "Examples:\n  gemmprof cluster\n"
      "  gemmprof --server gpu-node:50051 cluster --format json\n"
      "  gemmprof cluster --format csv     one row per daemon, devices by model");
}

absl::Status ClusterCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const render::ListingFormat format, ParseListingFormatFlag(format_));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::DaemonListing listing, client->ListDaemons());
  ctx.out << render::RenderListing(render::ClusterListing(listing), format);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
