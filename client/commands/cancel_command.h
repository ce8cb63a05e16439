// `gemmprof cancel`: stops a job at the next item boundary.
#pragma once

#include "client/commands/job_command.h"

namespace gemmprof::client {

class CancelCommand : public JobCommand {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit CancelCommand(CLI::App& parent);
  absl::Status Run(CommandContext& ctx) override;
};

}  // namespace gemmprof::client
