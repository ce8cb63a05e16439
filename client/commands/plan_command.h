// `gemmprof plan`: the GEMMs a workload derives to, computed locally; nothing is run.
#pragma once

#include <string>

#include "client/command.h"
#include "client/commands/workload_flags.h"

namespace gemmprof::client {

class PlanCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit PlanCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  std::string format_ = "table";
  WorkloadFlags flags_;
};

}  // namespace gemmprof::client
