// Who may call what on gemmprofd: bearer tokens with roles (gemmprofd --tokens), checked
// in every handler of the GemmProf service. Without a tokens file every call is allowed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/security/tokens.h"

namespace gemmprof::security {

// The token of a call, from the values of its `authorization` metadata (normally one).
// Unauthenticated, with a message that never quotes the value, when there is none,
// several, or one that is not "Bearer <token>" with a token of 1..1024 visible ASCII
// characters. The scheme is matched without regard to case.
absl::StatusOr<std::string_view> BearerToken(const std::vector<std::string_view>& values);

// Longest token accepted in a header.
inline constexpr size_t kMaxTokenLength = 1024;

// Who made a call.
struct Caller {
  std::string name;  // the token's name; empty when the daemon runs without tokens
  Role role = Role::kAdmin;
};

// The role an RPC of gemmprof.v1.GemmProf needs ("SubmitJob" -> submit). Methods not
// in the table need admin, so a new RPC is closed until someone decides otherwise.
Role RequiredRole(std::string_view method);

// Thread-safe: the handlers read it while SIGHUP reloads it.
class AccessControl {
 public:
  // Everything allowed; Authorize returns an unnamed admin.
  AccessControl() = default;
  // Loads the tokens file; Reload reads it again.
  static absl::StatusOr<std::unique_ptr<AccessControl>> FromFile(std::string path);

  // False without a tokens file.
  bool enabled() const { return !path_.empty(); }

  // Authenticates a call to `method` from its authorization values and checks its role
  // against RequiredRole(method). Unauthenticated ("no token: ...", "unknown token",
  // malformed headers), PermissionDenied ("token 'alice' has role read; SubmitJob needs
  // role submit").
  absl::StatusOr<Caller> Authorize(const std::vector<std::string_view>& authorization,
                                   std::string_view method) const;

  // Rereads the tokens file. On any error the previous tokens stay in force and the
  // error (naming the file and line) is returned. Returns the new Summary().
  absl::StatusOr<std::string> Reload();
  // "3 tokens (1 admin, 1 submit, 1 read)", or "no tokens file" when disabled.
  std::string Summary() const;

 private:
  std::string path_;
  mutable std::mutex mu_;
  std::shared_ptr<const TokenTable> table_;
};

// Whether `caller` may cancel job `job_id`, submitted by `owner` (empty: unknown).
// Admins and callers of a daemon without tokens cancel anything; a submit token only
// its own jobs (PermissionDenied naming the owner otherwise).
absl::Status CheckCanCancel(const Caller& caller, int64_t job_id, const std::string& owner);

}  // namespace gemmprof::security
