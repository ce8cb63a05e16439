// Whether gemmprofd may serve plaintext on the address it was given.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::security {

// True when the host part of `listen` ("host:port", "[v6]:port") can be reached only
// from this machine: 127.0.0.0/8, ::1, localhost, or a unix: socket. Anything else,
// including 0.0.0.0, [::] and every other name, is not.
bool IsLoopbackListen(std::string_view listen);

// FailedPrecondition, one line naming the way out, when `listen` is not loopback and
// neither TLS nor `insecure` is on.
absl::Status CheckPlaintextListen(const std::string& listen, bool tls, bool insecure);

}  // namespace gemmprof::security
