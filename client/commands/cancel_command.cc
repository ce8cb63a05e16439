#include "client/commands/cancel_command.h"

#include <CLI/CLI.hpp>


namespace gemmprof::client {

CancelCommand::CancelCommand(CLI::App& parent)
    : JobCommand(parent, "cancel", "Cancel a job (it stops at the next item boundary)") {
  app_->footer("Example:\n  gemmprof cancel 42\nFinished items keep their results.");
}

absl::Status CancelCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::JobRecord job, client->CancelJob(job_id_));
  ctx.out << "job " << job.id << ": " << core::ToString(job.state) << ", " << job.finished_items
          << "/" << job.total_items << " items finished\n";
  return absl::OkStatus();
}

}  // namespace gemmprof::client
