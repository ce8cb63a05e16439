#include "client/commands/watch_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/follow_job.h"

namespace gemmprof::client {

WatchCommand::WatchCommand(CLI::App& parent)
    : JobCommand(parent, "watch", "Follow a job until it ends") {
  app_->footer(
      "Example:\n  gemmprof watch 42 && gemmprof report 42\n"
      "A progress bar on a terminal; one line per event when piped. A lost connection is\n"
      "re-established (for up to 5 minutes) without losing or repeating events.\n"
      "Exit code: 0 succeeded, 1 failed, 3 partial (some items failed), 4 cancelled.");
}

absl::Status WatchCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::JobRecord job, FollowJob(ctx, *client, job_id_));
  return JobOutcome(job);
}

}  // namespace gemmprof::client
