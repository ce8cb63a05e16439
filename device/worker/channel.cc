#include "device/worker/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gemmprof::worker {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is readable or the deadline passes (nullopt: no deadline).
absl::Status WaitReadable(int fd, const std::optional<Clock::time_point>& deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline.has_value()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return absl::DeadlineExceededError("no answer in time");
      wait_ms = static_cast<int>(std::min<int64_t>(left, 60'000));
    }
    pollfd p{fd, POLLIN, 0};
    const int n = poll(&p, 1, wait_ms);
    if (n > 0) return absl::OkStatus();
    if (n < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("poll: ", strerror(errno)));
    }
  }
}

// Once a frame has begun, the rest of it is read even past the caller's deadline (the
// peer writes a frame in one go): a timeout never leaves half a frame in the channel. A
// peer that stops inside a frame for this long is broken.
constexpr auto kInsideFrame = std::chrono::seconds(5);

// Reads exactly `size` bytes. `*got_any` tells a clean end-of-file before the first byte
// (the peer closed between frames) from one inside a frame.
absl::Status ReadExactly(int fd, char* data, size_t size,
                         std::optional<Clock::time_point>& deadline, bool* got_any) {
  size_t done = 0;
  while (done < size) {
    if (*got_any && deadline.has_value()) {
      deadline = std::max(*deadline, Clock::now() + kInsideFrame);
    }
    if (absl::Status s = WaitReadable(fd, deadline); !s.ok()) {
      if (*got_any && absl::IsDeadlineExceeded(s)) {
        return absl::DataLossError("the peer stopped inside a frame");
      }
      return s;
    }
    const ssize_t n = read(fd, data + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      *got_any = true;
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n == 0 && !*got_any) return absl::UnavailableError("the peer closed the channel");
    if (n == 0) return absl::DataLossError("the peer closed the channel inside a frame");
    return absl::UnavailableError(absl::StrCat("read: ", strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

MessageChannel::~MessageChannel() {
  if (fd_ >= 0) close(fd_);
}

MessageChannel::MessageChannel(MessageChannel&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)) {}

MessageChannel& MessageChannel::operator=(MessageChannel&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

absl::Status MessageChannel::Send(const google::protobuf::MessageLite& message) const {
  if (fd_ < 0) return absl::UnavailableError("channel is closed");
  std::string body;
  if (!message.SerializeToString(&body)) {
    return absl::InternalError(absl::StrCat("cannot serialize ", message.GetTypeName()));
  }
  if (body.size() > kMaxFrameBytes) {
    return absl::InternalError(absl::StrCat(message.GetTypeName(), " of ", body.size(),
                                            " bytes exceeds the frame limit of ", kMaxFrameBytes));
  }
  const uint32_t size = static_cast<uint32_t>(body.size());
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  frame += body;
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t n = send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (n >= 0) {
      done += static_cast<size_t>(n);
    } else if (errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("send: ", strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::Status MessageChannel::Receive(google::protobuf::MessageLite* message,
                                     double timeout_s) const {
  if (fd_ < 0) return absl::UnavailableError("channel is closed");
  std::optional<Clock::time_point> deadline;
  if (timeout_s >= 0) {
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(timeout_s));
  }
  unsigned char header[4];
  bool got_any = false;
  RETURN_IF_ERROR(ReadExactly(fd_, reinterpret_cast<char*>(header), 4, deadline, &got_any));
  const uint32_t size =
      header[0] | (header[1] << 8) | (header[2] << 16) | (static_cast<uint32_t>(header[3]) << 24);
  if (size > kMaxFrameBytes) {
    return absl::DataLossError(
        absl::StrCat("frame of ", size, " bytes exceeds the limit of ", kMaxFrameBytes));
  }
  std::string body(size, '\0');
  RETURN_IF_ERROR(ReadExactly(fd_, body.data(), size, deadline, &got_any));
  if (!message->ParseFromString(body)) {
    return absl::DataLossError(absl::StrCat("frame does not parse as ", message->GetTypeName()));
  }
  return absl::OkStatus();
}

void MessageChannel::Shutdown() const {
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

absl::Status MakeChannelPair(MessageChannel* a, MessageChannel* b) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::UnavailableError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  *a = MessageChannel(fds[0]);
  *b = MessageChannel(fds[1]);
  return absl::OkStatus();
}

}  // namespace gemmprof::worker
