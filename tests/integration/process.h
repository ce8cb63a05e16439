// Runs the real gemmprofd and gemmprof binaries for integration tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace gemmprof::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` to completion with `env` added to the environment; captures both streams.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env = {});

// The whole file, or "" when it cannot be read (yet): a port file the daemon writes.
std::string Slurp(const std::string& path);

// The first executable `name` in PATH; "" when there is none.
std::string FindInPath(const std::string& name);
// Debian's chromium (GEMMPROF_CHROMIUM overrides); "" when there is none.
std::string FindChromium();
// The command line of a headless `chromium` run under coreutils' `timeout` (a browser that
// hangs fails the test, not the CI run), with its profile in `profile_dir`: append
// `--dump-dom URL` or `--screenshot=PNG URL`. Empty when coreutils' timeout is missing.
std::vector<std::string> HeadlessChromium(const std::string& chromium,
                                          const std::string& profile_dir);

// A background process (the daemon). Killed with SIGKILL on destruction if still alive.
class Process {
 public:
  // `env` ("NAME=value") is added to the environment.
  Process(const std::vector<std::string>& argv, const std::string& stderr_path,
          const std::vector<std::string>& env = {});
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // Sends `signal` and waits for exit; returns the exit status as from waitpid.
  int StopWith(int signal);
  // The pids of its child processes (its workers), from /proc.
  std::vector<pid_t> Children() const;

 private:
  pid_t pid_ = -1;
};

}  // namespace gemmprof::testing
