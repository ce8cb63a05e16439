// Helpers shared by several subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "client/command.h"

namespace gemmprof::client {

// A CLI11 check that the text is one integer within int64 (or uint64 when
// !is_signed), rejecting what CLI11's own conversion would silently saturate.
CLI::Validator ExactInteger(bool is_signed);

// Adds a positional job id (1..2^63-1) named `name` to `app`.
void AddJobIdArgument(CLI::App& app, const char* name, int64_t& job_id);

// Streams the job's events to ctx.out (progress bar on a TTY, lines otherwise) until it
// ends, reconnecting after a lost connection (resumable_watch.h). Returns the job as it
// ended, or the server's status.
absl::StatusOr<core::JobRecord> FollowJob(CommandContext& ctx, GemmProfClient& client,
                                          int64_t job_id);

// What the end state of a followed job means for the exit code: OK for succeeded; an
// error carrying kExitPartial, kExitCancelled or kExitFailure (failed) otherwise,
// with a line naming the job and why.
absl::Status JobOutcome(const core::JobRecord& job);

}  // namespace gemmprof::client
