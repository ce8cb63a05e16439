// Starting a worker process and telling how one ended.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "device/worker/channel.h"

namespace gemmprof::worker {

// The descriptors a worker finds its channels on (passed as --worker-fd and
// --worker-query-fd as well).
inline constexpr int kWorkerRunFd = 3;
inline constexpr int kWorkerQueryFd = 4;

// A started worker: its pid and the daemon's ends of its two channels.
struct SpawnedWorker {
  pid_t pid = -1;
  MessageChannel run;    // BeginJob / MeasureGroup, and the worker's Hello
  MessageChannel query;  // CanImplement
};

// Forks and executes `executable` with the arguments `argv` (argv[0] included) and
// "--worker-fd 3 --worker-query-fd 4" appended, in exactly the environment `env`
// ("NAME=value" strings). In the child
// the channels are descriptors 3 and 4 and every other descriptor above 2 is closed (the
// database lock, listening sockets, other workers' channels); SIGINT and SIGTERM are
// ignored (the daemon decides when its workers end: it closes their channels) and the
// worker gets SIGKILL if the calling thread ends, so call this from a thread that
// outlives the worker. Unavailable when fork or socketpair fail. The caller reaps it.
absl::StatusOr<SpawnedWorker> SpawnWorker(const std::string& executable,
                                          const std::vector<std::string>& argv,
                                          const std::vector<std::string>& env);

// How a worker ended, from a wait status: "worker exited with status 3",
// "worker exited: signal 9 (Killed)".
std::string DescribeExit(int wait_status);

// This process's environment with `name` set to `value`, or removed when `value` is
// empty.
std::vector<std::string> EnvironmentWith(const std::string& name, const std::string& value);

}  // namespace gemmprof::worker
