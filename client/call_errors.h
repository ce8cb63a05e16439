// What a failed call tells the user: the daemon's status turned into one line naming
// the cause and what to do (a token to give, a CA to trust, TLS to turn on or off).
// Pure: the transport passes the gRPC code and message it got.
#pragma once

#include <string_view>

#include "client/connection.h"
#include "core/status.h"

namespace gemmprof::client {

// `code` and `message` as gRPC reported them. Returns:
// - UNAUTHENTICATED: "unauthenticated: <reason>; give a token with --token-file or
//   GEMMPROF_TOKEN" (or naming the token that was refused);
// - PERMISSION_DENIED: "permission denied: <reason>";
// - UNAVAILABLE: "cannot reach gemmprofd at ADDRESS (...)", or a TLS line: handshake
//   failed (untrusted certificate -> --tls-ca; wrong name -> --tls-server-name; a
//   plaintext daemon -> drop TLS), or a plaintext client closed at once by a TLS daemon;
// - DEADLINE_EXCEEDED from the deadline itself: no answer within --timeout;
// - anything else: the daemon's status as is.
// The token never appears in the message.
absl::Status DescribeCallError(absl::StatusCode code, std::string_view message,
                               const ConnectionSettings& settings);

}  // namespace gemmprof::client
