// The base of the subcommands about one stored job (cancel, watch, report, plot): the
// subcommand and its positional JOB argument.
#pragma once

#include <cstdint>
#include <string>

#include "client/command.h"

namespace gemmprof::client {

class JobCommand : public Command {
 public:
  CLI::App* subcommand() const override { return app_; }

 protected:
  // Adds the subcommand `name` to `parent` with its JOB argument (1..2^63-1).
  JobCommand(CLI::App& parent, const std::string& name, const std::string& description);

  CLI::App* app_;
  int64_t job_id_ = 0;
};

}  // namespace gemmprof::client
