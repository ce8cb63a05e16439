// Helpers shared by several subcommands.
#pragma once

#include <cstdint>

#include "client/command.h"

namespace gemmprof::client {

// Adds a positional job id (1..2^63-1) named `name` to `app`.
void AddJobIdArgument(CLI::App& app, const char* name, int64_t& job_id);

// Streams the job's events to ctx.out (progress bar on a TTY, lines otherwise) until
// it ends. Returns the server's status, or OK after the last event.
absl::Status FollowJob(CommandContext& ctx, GemmProfClient& client, int64_t job_id);

}  // namespace gemmprof::client
