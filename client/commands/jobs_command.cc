#include "client/commands/jobs_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/campaign_flag.h"
#include "client/commands/format_flag.h"
#include "client/render/listings.h"

namespace gemmprof::client {

JobsCommand::JobsCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("jobs", "List jobs, newest first");
  app_->add_option("--state", state_,
                   "Only jobs in this state: queued, running, succeeded, partial, "
                   "failed, cancelled");
  app_->add_option("--limit", limit_, "At most this many jobs (1..1000, default 20)")
      ->check(CLI::Range(1, 1000));
  app_->add_option("--node", node_,
                   "Only jobs this daemon (gemmprofd --node) accepted; default: every node "
                   "sharing the daemon's store");
  app_->add_option("--campaign", campaign_,
                   "Only the jobs of this campaign (submit --where model:A,model:B; "
                   "report --campaign compares them)");
  AddListingFormatOption(*app_, format_);
  app_->footer(
      "Examples:\n  gemmprof jobs\n  gemmprof jobs --state running --limit 5\n"
      "  gemmprof jobs --node gpu-node-7\n"
      "  gemmprof jobs --campaign h100-vs-h200\n"
      "  gemmprof jobs --state partial --format json | jq '.jobs[].id'");
}

absl::Status JobsCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const render::ListingFormat format, ParseListingFormatFlag(format_));
  std::optional<core::JobState> state;
  if (!state_.empty()) {
    state = core::ParseJobState(state_);
    if (!state)
      return absl::InvalidArgumentError(
          "--state: unknown state \"" + state_ +
          "\"; valid: queued, running, succeeded, partial, failed, cancelled");
  }
  RETURN_IF_ERROR(CheckCampaignFilter(campaign_));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const auto jobs, client->ListJobs(state, limit_, node_, campaign_));
  ctx.out << render::RenderListing(render::JobsListing(jobs), format);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
