#include "server/security/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gemmprof::security {
namespace {

absl::Status Bad(std::string_view flag, const std::string& path, std::string_view problem) {
  return absl::InvalidArgumentError(std::string(flag) + ": '" + path + "' " + std::string(problem));
}

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

absl::StatusOr<std::string> ReadConfigFile(const std::string& path, std::string_view flag,
                                           size_t max_bytes) {
  if (path.empty()) return absl::InvalidArgumentError(std::string(flag) + ": empty path");
  Fd f{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    return absl::InvalidArgumentError(std::string(flag) + ": cannot read '" + path +
                                      "': " + strerror(errno));
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0)
    return Bad(flag, path, std::string("cannot be read: ") + strerror(errno));
  if (S_ISDIR(st.st_mode)) return Bad(flag, path, "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) return Bad(flag, path, "is not a regular file");
  if (static_cast<size_t>(st.st_size) > max_bytes) {
    return Bad(flag, path, "is larger than " + std::to_string(max_bytes) + " bytes");
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Bad(flag, path, std::string("cannot be read: ") + strerror(errno));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    // The file may grow while it is read.
    if (out.size() > max_bytes) {
      return Bad(flag, path, "is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  return out;
}

}  // namespace gemmprof::security
