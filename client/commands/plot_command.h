// `gemmprof plot`: writes a job's charts as a self-contained SVG file.
#pragma once

#include <string>

#include "client/commands/job_command.h"

namespace gemmprof::client {

class PlotCommand : public JobCommand {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit PlotCommand(CLI::App& parent);
  absl::Status Run(CommandContext& ctx) override;

 private:
  std::string output_;
  std::string format_;  // svg | png; empty: from the file extension
  std::string kind_ = "layer";
};

}  // namespace gemmprof::client
