// `gemmprof compare`: per-item and per-layer ratios of two jobs with a noise-aware verdict.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

class CompareCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit CompareCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  std::string format_ = "table";
  int64_t job_a_ = 0, job_b_ = 0;
  bool fail_on_regression_ = false;
};

}  // namespace gemmprof::client
