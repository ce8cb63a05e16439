// `gemmprof plot`: writes a job's charts as a self-contained SVG file.
#pragma once

#include <string>

#include "client/command.h"

namespace gemmprof::client {

class PlotCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit PlotCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  int64_t job_id_ = 0;
  std::string output_;
  std::string format_;  // svg | png; empty: from the file extension
  std::string kind_ = "layer";
};

}  // namespace gemmprof::client
