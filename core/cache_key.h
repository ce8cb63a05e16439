// The result-cache key (DESIGN.md, "Storage"): an item measured before on the same
// device model, sm, driver and cuBLASLt version, with the same shape, pass, recipe,
// mode and timing options, is answered from the store, as long as the GEMM engine that
// measured it is the one running now (kGemmEngineRevision).
#pragma once

#include <string>

#include "core/job.h"
#include "core/result.h"

namespace gemmprof::core {

// Raised whenever the kernels an item may run change (a new GEMM library or form among
// an item's candidates), so that a result measured by an older engine is measured again
// rather than served. 2: CUTLASS fp8-block (grouped, batched, batched pingpong) and
// fp8-rowwise candidates, chosen per item by measurement against cuBLASLt; cuBLASLt's
// heuristic answer for a 1 MiB workspace timed against its 32 MiB answer where the two
// differ. 3: the batched forms with the overlapped promotion (sm_90a), and the grouped
// form's sm_100a build as the CUTLASS candidate on sm_100. 4: the overlapped forms
// without a cluster (1x1x1 instead of 1x2x1). 5: the overlapped forms on both schedules
// for both scale layouts. 6: the cooperative one for 1x128 scales withdrawn. 7: the
// pingpong overlapped form for 1x128 scales stores its whole tile in one epilogue step.
// 8: the pingpong overlapped form for 128x128 scales stores its whole tile from a buffer
// per warp group and waits for the store only before the group's next epilogue.
// 9: the concurrent pingpong form for 1x128 scales (K loops of up to 4 tiles at once).
// 10: measured in a context that has launched kernels on a second stream, as
// applications do (each kernel starts 0.3-0.4 us later than in a one-stream context).
// 11: fp8-rowwise experts in one CUTLASS launch (batched or grouped), CUTLASS row-wise
// candidates for dgrad and wgrad (promoted accumulation), and routed experts (a
// uniform op's experts now measured as before, uneven ones at their own tokens).
inline constexpr int kGemmEngineRevision = 11;

// The engine text in the key: the revision, and the CUTLASS version where this build
// has the CUTLASS candidates ("10+cutlass-4.2.0"; "10" without), so a build without them
// is never served a result a build with them measured, nor the reverse.
std::string GemmEngine();

// Deterministic text key; equal keys mean interchangeable measurements. A routed op's
// group_tokens and a grouped op's masked layout are part of it. `context` is the
// item's measurement context (ContextOf, core/group.h): a GEMM measured beside others of
// another workload ran in another power state, so it answers only its own context.
std::string CacheKey(const DeviceInfo& device, const WorkItem& item, const TimingOptions& timing,
                     const std::string& context);

}  // namespace gemmprof::core
