#include "tests/integration/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gemmprof::testing {
namespace {

std::vector<char*> Argv(const std::vector<std::string>& args) {
  std::vector<char*> out;
  for (const auto& a : args) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

std::string ReadAll(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, n);
  return s;
}

}  // namespace

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env) {
  char out_tmpl[] = "/tmp/gemmprof-out-XXXXXX";
  char err_tmpl[] = "/tmp/gemmprof-err-XXXXXX";
  int out_fd = mkstemp(out_tmpl);
  int err_fd = mkstemp(err_tmpl);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    auto args = Argv(argv);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  lseek(out_fd, 0, SEEK_SET);
  lseek(err_fd, 0, SEEK_SET);
  r.out = ReadAll(out_fd);
  r.err = ReadAll(err_fd);
  close(out_fd);
  close(err_fd);
  unlink(out_tmpl);
  unlink(err_tmpl);
  return r;
}

Process::Process(const std::vector<std::string>& argv, const std::string& stderr_path,
                 const std::vector<std::string>& env) {
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    auto args = Argv(argv);
    execv(args[0], args.data());
    _exit(127);
  }
}

Process::~Process() {
  if (pid_ > 0) StopWith(SIGKILL);
}

int Process::StopWith(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

std::vector<pid_t> Process::Children() const {
  std::vector<pid_t> out;
  if (pid_ <= 0) return out;
  std::error_code ec;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    pid_t child = 0;
    while (in >> child) out.push_back(child);
  }
  return out;
}

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::filesystem::path p = std::filesystem::path(dir) / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

std::string FindChromium() {
  if (const char* env = std::getenv("GEMMPROF_CHROMIUM"); env != nullptr && *env != '\0') {
    return env;
  }
  for (const char* name : {"chromium", "chromium-browser"}) {
    if (std::string found = FindInPath(name); !found.empty()) return found;
  }
  return "";
}

std::vector<std::string> HeadlessChromium(const std::string& chromium,
                                          const std::string& profile_dir) {
  const std::string timeout = FindInPath("timeout");
  if (timeout.empty()) return {};
  return {timeout,
          "120",
          chromium,
          "--headless=new",
          "--no-sandbox",
          "--disable-gpu",
          "--hide-scrollbars",
          "--user-data-dir=" + profile_dir,
          "--window-size=1400,1000",
          "--virtual-time-budget=10000"};
}

}  // namespace gemmprof::testing
