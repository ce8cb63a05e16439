#include "client/commands/submit_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  ASSIGN_OR_RETURN(const std::vector<core::Placement> targets, flags_.WhereTargets());
  ASSIGN_OR_RETURN(GemmProfClient * client, ctx.client());
  if (targets.size() > 1) return RunCampaign(ctx, *client, spec, targets);
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

absl::Status SubmitCommand::RunCampaign(CommandContext& ctx, GemmProfClient& client,
                                        core::JobSpec spec,
                                        const std::vector<core::Placement>& targets) {
  if (spec.campaign.empty()) {
    spec.campaign = absl::StrCat("c", std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  }
  // Every job or none: a model no serving daemon has is refused before any job is stored
  // (the daemon checks each job again).
  ASSIGN_OR_RETURN(const core::DaemonListing listing, client.ListDaemons());
  std::set<std::string> models;
  for (const core::DaemonRecord& d : listing.daemons) {
    if (core::DaemonStateOf(d, listing.now_unix_ms) != core::DaemonState::kServing) continue;
    for (const core::DaemonDeviceModel& m : d.models) models.insert(m.name);
  }
  for (const core::Placement& target : targets) {
    const bool known = std::any_of(models.begin(), models.end(), [&](const std::string& m) {
      return absl::EqualsIgnoreCase(m, target.name);
    });
    if (!known) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--where: model:", target.name,
          ": no serving daemon of the cluster has this device model; the cluster has ",
          models.empty() ? "none" : absl::StrJoin(models, ", "), "; no job was submitted"));
    }
  }
  std::vector<int64_t> ids;
  for (const core::Placement& target : targets) {
    core::JobSpec one = spec;
    one.where = target;
    ASSIGN_OR_RETURN(const SubmitResult submitted, client.SubmitJob(one));
    ids.push_back(submitted.job_id);
    ctx.err << "job " << submitted.job_id << ": " << submitted.total_items << " items on "
            << target.name << "\n";
  }
  ctx.err << "campaign " << spec.campaign << ": gemmprof report --campaign " << spec.campaign
          << "\n";
  if (!wait_) {
    for (int64_t id : ids) ctx.out << id << "\n";
    return absl::OkStatus();
  }
  absl::Status outcome = absl::OkStatus();
  for (int64_t id : ids) {
    ASSIGN_OR_RETURN(const core::JobRecord job, FollowJob(ctx, client, id));
    if (absl::Status s = JobOutcome(job); !s.ok() && outcome.ok()) outcome = s;
  }
  ctx.out << "campaign " << spec.campaign << "\n";
  return outcome;
}

}  // namespace gemmprof::client
