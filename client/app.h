// The `gemmprof` command line: global flags, one Command per subcommand, and the exit
// code policy (exit_codes.h; on failure one line `gemmprof: <reason>` on stderr).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "client/command.h"
#include "client/connection.h"
#include "client/exit_codes.h"
#include "client/gemmprof_client.h"

namespace gemmprof::client {

class App {
 public:
  // Production wiring: gRPC transport, the real clock and sleep, isatty(stdout), the
  // process environment.
  App();
  // Injected wiring for tests: `factory` opens clients, `now_ms` gives the time, `env`
  // stands for the environment, `sleep_ms` for waiting (watch's reconnect backoff).
  App(ClientFactory factory, std::function<int64_t()> now_ms, bool out_is_tty,
      Environment env = ProcessEnvironment(), std::function<void(int64_t)> sleep_ms = nullptr);
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Parses `args` (without the program name) and runs the chosen command. `--help`
  // anywhere prints that command's help to `out` and returns 0.
  int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
  // argv form for main().
  int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

 private:
  // Runs the parsed command, connecting with `flags` on first use; returns the exit code.
  int RunCommand(const std::vector<std::unique_ptr<Command>>& commands,
                 const ConnectionFlags& flags, std::ostream& out, std::ostream& err);

  ClientFactory factory_;
  std::function<int64_t()> now_ms_;
  bool out_is_tty_;
  Environment env_;
  std::function<void(int64_t)> sleep_ms_;
};

// Collapses a message to one line (newlines become "; ").
std::string OneLine(std::string_view message);

}  // namespace gemmprof::client
