#include "device/worker/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace gemmprof::worker {
namespace {

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// The child's side between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecWorker(int run_fd, int query_fd, pid_t parent, int max_fd, const char* path,
                             char** argv, char** envp) {
  // Move both ends above the target numbers first, so neither dup2 overwrites the other.
  const int run = fcntl(run_fd, F_DUPFD, 10);
  const int query = fcntl(query_fd, F_DUPFD, 10);
  if (run < 0 || query < 0 || dup2(run, kWorkerRunFd) < 0 || dup2(query, kWorkerQueryFd) < 0) {
    _exit(127);
  }
  if (syscall(SYS_close_range, kWorkerQueryFd + 1, ~0U, 0) != 0) {
    for (int fd = kWorkerQueryFd + 1; fd < max_fd; ++fd) close(fd);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, nullptr);
  sigaction(SIGTERM, &ignore, nullptr);
  // SIGHUP reloads the daemon's certificates; a whole process group signalled from a
  // terminal must not kill the workers with it.
  sigaction(SIGHUP, &ignore, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // the daemon died before the line above
  execve(path, argv, envp);
  _exit(127);
}

}  // namespace

absl::StatusOr<SpawnedWorker> SpawnWorker(const std::string& executable,
                                          const std::vector<std::string>& argv,
                                          const std::vector<std::string>& env) {
  if (argv.empty()) return absl::InvalidArgumentError("worker command line is empty");
  SpawnedWorker w;
  MessageChannel child_run, child_query;
  RETURN_IF_ERROR(MakeChannelPair(&w.run, &child_run));
  RETURN_IF_ERROR(MakeChannelPair(&w.query, &child_query));
  // Everything the child needs is built before fork: it may not allocate.
  std::vector<std::string> args = argv;
  args.insert(args.end(), {"--worker-fd", std::to_string(kWorkerRunFd), "--worker-query-fd",
                           std::to_string(kWorkerQueryFd)});
  std::vector<std::string> envs = env;
  std::vector<char*> c_args = CStrings(args), c_env = CStrings(envs);
  rlimit files{};
  const int max_fd =
      getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < 65536 ? files.rlim_cur : 65536;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::UnavailableError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    ExecWorker(child_run.fd(), child_query.fd(), parent, max_fd, executable.c_str(), c_args.data(),
               c_env.data());
  }
  w.pid = pid;
  return w;
}

std::string DescribeExit(int wait_status) {
  if (WIFEXITED(wait_status)) {
    const int code = WEXITSTATUS(wait_status);
    return absl::StrCat("worker exited with status ", code,
                        code == 127 ? " (its executable could not be started)" : "");
  }
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* name = sigdescr_np(sig);
    return absl::StrCat("worker exited: signal ", sig, " (", name != nullptr ? name : "unknown",
                        ")", WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return absl::StrCat("worker ended with wait status ", wait_status);
}

std::vector<std::string> EnvironmentWith(const std::string& name, const std::string& value) {
  std::vector<std::string> env;
  const std::string prefix = name + "=";
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (!absl::StartsWith(*e, prefix)) env.emplace_back(*e);
  }
  if (!value.empty()) env.push_back(prefix + value);
  return env;
}

}  // namespace gemmprof::worker
