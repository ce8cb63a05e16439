// The workload and timing flags of `submit` and `plan` (client/commands/workload_flags.h):
// the input is the arguments, one per line. Flags that CLI11 accepts build a spec or one
// InvalidArgument; a spec they build is what the daemon accepts and derives (DerivePlan
// validates it), and it crosses the wire unchanged. --model is left out: it reads a file.
#include <CLI/CLI.hpp>

#include <sstream>

#include "client/commands/workload_flags.h"
#include "core/derive.h"
#include "tests/fuzz/fuzz_check.h"
#include "wire/convert.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof;
  fuzz::InputReader in(data, size);
  std::vector<std::string> args;
  while (!in.done() && args.size() < 64) {
    std::string arg(in.Until('\n'));
    if (arg.rfind("--model", 0) == 0) return 0;
    args.push_back(std::move(arg));
  }
  CLI::App app("fuzz");
  client::WorkloadFlags flags;
  flags.Register(app);
  try {
    // CLI11 takes the arguments last to first.
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::ParseError&) {
    return 0;
  }
  std::ostringstream warnings;
  auto spec = flags.BuildSpec(warnings);
  if (!spec.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(spec.status()));
    return 0;
  }
  // DerivePlan validates first, as the daemon does (ValidateJobSpec).
  auto plan = core::DerivePlan(*spec);
  FUZZ_CHECK(plan.ok());
  auto sent = wire::FromProto(wire::ToProto(*spec));
  FUZZ_CHECK(sent.ok());
  FUZZ_CHECK(wire::ToProto(*sent).SerializeAsString() == wire::ToProto(*spec).SerializeAsString());
  return 0;
}
