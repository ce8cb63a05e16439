#include "client/commands/follow_job.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <optional>

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

absl::Status FollowJob(CommandContext& ctx, GemmProfClient& client, int64_t job_id) {
  std::optional<core::JobRecord> last;
  RETURN_IF_ERROR(client.WatchJob(job_id, [&ctx, &last](const JobEvent& event) {
    ctx.out << (ctx.out_is_tty ? render::ProgressBarLine(event) : render::ProgressEventLine(event));
    ctx.out.flush();
    last = event.job;
  }));
  // A script chaining on the exit code must not take a failed job for a finished one.
  if (last && last->state == core::JobState::kFailed) {
    return absl::FailedPreconditionError("job " + std::to_string(job_id) + " failed" +
                                         (last->error.empty() ? "" : ": " + last->error));
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::client
