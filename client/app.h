// The `gemmprof` command line: global flags, one Command per subcommand, and the exit
// code policy (0 on success; otherwise one line `gemmprof: <reason>` on stderr).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "client/command.h"
#include "client/gemmprof_client.h"

namespace gemmprof::client {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed (server error, ...)
inline constexpr int kExitUsage = 2;    // bad flags; nothing was sent

class App {
 public:
  // Production wiring: gRPC transport, the real clock, isatty(stdout).
  App();
  // Injected wiring for tests: `factory` opens clients, `now_ms` gives the time.
  App(ClientFactory factory, std::function<int64_t()> now_ms, bool out_is_tty);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Parses `args` (without the program name) and runs the chosen command. `--help`
  // anywhere prints that command's help to `out` and returns 0.
  int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
  // argv form for main().
  int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

 private:
  // Runs the parsed command against `address`; returns the exit code.
  int RunCommand(const std::vector<std::unique_ptr<Command>>& commands, const std::string& address,
                 std::ostream& out, std::ostream& err);

  ClientFactory factory_;
  std::function<int64_t()> now_ms_;
  bool out_is_tty_;
};

// Collapses a message to one line (newlines become "; ").
std::string OneLine(std::string_view message);

}  // namespace gemmprof::client
