// Bearer tokens with roles, as gemmprofd --tokens reads them. A tokens file holds one
// token per line, `NAME ROLE SHA256HEX` (the SHA-256 of the token, in hex); `#` starts a
// comment, blank lines are skipped. Only digests are kept, never the tokens themselves.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace gemmprof::security {

// What a token may do. Each role includes the ones before it: read < submit < admin.
enum class Role {
  kRead = 0,    // list, get, watch, report, query, devices, plan
  kSubmit = 1,  // read + submit jobs + cancel its own jobs
  kAdmin = 2,   // everything, cancel any job
};
inline constexpr char kValidRoles[] = "read, submit, admin";

std::string_view ToString(Role role);
std::optional<Role> ParseRole(std::string_view text);

struct TokenEntry {
  std::string name;  // shown in logs and job listings; never a secret
  Role role = Role::kRead;
  std::string sha256_hex;  // lower case, 64 digits
  int line = 0;            // where it came from in the file
};

// An immutable set of tokens. Thread-safe (const).
class TokenTable {
 public:
  // Parses the text of a tokens file. `source` names the file in errors, which read
  // "<source>:<line>: <problem>" and never quote a digest or a token.
  // InvalidArgument on any bad line, duplicate name or digest, or when no token is left.
  static absl::StatusOr<TokenTable> Parse(std::string_view text, std::string_view source);
  // Reads and parses `path`. InvalidArgument naming the path when it cannot be read.
  static absl::StatusOr<TokenTable> Load(const std::string& path);

  // The entry whose digest is SHA-256(token), or null. Every entry is compared, in
  // constant time, so the time taken does not tell how close a guess came.
  const TokenEntry* Find(std::string_view token) const;

  const std::vector<TokenEntry>& entries() const { return entries_; }
  // "3 tokens (1 admin, 1 submit, 1 read)".
  std::string Summary() const;

 private:
  std::vector<TokenEntry> entries_;
};

// Longest token name; names are [A-Za-z0-9._@+-].
inline constexpr size_t kMaxTokenNameLength = 64;

}  // namespace gemmprof::security
