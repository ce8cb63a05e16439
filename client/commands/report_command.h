// `gemmprof report`: a job's report as a table, CSV, JSON or Markdown, optionally with a
// terminal chart.
#pragma once

#include <string>

#include "client/commands/job_command.h"

namespace gemmprof::client {

class ReportCommand : public JobCommand {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit ReportCommand(CLI::App& parent);
  absl::Status Run(CommandContext& ctx) override;

 private:
  // --campaign: the campaign's jobs (one per device model), each compared with the first.
  absl::Status RunCampaign(CommandContext& ctx, GemmProfClient& client);

  std::string campaign_;
  std::string format_ = "table";
  bool chart_ = false;
};

}  // namespace gemmprof::client
