// A SubmitJobRequest from the wire, as the daemon's SubmitJob and PlanJob take it: bytes
// that parse as the message go through the conversion (wire/convert.h), validation and
// the plan the queue builds (derive.h). Whatever a caller sends, the daemon answers with
// a plan or InvalidArgument, within the time and memory one call may take; an accepted
// spec converts back to a request that reads as the same spec.
#include "core/derive.h"
#include "core/limits.h"
#include "tests/fuzz/fuzz_check.h"
#include "wire/convert.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof;
  wire::v1::SubmitJobRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto spec = wire::FromProto(request);
  if (!spec.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(spec.status()));
    return 0;
  }
  // As JobQueue::Plan: DerivePlan validates first.
  auto plan = core::DerivePlan(*spec);
  if (!plan.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(plan.status()));
    return 0;
  }
  const std::vector<core::WorkItem> items =
      core::ExpandItems(*plan, core::EffectiveRecipes(*spec), core::EffectiveModes(*spec),
                        spec->variants, spec->timing.fast_accum);
  FUZZ_CHECK(!items.empty());
  auto again = wire::FromProto(wire::ToProto(*spec));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(wire::ToProto(*again).SerializeAsString() ==
             wire::ToProto(*spec).SerializeAsString());
  return 0;
}
