// `gemmprof submit`: validates a workload locally, submits it and prints the job id
// (with --wait: follows it and prints the report).
#pragma once

#include "client/command.h"
#include "client/commands/workload_flags.h"

namespace gemmprof::client {

class SubmitCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit SubmitCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  // --where model:A,model:B: one job per model, one campaign id, all checked first.
  absl::Status RunCampaign(CommandContext& ctx, GemmProfClient& client, core::JobSpec spec,
                           const std::vector<core::Placement>& targets);

  CLI::App* app_;
  WorkloadFlags flags_;
  bool wait_ = false;
};

}  // namespace gemmprof::client
