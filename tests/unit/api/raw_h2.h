// A minimal HTTP/2 client for tests that must put bytes on the wire that no gRPC client
// would send (header values that are not ASCII): one unary gRPC call per connection,
// headers sent as HPACK literals, the response kept as raw bytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gemmprof::testing {

struct RawResponse {
  bool connected = false;
  bool ended = false;        // the server ended the stream (trailers, RST_STREAM or GOAWAY)
  bool reset = false;        // RST_STREAM or GOAWAY
  std::string header_bytes;  // HPACK blocks of the server's HEADERS frames, concatenated

  // The value of `grpc-status` in the trailers, -1 if it cannot be read: gRPC's encoder
  // sends it as a literal on a fresh connection, so no HPACK state is needed.
  int GrpcStatus() const;
  // Whether `text` appears in the header blocks (grpc-message is sent as a literal).
  bool HeadersContain(const std::string& text) const;
};

// Sends one call of `path` ("/gemmprof.v1.GemmProf/ListJobs") with an empty request
// message and the extra `headers` (any bytes), and reads until the stream ends or
// 10 s pass.
RawResponse RawGrpcCall(int port, const std::string& path,
                        const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace gemmprof::testing
