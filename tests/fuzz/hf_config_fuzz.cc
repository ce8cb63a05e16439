// config.json (core/hf_config.h), as `submit --model` and the daemon read it: the first
// four bytes give the micro batch and the sequence length (1..256 and 1..65536), the rest
// is the file. A config that parses and validates derives a plan whose every GEMM is
// inside the limits, within the time and memory a plan call may take.
#include "core/derive.h"
#include "core/hf_config.h"
#include "core/limits.h"
#include "core/validation.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gemmprof::core;
  gemmprof::fuzz::InputReader in(data, size);
  const int64_t micro_batch = 1 + in.Byte();
  const int64_t sequence = 1 + in.U16();
  (void)in.Byte();
  auto parsed = ParseHfConfigJson(in.Rest(), "fuzz.json");
  if (!parsed.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(parsed.status()));
    return 0;
  }
  ModelConfig config = parsed->config;
  config.micro_batch_size = micro_batch;
  config.sequence_length = sequence;
  if (!ValidateModelConfig(config).ok()) return 0;
  JobSpec spec;
  spec.model = config;
  auto plan = DerivePlan(spec);
  if (!plan.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(plan.status()));
    return 0;
  }
  FUZZ_CHECK(!plan->ops.empty());
  for (const GemmOp& op : plan->ops) {
    FUZZ_CHECK(op.shape.m >= 1 && op.shape.m <= kMaxDim);
    FUZZ_CHECK(op.shape.k >= 1 && op.shape.k <= kMaxDim);
    FUZZ_CHECK(op.shape.n >= 1 && op.shape.n <= kMaxDim);
    FUZZ_CHECK(op.groups >= 1);
    FUZZ_CHECK(op.group_tokens.empty() ||
               static_cast<int64_t>(op.group_tokens.size()) == op.groups);
    for (int64_t t : op.group_tokens) FUZZ_CHECK(t >= 0 && t <= op.TokenDim());
  }
  return 0;
}
