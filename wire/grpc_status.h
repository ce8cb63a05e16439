// The one place that maps domain errors (absl::Status) to gRPC status codes.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace gemmprof::wire {

// absl and gRPC share the canonical code numbering; the message is kept as is. (The
// client reads a gRPC status with client/call_errors.h, which words connection, TLS and
// auth failures for the user.)
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace gemmprof::wire
