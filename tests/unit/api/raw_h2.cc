#include "tests/unit/api/raw_h2.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

namespace gemmprof::testing {
namespace {

constexpr uint8_t kData = 0x0, kHeaders = 0x1, kRstStream = 0x3, kSettings = 0x4, kGoAway = 0x7;
constexpr uint8_t kEndStream = 0x1, kEndHeaders = 0x4, kAck = 0x1;

std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
  std::string f;
  const uint32_t n = static_cast<uint32_t>(payload.size());
  f += static_cast<char>(n >> 16);
  f += static_cast<char>(n >> 8);
  f += static_cast<char>(n);
  f += static_cast<char>(type);
  f += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>(stream >> shift);
  return f + payload;
}

// HPACK integer with a 7-bit prefix and the H (Huffman) bit clear.
std::string Length(size_t n) {
  std::string out;
  if (n < 127) return std::string(1, static_cast<char>(n));
  out += static_cast<char>(127);
  n -= 127;
  while (n >= 128) {
    out += static_cast<char>((n % 128) + 128);
    n /= 128;
  }
  return out + static_cast<char>(n);
}

// "Literal header field without indexing, new name".
std::string Literal(const std::string& name, const std::string& value) {
  return std::string(1, '\0') + Length(name.size()) + name + Length(value.size()) + value;
}

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads frames until the stream ends, the peer closes, or the deadline passes.
void ReadResponse(int fd, RawResponse* r) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string buf;
  while (!r->ended && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char chunk[16384];
    const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buf.append(chunk, static_cast<size_t>(n));
    while (buf.size() >= 9) {
      const auto* b = reinterpret_cast<const uint8_t*>(buf.data());
      const size_t len = (size_t{b[0]} << 16) | (size_t{b[1]} << 8) | b[2];
      if (buf.size() < 9 + len) break;
      const uint8_t type = b[3], flags = b[4];
      const std::string payload = buf.substr(9, len);
      buf.erase(0, 9 + len);
      if (type == kSettings && !(flags & kAck)) SendAll(fd, Frame(kSettings, kAck, 0, ""));
      if (type == kHeaders) {
        r->header_bytes += payload;
        if (flags & kEndStream) r->ended = true;
      }
      if (type == kRstStream || type == kGoAway) r->ended = r->reset = true;
    }
  }
}

}  // namespace

int RawResponse::GrpcStatus() const {
  const std::string key = "grpc-status";
  const size_t at = header_bytes.find(key);
  if (at == std::string::npos || at + key.size() >= header_bytes.size()) return -1;
  const size_t len = static_cast<uint8_t>(header_bytes[at + key.size()]);
  if (len == 0 || len > 3 || at + key.size() + 1 + len > header_bytes.size()) return -1;
  try {
    return std::stoi(header_bytes.substr(at + key.size() + 1, len));
  } catch (...) {
    return -1;
  }
}

bool RawResponse::HeadersContain(const std::string& text) const {
  return header_bytes.find(text) != std::string::npos;
}

RawResponse RawGrpcCall(int port, const std::string& path,
                        const std::vector<std::pair<std::string, std::string>>& headers) {
  RawResponse r;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) close(fd);
    return r;
  }
  r.connected = true;
  std::string block = Literal(":method", "POST") + Literal(":scheme", "http") +
                      Literal(":path", path) + Literal(":authority", "localhost") +
                      Literal("content-type", "application/grpc") + Literal("te", "trailers");
  for (const auto& [name, value] : headers) block += Literal(name, value);
  const std::string empty_message("\0\0\0\0\0", 5);  // not compressed, length 0
  const std::string out = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                          Frame(kSettings, 0, 0, "") + Frame(kHeaders, kEndHeaders, 1, block) +
                          Frame(kData, kEndStream, 1, empty_message);
  if (SendAll(fd, out)) ReadResponse(fd, &r);
  close(fd);
  return r;
}

}  // namespace gemmprof::testing
