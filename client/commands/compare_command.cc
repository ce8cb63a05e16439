#include "client/commands/compare_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/follow_job.h"
#include "client/commands/format_flag.h"
#include "client/render/comparison.h"

namespace gemmprof::client {

CompareCommand::CompareCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("compare", "Compare two jobs item by item");
  AddJobIdArgument(*app_, "JOB_A", job_a_);
  AddJobIdArgument(*app_, "JOB_B", job_b_);
  app_->add_flag("--fail-on-regression", fail_on_regression_,
                 "Exit non-zero when any item of JOB_B is slower than in JOB_A");
  AddListingFormatOption(*app_, format_);
  app_->footer(R"(Items match by (shape, pass, recipe, mode, groups). B/A > 1 means B is slower.
An item is faster/slower only when the medians differ by more than its noise threshold
  max(2%, 3 x sqrt(a^2 + b^2)),
where a and b are each job's relative half-spread (p80 - p20) / (2 x median) of the
item's samples; otherwise "same". The p20-p80 spread ignores the few outlier samples
(clock dips on a power-capped GPU) that inflate the stdev.
Items measured in interleaved rounds on both sides: B/A gets an unpaired 95% interval,
and the verdict needs it to exclude 1 and a change above 2% (drift between jobs is not
inside either job's interval). Back-to-back times, when both measured them, too.
Where both jobs carry GPU telemetry, "Running conditions" gives each job's SM clock,
power, temperature and throttled share over the matched items, and says when the
clocks differ by 0.5% or more: a change of that size on every item is the GPU's
running state drifting between the jobs, not the GEMMs.
Where both jobs measured energy (submit --energy), each item's joules per GEMM and the
energy B/A with its 95% interval are shown too (verdict less/same/more, judged like the
times), and the per-layer joules beside the per-layer times.
Example (CI after a driver or cuBLASLt upgrade):
  gemmprof compare 41 42 --fail-on-regression
  gemmprof compare 41 42 --format csv    one row per matched item, raw ms and interval bounds)");
}

absl::Status CompareCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const render::ListingFormat format, ParseListingFormatFlag(format_));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const core::Report a, client->GetReport(job_a_));
  ASSIGN_OR_RETURN(const core::Report b, client->GetReport(job_b_));
  const report::Comparison c = report::CompareReports(a, b);
  ctx.out << render::RenderListing(render::ComparisonListing(c, job_a_, job_b_), format);
  if (c.items.empty())
    return absl::FailedPreconditionError("jobs " + std::to_string(job_a_) + " and " +
                                         std::to_string(job_b_) +
                                         " have no measured item in common");
  if (fail_on_regression_ && c.slower > 0)
    return absl::FailedPreconditionError(std::to_string(c.slower) + " of " +
                                         std::to_string(c.items.size()) +
                                         " items are slower in job " + std::to_string(job_b_) +
                                         " than in job " + std::to_string(job_a_));
  return absl::OkStatus();
}

}  // namespace gemmprof::client
