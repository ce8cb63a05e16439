// The one mapping of domain errors to gRPC statuses: code and message as they are.
#include "wire/grpc_status.h"

#include <gtest/gtest.h>

namespace gemmprof::wire {
namespace {

TEST(GrpcStatusTest, CodeAndMessageCarryOver) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  for (const absl::Status& s :
       {absl::InvalidArgumentError("recipe: unknown value 'fp3'"), absl::NotFoundError("job 9"),
        absl::FailedPreconditionError("job 9 runs on node-b"),
        absl::PermissionDeniedError("token 'ci' may not cancel"),
        absl::ResourceExhaustedError("5 watches"), absl::UnavailableError("store down")}) {
    const grpc::Status g = ToGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(g.error_code()), static_cast<int>(s.code())) << s;
    EXPECT_EQ(g.error_message(), s.message());
  }
}

}  // namespace
}  // namespace gemmprof::wire
