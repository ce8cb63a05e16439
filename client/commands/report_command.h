// `gemmprof report`: a job's report as a table, CSV, JSON or Markdown, optionally with a
// terminal chart.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

class ReportCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit ReportCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  int64_t job_id_ = 0;
  std::string format_ = "table";
  bool chart_ = false;
};

}  // namespace gemmprof::client
