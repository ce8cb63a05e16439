// `gemmprof watch`: follows a job until it ends (a progress bar on a terminal, one line
// per event when piped).
#pragma once

#include "client/command.h"

namespace gemmprof::client {

class WatchCommand : public Command {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit WatchCommand(CLI::App& parent);
  CLI::App* subcommand() const override { return app_; }
  absl::Status Run(CommandContext& ctx) override;

 private:
  CLI::App* app_;
  int64_t job_id_ = 0;
};

}  // namespace gemmprof::client
