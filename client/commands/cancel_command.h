// `gemmprof cancel`: stops a job at the next item boundary.
#pragma once

#include "client/command.h"

namespace gemmprof::client {

class CancelCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit CancelCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  int64_t job_id_ = 0;
};

}  // namespace gemmprof::client
