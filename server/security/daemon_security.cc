#include "server/security/daemon_security.h"

#include <spdlog/spdlog.h>

#include "server/security/listen_policy.h"

namespace gemmprof::security {

absl::StatusOr<DaemonSecurity> SetUpSecurity(const SecurityOptions& o) {
  const bool tls = !o.tls.cert_path.empty() || !o.tls.key_path.empty();
  if (o.tls.cert_path.empty() != o.tls.key_path.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together: give both");
  }
  if (!o.tls.client_ca_path.empty() && !tls) {
    return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  RETURN_IF_ERROR(CheckPlaintextListen(o.listen, tls, o.insecure));
  DaemonSecurity s;
  if (tls) {
    ASSIGN_OR_RETURN(s.tls, ReloadableTls::Create(o.tls));
  }
  if (o.tokens_path.empty()) {
    s.access = std::make_shared<AccessControl>();
  } else {
    ASSIGN_OR_RETURN(std::unique_ptr<AccessControl> access, AccessControl::FromFile(o.tokens_path));
    s.access = std::move(access);
  }
  return s;
}

void LogSecurity(const SecurityOptions& o, const DaemonSecurity& s) {
  const bool network = !IsLoopbackListen(o.listen);
  if (s.tls) {
    spdlog::info("TLS on: {}", s.tls->Describe());
    if (o.insecure) spdlog::warn("--insecure has no effect: TLS is on");
  } else if (network) {
    spdlog::warn(
        "serving PLAINTEXT on {} (--insecure): tokens, jobs and results cross the network "
        "unencrypted",
        o.listen);
  }
  if (s.access->enabled()) {
    spdlog::info("tokens: {} from {}", s.access->Summary(), o.tokens_path);
  } else if (network) {
    spdlog::warn("no --tokens: anyone who can reach {} may submit and cancel jobs", o.listen);
  }
}

absl::Status ReloadSecurity(const DaemonSecurity& s) {
  absl::Status first;
  if (s.tls) {
    if (absl::Status st = s.tls->Reload(); st.ok()) {
      spdlog::info("SIGHUP: TLS reloaded: {}", s.tls->Describe());
    } else {
      spdlog::error("SIGHUP: TLS not reloaded, the previous certificate stays in use: {}",
                    std::string(st.message()));
      first.Update(st);
    }
  }
  if (s.access->enabled()) {
    if (absl::StatusOr<std::string> summary = s.access->Reload(); summary.ok()) {
      spdlog::info("SIGHUP: tokens reloaded: {}", *summary);
    } else {
      spdlog::error("SIGHUP: tokens not reloaded, the previous ones stay in force ({}): {}",
                    s.access->Summary(), std::string(summary.status().message()));
      first.Update(summary.status());
    }
  }
  if (!s.tls && !s.access->enabled()) {
    spdlog::info("SIGHUP: nothing to reload (no --tls-cert, no --tokens)");
  }
  return first;
}

}  // namespace gemmprof::security
