#include "client/commands/plan_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/format_flag.h"
#include "client/render/listings.h"
#include "core/derive.h"

namespace gemmprof::client {

PlanCommand::PlanCommand(CLI::App& parent) {
  app_ = parent.add_subcommand("plan", "Show the GEMMs a workload derives to (nothing is run)");
  flags_.Register(*app_);
  AddListingFormatOption(*app_, format_);
  app_->footer(R"(Takes the same workload flags as `submit` and derives the plan locally, with the
same code as the daemon; no server is needed.
Examples:
  gemmprof plan --hidden_size 4096 --intermediate_size 16384 --num_attention_heads 32 \
                --num_hidden_layers 24 --micro_batch_size 31 --sequence_length 512
  gemmprof plan --preset deepseek-v3 --micro_batch_size 1 --sequence_length 4096 --tp 8
  gemmprof plan --shapes 1024:8192:*2x4096x4096 --format csv)");
}

absl::Status PlanCommand::Run(CommandContext& ctx) {
  ASSIGN_OR_RETURN(const render::ListingFormat format, ParseListingFormatFlag(format_));
  ASSIGN_OR_RETURN(const core::JobSpec spec, flags_.BuildSpec(ctx.err));
  ASSIGN_OR_RETURN(const core::Plan plan, core::DerivePlan(spec));
  ctx.out << render::RenderListing(render::PlanListing(plan, spec), format);
  return absl::OkStatus();
}

}  // namespace gemmprof::client
