#include "client/commands/watch_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/follow_job.h"

namespace gemmprof::client {

WatchCommand::WatchCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("watch", "Follow a job until it ends");
  AddJobIdArgument(*app_, "JOB", job_id_);
  app_->footer(
      "Example:\n  gemmprof watch 42 && gemmprof report 42\n"
      "A progress bar on a terminal; one line per event when piped. Exits non-zero when\n"
      "the job ends failed.");
}

absl::Status WatchCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  return FollowJob(ctx, *client, job_id_);
}

}  // namespace gemmprof::client
