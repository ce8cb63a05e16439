#include "client/commands/follow_job.h"

#include <CLI/CLI.hpp>
#include <limits>

#include "client/render/progress.h"

namespace gemmprof::client {

void AddJobIdArgument(CLI::App& app, const char* name, int64_t& job_id) {
  app.add_option(name, job_id, "Job id (from `gemmprof submit` or `gemmprof jobs`)")
      ->required()
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
}

absl::Status FollowJob(CommandContext& ctx, GemmProfClient& client, int64_t job_id) {
  return client.WatchJob(job_id, [&ctx](const JobEvent& event) {
    ctx.out << (ctx.out_is_tty ? render::ProgressBarLine(event) : render::ProgressEventLine(event));
    ctx.out.flush();
  });
}

}  // namespace gemmprof::client
