// The small vocabularies of the domain: recipes, passes, modes, run outcomes.
// Every enum has ToString (stable, lower-case, used on the wire, in the store and on
// the command line) and a Parse that returns std::nullopt for unknown text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gemmprof::core {

// A precision recipe (see DESIGN.md, "Recipes").
// kFp8Rowwise: E4M3 operands with one fp32 scale per row of each K-major operand (per
// token of the activation/gradient, per output channel of the weight), BF16 out.
// The serving recipes (fprop only; not in the default list, run when named):
// kInt8Rowwise: INT8 operands with one fp32 scale per token of the activation and per
// output channel of the weight, INT32 accumulation, BF16 out (W8A8).
// kW8a16 / kW4a16: weight-only. INT8 weights with one bf16 scale per output channel, or
// INT4 weights with one bf16 scale per group of `w4_group` along K (TimingOptions); BF16
// activations, BF16 out. The weight is prepared once, outside every timing.
enum class Recipe {
  kBf16,
  kFp8Current,
  kFp8Delayed,
  kFp8Block,
  kMxfp8,
  kNvfp4,
  kFp8Rowwise,
  kInt8Rowwise,
  kW8a16,
  kW4a16
};
// Training passes: Fprop Y = X W^T, Dgrad dX = dY W, Wgrad dW = dY^T X.
enum class Pass { kFprop, kDgrad, kWgrad };
// autocast: quantization inside the timing (a training step); prequant: only the GEMM is
// timed; dynamic: inference, the activation (or gradient) operands are quantized inside
// the timing and the weights once before it.
enum class Mode { kAutocast, kPrequant, kDynamic };
// How autocast quantization time is attributed (see issue text / DESIGN.md).
enum class Accounting { kTrainingStep, kPerGemm };
// L2 policy: hot = same buffers every iteration; cold = the L2 flushed before each sample by
// writing a buffer of twice its size, which leaves it full of dirty lines the timed launch
// writes back as it evicts them; clean = flushed by reading such a buffer, so the operands
// come from memory and the L2 holds nothing to write back (as a decode step finds it: the
// previous layer's weights, read, not written).
enum class L2Policy { kHot, kCold, kClean };
// Whether the policy flushes the L2 before each sample (cold, clean).
inline bool FlushesL2(L2Policy v) { return v != L2Policy::kHot; }
// Fast (non-split) FP8 accumulation: kDefault follows Transformer Engine's choice.
enum class FastAccum { kDefault, kOn, kOff };
// How delayed scaling turns the amax history into a scale (TE: max over history).
enum class AmaxAlgo { kMax, kMostRecent };
// What times an item: CUDA events around each launch (default), or the sum of the
// kernels' own durations from CUPTI (launch and graph gaps left out).
enum class TimingBackend { kEvents, kKernels };
// Which GEMMs share an item's batch of interleaved rounds (docs/measurement.md
// "Contexts"): kWorkload, only GEMMs that run together in the user's workload (one
// training step; one M of a sweep or a shape list); kIsolated, only the item's own GEMM
// (its recipes and modes).
enum class MeasureContext { kWorkload, kIsolated };
// How a grouped op's experts sit in memory and reach the kernel (core/routing.h):
// kContiguous, each expert's rows as routing gave them, the launch sized from the
// counts (prefill); kMasked, a fixed per-expert capacity with the counts beside it, so
// the launch shape stays the same whatever the counts (decode, CUDA graphs).
enum class MoeLayout { kContiguous, kMasked };

// Lifecycle of a job. kPartial: it ran to its end, but at least one item failed (a
// script must be able to tell it from kSucceeded). kFailed: the job itself could not
// go on (device warm-up, store failure).
enum class JobState { kQueued, kRunning, kSucceeded, kPartial, kFailed, kCancelled };
// Lifecycle / outcome of one item (one GEMM x recipe x mode).
enum class ItemStatus { kQueued, kRunning, kDone, kFailed, kNotSupported, kCancelled };
// Outcome of numerical verification, separate from the run status.
enum class Verification { kPassed, kIncorrect, kNotVerified, kNotSupported };

std::string_view ToString(Recipe v);
std::string_view ToString(Pass v);
std::string_view ToString(Mode v);
std::string_view ToString(Accounting v);
std::string_view ToString(L2Policy v);
std::string_view ToString(FastAccum v);
std::string_view ToString(AmaxAlgo v);
std::string_view ToString(TimingBackend v);
std::string_view ToString(MeasureContext v);
std::string_view ToString(MoeLayout v);
std::string_view ToString(JobState v);
std::string_view ToString(ItemStatus v);
std::string_view ToString(Verification v);

std::optional<Recipe> ParseRecipe(std::string_view s);
std::optional<Pass> ParsePass(std::string_view s);
std::optional<Mode> ParseMode(std::string_view s);
std::optional<Accounting> ParseAccounting(std::string_view s);
std::optional<L2Policy> ParseL2Policy(std::string_view s);
std::optional<FastAccum> ParseFastAccum(std::string_view s);
std::optional<AmaxAlgo> ParseAmaxAlgo(std::string_view s);
std::optional<TimingBackend> ParseTimingBackend(std::string_view s);
std::optional<MeasureContext> ParseMeasureContext(std::string_view s);
std::optional<MoeLayout> ParseMoeLayout(std::string_view s);
std::optional<JobState> ParseJobState(std::string_view s);
std::optional<ItemStatus> ParseItemStatus(std::string_view s);
std::optional<Verification> ParseVerification(std::string_view s);

// All recipes in canonical report order (bf16 first).
const std::vector<Recipe>& AllRecipes();
// What a job without --recipes runs: the training recipes, bf16 through fp8-rowwise (the
// serving recipes run when named).
const std::vector<Recipe>& DefaultRecipes();
// "bf16, fp8-current, ..." for error messages.
std::string RecipeList();
// Whether `recipe` is a serving recipe (int8-rowwise, w8a16, w4a16): inference only.
bool IsServingRecipe(Recipe recipe);
// Weight-only (w8a16, w4a16): the activation stays BF16, only the weight is quantized.
bool IsWeightOnly(Recipe recipe);
// Whether `recipe`'s training step shares quantized operands across passes (autocast,
// training-step accounting): fprop quantizes X and W and writes the transposed copies
// dgrad and wgrad read, dgrad quantizes dY and writes the copy wgrad reads. True for
// fp8-current, fp8-delayed, fp8-block, mxfp8 and nvfp4; false for bf16 (nothing to
// quantize), fp8-rowwise (each GEMM quantizes its own operands along its own K) and the
// serving recipes (fprop only).
bool SharesQuantizationAcrossPasses(Recipe recipe);
// Why `recipe` has no form for `pass` ("" when it has one): the serving recipes are fprop
// only. Every runner refuses such an item as not supported with this reason.
std::string PassUnsupportedReason(Recipe recipe, Pass pass);
// Whether a GEMM of `recipe` chooses between fast (non-split) and split FP8 accumulation:
// fp8-current, fp8-delayed and fp8-rowwise. bf16, mxfp8, nvfp4 and the serving recipes
// have no FP8 accumulation setting; fp8-block always splits (block scaling promotes its
// partial sums itself, as in Transformer Engine and PyTorch).
bool HasFastAccumChoice(Recipe recipe);
// The accumulation a GEMM of `recipe` in `pass` runs under `option`: true fast, false
// split, nullopt where the recipe has no FP8 accumulation setting. kDefault follows
// Transformer Engine: fprop fast, dgrad and wgrad split. fp8-block: false whatever the
// option.
std::optional<bool> ResolveFastAccum(Recipe recipe, Pass pass, FastAccum option);
// True for states a job never leaves.
bool IsTerminal(JobState s);
// True for item states that are final (done, failed, not_supported, cancelled).
bool IsFinal(ItemStatus s);

}  // namespace gemmprof::core
