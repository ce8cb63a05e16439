// The interface of one `gemmprof` subcommand and what it runs with.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "client/gemmprof_client.h"
#include "core/status.h"

namespace CLI {
class App;
}

namespace gemmprof::client {

// Everything a command may touch: output streams, whether stdout is a terminal, the
// time, and the daemon (connected on first use, so commands that need no server, and
// flag errors, never try to connect or read connection settings).
struct CommandContext {
  std::ostream& out;
  std::ostream& err;
  bool out_is_tty = false;
  int64_t now_ms = 0;  // unix epoch ms
  std::function<absl::StatusOr<GemmProfClient*>()> client;
  std::string server_address;                // HOST:PORT, set once client() succeeded
  std::function<void(int64_t ms)> sleep_ms;  // waits (watch's reconnect backoff)
};

// A subcommand: registers its flags on construction, runs after a successful parse.
// A failed run returns a status whose message becomes the one `gemmprof: ...` line.
class Command {
 public:
  virtual ~Command() = default;
  // The CLI11 subcommand this command registered (owned by the parent CLI::App).
  virtual CLI::App* subcommand() const = 0;
  virtual absl::Status Run(CommandContext& ctx) = 0;
};

}  // namespace gemmprof::client
