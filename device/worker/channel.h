// Length-prefixed protobuf messages over a stream socket: the framing between gemmprofd
// and its worker processes. A frame is a 4-byte little-endian length and that many bytes
// of a serialized message.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>

#include "core/status.h"

namespace gemmprof::worker {

// Frames above this are refused as corrupt (a measurement is a few hundred bytes).
inline constexpr uint32_t kMaxFrameBytes = uint32_t{16} << 20;

// One end of a channel. Owns its descriptor. Send and Receive may run in two threads at
// once; two concurrent Sends (or Receives) may not. Shutdown may be called from any thread.
class MessageChannel {
 public:
  MessageChannel() = default;
  // Takes ownership of `fd` (a connected stream socket).
  explicit MessageChannel(int fd) : fd_(fd) {}
  ~MessageChannel();
  MessageChannel(MessageChannel&& other) noexcept;
  MessageChannel& operator=(MessageChannel&& other) noexcept;
  MessageChannel(const MessageChannel&) = delete;
  MessageChannel& operator=(const MessageChannel&) = delete;

  // Writes one frame. Unavailable when the peer has gone; never raises SIGPIPE.
  absl::Status Send(const google::protobuf::MessageLite& message) const;
  // Reads one frame into `message`, waiting at most `timeout_s` seconds (negative: no
  // limit). DeadlineExceeded when the time ran out before a frame began (a frame that
  // has begun is read to its end, so a short timeout can poll), Unavailable when the peer
  // closed the channel, DataLoss for a frame that is oversized, cut short, stalls 5 s
  // inside, or does not parse.
  absl::Status Receive(google::protobuf::MessageLite* message, double timeout_s) const;
  // Ends both directions: a Receive blocked in another thread returns Unavailable, and
  // the peer reads end-of-file. The descriptor stays open until destruction, so its
  // number cannot be reused under a concurrent call.
  void Shutdown() const;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// A connected pair of stream sockets (close-on-exec), as two channels.
absl::Status MakeChannelPair(MessageChannel* a, MessageChannel* b);

}  // namespace gemmprof::worker
