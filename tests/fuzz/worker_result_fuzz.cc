// A worker's answer to a measurement call (device/worker/protocol.h), as the daemon reads
// it from a worker that may be failing: any bytes that parse as a GroupResult convert to
// outcomes that match the request item for item, or to one Internal error; never a crash.
#include "device/worker/protocol.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

gemmprof::core::GroupRequest Request() {
  using namespace gemmprof::core;
  GroupRequest request;
  request.group_uid = "fuzz/j1/s0/0";
  for (int64_t id = 1; id <= 3; ++id) {
    WorkItem item;
    item.id = id;
    item.seq = static_cast<int32_t>(id - 1);
    item.op.name = "qkv";
    item.op.shape = {64, 128, 256};
    request.items.push_back(item);
  }
  return request;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof;
  static const core::GroupRequest request = Request();
  worker::wp::GroupResult result;
  if (!result.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto outcome = worker::FromGroupResult(result, request);
  if (!outcome.ok()) {
    FUZZ_CHECK(absl::IsInternal(outcome.status()));
    return 0;
  }
  FUZZ_CHECK(outcome->outcomes.size() == request.items.size());
  for (size_t i = 0; i < request.items.size(); ++i) {
    FUZZ_CHECK(outcome->outcomes[i].item_id == request.items[i].id);
    if (outcome->outcomes[i].status.ok()) FUZZ_CHECK(outcome->outcomes[i].measurement.has_value());
  }
  return 0;
}
