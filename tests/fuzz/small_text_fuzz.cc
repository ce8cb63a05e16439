// The short values a user types (client: --since, --server, --devices; core: --where).
// The first byte picks the parser, the rest is the text; each answers with a value or
// InvalidArgument, and what it accepts is inside its documented range.
#include "client/commands/since.h"
#include "client/commands/workload_flags.h"
#include "client/server_address.h"
#include "core/placement.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof;
  fuzz::InputReader in(data, size);
  const uint8_t which = in.Byte() % 4;
  const std::string text(in.Rest());
  switch (which) {
    case 0: {
      constexpr int64_t kNowMs = int64_t{1764633600} * 1000;  // 2025-12-02 00:00 UTC
      auto since = client::ParseSince(text, kNowMs);
      FUZZ_CHECK(since.ok() || absl::IsInvalidArgument(since.status()));
      break;
    }
    case 1: {
      auto address = client::ParseServerAddress(text);
      FUZZ_CHECK(address.ok() || absl::IsInvalidArgument(address.status()));
      if (address.ok()) FUZZ_CHECK(*address == text);
      break;
    }
    case 2: {
      auto devices = client::ParseDevices(text);
      FUZZ_CHECK(devices.ok() || absl::IsInvalidArgument(devices.status()));
      if (devices.ok()) {
        for (int32_t d : *devices) FUZZ_CHECK(d >= 0 && d <= 1023);
      }
      break;
    }
    default: {
      auto where = core::ParsePlacement("where", text);
      FUZZ_CHECK(where.ok() || absl::IsInvalidArgument(where.status()));
      if (where.ok()) {
        auto again = core::ParsePlacement("where", core::ToString(*where));
        FUZZ_CHECK(again.ok() && again->kind == where->kind && again->name == where->name);
      }
    }
  }
  return 0;
}
