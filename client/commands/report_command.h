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
  std::string format_ = "table";
  bool chart_ = false;
};

}  // namespace gemmprof::client
