// Bearer tokens as both sides see them: how a token is made, hashed and carried.
// The daemon stores only SHA-256 digests (a tokens file line is `NAME ROLE SHA256HEX`);
// the token itself is never written to a file by the daemon, nor logged.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::wire {

// The gRPC metadata key the token travels in, as "Bearer <token>".
inline constexpr char kAuthorizationHeader[] = "authorization";
inline constexpr char kBearerPrefix[] = "Bearer ";
// Every token starts with this, so a leaked one is easy to recognise in a scan.
inline constexpr char kTokenPrefix[] = "gpt_";

// A fresh token: kTokenPrefix followed by 43 base64url characters (256 random bits from
// the operating system's CSPRNG). Internal when the random source fails.
absl::StatusOr<std::string> NewToken();

// Lower-case hex SHA-256 of `token` (64 characters).
std::string TokenSha256Hex(std::string_view token);

// True when `s` is 64 hex digits (either case).
bool IsSha256Hex(std::string_view s);

}  // namespace gemmprof::wire
