#include "client/commands/job_command.h"

#include <CLI/CLI.hpp>

#include "client/commands/follow_job.h"

namespace gemmprof::client {

JobCommand::JobCommand(CLI::App& parent, const std::string& name, const std::string& description)
    : app_(parent.add_subcommand(name, description)) {
  AddJobIdArgument(*app_, "JOB", job_id_);
}

}  // namespace gemmprof::client
