// gemmprofd's security set-up from its flags, and the SIGHUP reload of it.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "server/security/access_control.h"
#include "server/security/reloadable_tls.h"

namespace gemmprof::security {

// The security flags of gemmprofd.
struct SecurityOptions {
  std::string listen;
  TlsFiles tls;             // all empty: no TLS
  bool insecure = false;    // --insecure: plaintext on a non-loopback address is allowed
  std::string tokens_path;  // --tokens; empty: every call allowed
};

struct DaemonSecurity {
  std::shared_ptr<ReloadableTls> tls;     // null without TLS
  std::shared_ptr<AccessControl> access;  // never null; disabled without --tokens
};

// Checks the flags together (TLS flags that go together, plaintext on the network
// without --insecure), loads and checks the TLS files and the tokens file. Each error
// is one line naming the flag (and the path or line).
absl::StatusOr<DaemonSecurity> SetUpSecurity(const SecurityOptions& options);

// Logs what is on (certificate, token counts) and warns about what is open:
// plaintext or no tokens on a non-loopback address, --insecure that has no effect.
void LogSecurity(const SecurityOptions& options, const DaemonSecurity& security);

// SIGHUP: rereads the TLS files and the tokens file. A part that fails keeps its
// previous state and logs an error naming the flag, path or line; the other part
// still reloads. Returns the first error (OK when everything reloaded).
absl::Status ReloadSecurity(const DaemonSecurity& security);

}  // namespace gemmprof::security
