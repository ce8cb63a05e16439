#include "client/commands/follow_job.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <optional>

#include "client/commands/resumable_watch.h"
#include "client/exit_codes.h"
#include "client/render/progress.h"

namespace gemmprof::client {

CLI::Validator ExactInteger(bool is_signed) {
  return CLI::Validator(
      [is_signed](std::string& text) -> std::string {
        // CLI11 saturates out-of-range integers instead of rejecting them.
        const char* end = text.data() + text.size();
        std::from_chars_result r;
        if (is_signed) {
          int64_t v;
          r = std::from_chars(text.data(), end, v);
        } else {
          uint64_t v;
          r = std::from_chars(text.data(), end, v);
        }
        if (r.ec == std::errc::result_out_of_range) return "value " + text + " is out of range";
        if (r.ec != std::errc() || r.ptr != end) return "value " + text + " is not an integer";
        return "";
      },
      is_signed ? "INT" : "UINT");
}

void AddJobIdArgument(CLI::App& app, const char* name, int64_t& job_id) {
  app.add_option(name, job_id, "Job id (from gemmprof submit / jobs)")
      ->required()
      ->check(ExactInteger(true))
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
}

absl::StatusOr<core::JobRecord> FollowJob(CommandContext& ctx, GemmProfClient& client,
                                          int64_t job_id) {
  const WatchHooks hooks{
      .emit =
          [&ctx](const core::JobEvent& event) {
            ctx.out << (ctx.out_is_tty ? render::ProgressBarLine(event)
                                       : render::ProgressEventLine(event));
            ctx.out.flush();
          },
      .sleep_ms = ctx.sleep_ms,
      .notice =
          [&ctx](const std::string& line) {
            // The progress bar holds the terminal's line without a newline; end it first.
            if (ctx.out_is_tty) ctx.out << "\n" << std::flush;
            ctx.err << line << "\n" << std::flush;
          },
      .address = ctx.server_address,
  };
  return WatchWithResume(client, job_id, hooks);
}

absl::Status JobOutcome(const core::JobRecord& job) {
  const std::string name = "job " + std::to_string(job.id);
  const std::string of_total = " of " + std::to_string(job.total_items) + " items";
  switch (job.state) {
    case core::JobState::kSucceeded:
      return absl::OkStatus();
    case core::JobState::kPartial:
      return WithExitCode(
          absl::AbortedError(name + " ended partial: " + std::to_string(job.failed_items) +
                             of_total + " failed"),
          kExitPartial);
    case core::JobState::kCancelled:
      return WithExitCode(
          absl::CancelledError(name + " was cancelled; " + std::to_string(job.finished_items) +
                               of_total + " had finished"),
          kExitCancelled);
    case core::JobState::kFailed:
      return WithExitCode(
          absl::AbortedError(name + " failed" + (job.error.empty() ? "" : ": " + job.error)),
          kExitFailure);
    default:  // a stream that ends before the job does is an error of its own
      return WithExitCode(
          absl::InternalError(name + " is still " + std::string(core::ToString(job.state))),
          kExitFailure);
  }
}

}  // namespace gemmprof::client
