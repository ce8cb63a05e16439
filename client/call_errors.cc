#include "client/call_errors.h"

#include <string>

namespace gemmprof::client {
namespace {

bool Has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// gRPC prefixes connection errors with "failed to connect to all addresses; last error:
// UNKNOWN: ipv4:10.0.0.1:50051: "; the part after the address is what the user needs.
std::string_view Reason(std::string_view message) {
  for (std::string_view marker : {"Ssl handshake failed: ", "Peer name "}) {
    const size_t at = message.find(marker);
    if (at != std::string_view::npos) return message.substr(at);
  }
  return message;
}

// The OpenSSL reason at the end of "...:SSL routines::certificate verify failed".
std::string_view SslReason(std::string_view message) {
  const size_t at = message.rfind("::");
  return at == std::string_view::npos ? Reason(message) : message.substr(at + 2);
}

// True for the UNAVAILABLE answers gemmprofd itself gives, as opposed to gRPC's own
// words for a connection that failed.
bool FromDaemon(std::string_view message) {
  return Has(message, "no device is available") || Has(message, "gemmprofd is shutting down");
}

absl::Status Unreachable(std::string_view message, const ConnectionSettings& s) {
  const std::string at = "gemmprofd at " + s.address;
  if (Has(message, "andshake failed")) {
    if (Has(message, "certificate verify failed"))
      return absl::UnavailableError(
          "TLS handshake with " + at + " failed: its certificate is not trusted (" +
          std::string(SslReason(message)) + "); give the CA that signed it with --tls-ca " +
          "(or GEMMPROF_TLS_CA, tls_ca in the config file)");
    if (Has(message, "wrong version number") || Has(message, "packet length too long") ||
        Has(message, "http request"))
      return absl::UnavailableError(
          "TLS handshake with " + at + " failed: the daemon does not speak TLS (" +
          std::string(SslReason(message)) + "); drop --tls/--tls-ca, or start gemmprofd " +
          "with --tls-cert and --tls-key");
    return absl::UnavailableError("TLS handshake with " + at + " failed (" +
                                  std::string(SslReason(message)) +
                                  "); check --tls-ca, --tls-cert and --tls-key");
  }
  if (Has(message, "Peer name") && Has(message, "not in peer certificate"))
    return absl::UnavailableError("TLS: the certificate of " + at +
                                  " does not hold the name you connect to (" +
                                  std::string(Reason(message)) +
                                  "); connect by a name it holds or give --tls-server-name NAME");
  const bool closed =
      Has(message, "Socket closed") || Has(message, "Connection reset") || Has(message, "EOF");
  if (closed && !s.tls)
    return absl::UnavailableError(
        "cannot reach " + at + " (" + std::string(message) +
        "); the daemon closed the connection at once: if it serves TLS, give --tls-ca CA.pem "
        "(or --tls)");
  if (closed && s.tls_cert_pem.empty())
    return absl::UnavailableError(
        "cannot reach " + at + " (" + std::string(message) +
        "); the daemon closed the TLS connection: if it requires a client certificate, give "
        "--tls-cert and --tls-key");
  // The daemon itself answers UNAVAILABLE too ("no device is available to run jobs: ...",
  // "gemmprofd is shutting down"): it was reached, so its words are shown as they are.
  if (FromDaemon(message)) return absl::UnavailableError(std::string(message));
  // A shared PostgreSQL store that went away: the daemon answered, its store did not.
  if (Has(message, "PostgreSQL at ")) {
    return absl::UnavailableError(at + " is up, but its result store is not: " +
                                  std::string(message));
  }
  return absl::UnavailableError("cannot reach " + at + " (" + std::string(message) + ")");
}

}  // namespace

absl::Status DescribeCallError(absl::StatusCode code, std::string_view message,
                               const ConnectionSettings& settings) {
  const std::string reason(message);
  switch (code) {
    case absl::StatusCode::kOk:
      return absl::OkStatus();
    case absl::StatusCode::kUnauthenticated:
      if (settings.token.empty())
        return absl::UnauthenticatedError("unauthenticated: " + reason +
                                          "; give a token with --token-file or GEMMPROF_TOKEN");
      return absl::UnauthenticatedError("unauthenticated: " + reason + " (the token from " +
                                        settings.token_source + " was refused)");
    case absl::StatusCode::kPermissionDenied:
      return absl::PermissionDeniedError("permission denied: " + reason);
    case absl::StatusCode::kUnavailable:
      return Unreachable(message, settings);
    case absl::StatusCode::kDeadlineExceeded:
      // gRPC's own deadline says "Deadline Exceeded"; a daemon's message is kept as is.
      if (message.empty() || message == "Deadline Exceeded")
        return absl::DeadlineExceededError("no answer from gemmprofd at " + settings.address +
                                           " within " + std::to_string(settings.timeout_s) +
                                           " s; is it reachable? (--timeout SECONDS)");
      return absl::DeadlineExceededError(reason);
    default:
      return absl::Status(code, reason);
  }
}

}  // namespace gemmprof::client
