// The exit codes of `gemmprof`, and how a command's status carries one. Documented in
// `gemmprof --help`; scripts depend on them, so they never change meaning.
#pragma once

#include <optional>
#include <string>

#include "absl/strings/cord.h"
#include "core/status.h"

namespace gemmprof::client {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the command ran and failed (unreachable, server error,
                                          // job failed)
inline constexpr int kExitUsage = 2;      // bad flags, environment or config; nothing was sent
inline constexpr int kExitPartial = 3;    // watch / submit --wait: the job ended partial
inline constexpr int kExitCancelled = 4;  // watch / submit --wait: the job was cancelled

// The status payload key that carries an exit code.
inline constexpr char kExitCodePayload[] = "type.gemmprof.dev/exit_code";

// `status` (not OK) marked to end the program with `exit_code`.
inline absl::Status WithExitCode(absl::Status status, int exit_code) {
  status.SetPayload(kExitCodePayload, absl::Cord(std::to_string(exit_code)));
  return status;
}

// The exit code a status was marked with, if any.
inline std::optional<int> ExitCodeOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kExitCodePayload);  // absl::optional
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  if (text.empty() || text.size() > 3) return std::nullopt;
  return std::stoi(text);
}

}  // namespace gemmprof::client
