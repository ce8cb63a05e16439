#include "client/render/png_export.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace gemmprof::client::render {
namespace {

constexpr char kRenderer[] = "rsvg-convert";
constexpr char kPackage[] = "librsvg2-bin";

// Reads all of `fd` into `out`; returns false on a read error.
bool ReadAll(int fd, std::string* out) {
  std::array<char, 4096> buf;
  for (;;) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out->append(buf.data(), static_cast<size_t>(n));
  }
}

absl::Status CheckPng(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(24, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (!in || head.compare(0, 8, kSignature, 8) != 0 || head.compare(12, 4, "IHDR") != 0) {
    return absl::DataLossError("-o " + path + ": " + kRenderer + " left no valid PNG behind");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WritePngFromSvg(const std::string& svg, const std::string& png_path) {
  int in_pipe[2], err_pipe[2];
  if (pipe(in_pipe) != 0) return absl::InternalError(std::string("pipe: ") + std::strerror(errno));
  if (pipe(err_pipe) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return absl::InternalError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, in_pipe[1]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  std::vector<std::string> args = {kRenderer, "-f", "png", "-o", png_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, kRenderer, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(err_pipe[1]);
  if (spawned != 0) {
    close(in_pipe[1]);
    close(err_pipe[0]);
    if (spawned == ENOENT) {
      return absl::FailedPreconditionError(
          std::string("PNG charts need ") + kRenderer + " (Debian package " + kPackage +
          "), which is not installed; install it, or write SVG (-o chart.svg)");
    }
    return absl::InternalError(std::string("starting ") + kRenderer + ": " +
                               std::strerror(spawned));
  }
  // A renderer that exits early must not kill the client with SIGPIPE.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  size_t written = 0;
  while (written < svg.size()) {
    const ssize_t n = write(in_pipe[1], svg.data() + written, svg.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(in_pipe[1]);
  sigaction(SIGPIPE, &old, nullptr);
  std::string err;
  ReadAll(err_pipe[0], &err);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string first = err.substr(0, err.find('\n'));
    return absl::InternalError(std::string(kRenderer) + " failed to write " + png_path +
                               (first.empty() ? "" : ": " + first));
  }
  return CheckPng(png_path);
}

}  // namespace gemmprof::client::render
