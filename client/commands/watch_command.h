// `gemmprof watch`: follows a job until it ends (a progress bar on a terminal, one line
// per event when piped).
#pragma once

#include "client/commands/job_command.h"

namespace gemmprof::client {

class WatchCommand : public JobCommand {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit WatchCommand(CLI::App& parent);
  absl::Status Run(CommandContext& ctx) override;
};

}  // namespace gemmprof::client
