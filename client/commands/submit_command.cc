#include "client/commands/submit_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/follow_job.h"
#include "client/render/report_document.h"

namespace gemmprof::client {

SubmitCommand::SubmitCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("submit", "Submit a job: a model or a shape list x recipes x modes");
  flags_.Register(*app_);
  app_->add_flag("--wait", wait_, "Follow the job, then print its report");
  app_->footer(R"(Examples:
  gemmprof submit --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
                  --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512 --wait
  gemmprof submit --shapes 4096,8192x4096x14336 --recipes bf16,fp8-block --mode both
  gemmprof submit --preset llama-3.1-8b --tp 2 --l2 cold --label "tp2 cold"
  gemmprof submit --model config.json --micro_batch_size 2 --sequence_length 4096
Without --wait only the job id is printed, so JOB=$(gemmprof submit ...) works.
With --wait the exit code says how the job ended: 0 succeeded, 1 failed, 3 partial
(some items failed; the report shows which), 4 cancelled.)");
}

absl::Status SubmitCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const core::JobSpec spec, flags_.BuildSpec(ctx.err));
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  ASSIGN_OR_RETURN(const SubmitResult submitted, client->SubmitJob(spec));
  if (!wait_) {
    ctx.out << submitted.job_id << "\n";
    return absl::OkStatus();
  }
  ctx.out << "job " << submitted.job_id << ": " << submitted.total_items << " items\n";
  ASSIGN_OR_RETURN(const core::JobRecord job, FollowJob(ctx, *client, submitted.job_id));
  // Whatever the end, finished items are worth printing (a partial report shows which
  // items failed and why); the exit code says how the job ended. A job that ended
  // before any item finished has an empty report: its error line says all there is.
  if (job.finished_items > 0) {
    ASSIGN_OR_RETURN(const core::Report report, client->GetReport(submitted.job_id));
    ctx.out << "\n" << render::RenderReportTable(report);
  }
  return JobOutcome(job);
}

}  // namespace gemmprof::client
