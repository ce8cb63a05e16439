#include "client/commands/cancel_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <thread>

#include "absl/strings/str_format.h"

namespace gemmprof::client {
namespace {

// The largest --wait accepted: an hour.
constexpr double kMaxWaitS = 3600;
// How often the job's state is read while waiting.
constexpr auto kPoll = std::chrono::milliseconds(200);

void PrintState(std::ostream& out, const core::JobRecord& job) {
  out << "job " << job.id << ": " << core::ToString(job.state) << ", " << job.finished_items << "/"
      << job.total_items << " items finished\n";
}

}  // namespace

CancelCommand::CancelCommand(CLI::App& parent)
    : JobCommand(parent, "cancel",
                 "Cancel a job: its measurement in flight stops at the next round boundary") {
  app_->add_option("--wait", wait_s_,
                   "Seconds to wait for the job's final state (default 10; 0: return once the "
                   "cancel is accepted)");
  app_->footer(R"(The daemon stops the job's measurement in flight at its next round boundary;
a GPU worker that does not stop within 2 s (a kernel that never ends) is killed and
restarted. The items measured before the cancel keep their results; the others end
cancelled. Exit 0 once the job is cancelled (or had ended already); exit 1 when it is
still running after --wait seconds.
Examples:
  gemmprof cancel 42
  gemmprof cancel 42 --wait 0     only ask; `gemmprof watch 42` follows the rest)");
}

absl::Status CancelCommand::Run(CommandContext& ctx) {
  if (!std::isfinite(wait_s_) || wait_s_ < 0 || wait_s_ > kMaxWaitS) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--wait: %g is out of range; give seconds in [0, %.0f]", wait_s_, kMaxWaitS));
  }
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(core::JobRecord job, client->CancelJob(job_id_));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s_);
  while (!core::IsTerminal(job.state) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kPoll);
    ASSIGN_OR_RETURN(job, client->GetJob(job_id_));
  }
  PrintState(ctx.out, job);
  if (!core::IsTerminal(job.state) && wait_s_ > 0) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "job %d is still %s %g s after the cancel; `gemmprof watch %d` follows it to its end",
        job.id, core::ToString(job.state), wait_s_, job.id));
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::client
