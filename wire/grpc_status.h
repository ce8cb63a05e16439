// The one place that maps domain errors (absl::Status) to gRPC status codes.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace gemmprof::wire {

// absl and gRPC share the canonical code numbering; the message is kept as is.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace gemmprof::wire
