// `gemmprof cancel`: stops a job. Its measurement in flight stops at the next round
// boundary (the daemon kills a GPU worker that does not stop within 2 s); the command
// waits for the job's final state (--wait seconds, default 10).
#pragma once

#include "client/commands/job_command.h"

namespace gemmprof::client {

class CancelCommand : public JobCommand {
 public:
  // Registers the subcommand and its flags on `parent`.
  explicit CancelCommand(CLI::App& parent);
  absl::Status Run(CommandContext& ctx) override;

 private:
  double wait_s_ = 10;
};

}  // namespace gemmprof::client
