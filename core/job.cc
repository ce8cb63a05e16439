#include "core/job.h"

#include <charconv>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gemmprof::core {

namespace {

// The shortest text that reads back as the same double: distinct values, distinct keys.
std::string Shortest(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

}  // namespace

std::string TimingOptions::CacheText() const {
  std::ostringstream os;
  os << "warmup=" << warmup_iters << ";iters=" << timed_iters << ";l2=" << ToString(l2)
     << ";autotune=" << autotune_k << ";seed=" << seed << ";acct=" << ToString(accounting)
     << ";fastacc=" << ToString(fast_accum) << ";amaxlen=" << amax_history_len
     << ";amaxalgo=" << ToString(amax_algo) << ";prec=" << Shortest(precision_target)
     << ";budget=" << Shortest(item_budget_s) << ";b2b="
     << b2b_count
     // The measuring method: results from before interleaved rounds (no marker) never
     // answer requests made after, whatever their other options.
     << ";method=rounds1";
  // Appended only when not the default, so results stored before keep their keys.
  if (timing_backend != TimingBackend::kEvents) os << ";timing=" << ToString(timing_backend);
  if (energy) os << ";energy";
  return os.str();
}

std::vector<Recipe> EffectiveRecipes(const JobSpec& spec) {
  if (spec.recipes.empty() && spec.variants.empty()) return DefaultRecipes();
  return spec.recipes;
}

std::vector<RecipeVariant> ReportedRecipes(const JobSpec& spec) {
  std::vector<RecipeVariant> out;
  for (Recipe r : EffectiveRecipes(spec)) out.emplace_back(r);
  out.insert(out.end(), spec.variants.begin(), spec.variants.end());
  return out;
}

std::vector<Mode> EffectiveModes(const JobSpec& spec) {
  if (!spec.modes.empty()) return spec.modes;
  if (spec.model.has_value() && !spec.model->sweep_m.empty()) return {Mode::kDynamic};
  return {Mode::kAutocast};
}

std::string QuantizationNote(const WorkItem& item) {
  std::vector<std::string> notes;
  const Pass pass = item.op.pass;
  if (item.mode == Mode::kDynamic && !IsServingRecipe(item.recipe)) {
    if (item.recipe == Recipe::kBf16) {
      notes.push_back("dynamic: bf16 quantizes nothing, so the GEMM alone is timed (as prequant)");
    } else if (pass == Pass::kWgrad) {
      notes.push_back(
          "dynamic: both operands (X^T and dY^T; wgrad reads no weight) quantized inside the "
          "timing");
    } else {
      notes.push_back(
          absl::StrCat("dynamic: ", pass == Pass::kFprop ? "the activation X" : "the gradient dY",
                       " quantized inside the timing; the weight quantized once, "
                       "before it"));
    }
  }
  if (IsWeightOnly(item.recipe)) {
    notes.push_back(absl::StrCat(std::string(ToString(item.recipe)),
                                 ": the weight quantized and packed once, before any timing "
                                 "(inference); the BF16 activation is not quantized"));
  } else if (item.recipe == Recipe::kInt8Rowwise) {
    notes.push_back(
        "int8-rowwise: the weight quantized per output channel once, before any timing "
        "(inference); the activation per token inside the timing unless prequant");
  }
  if (item.recipe == Recipe::kFp8Rowwise && pass != Pass::kFprop) {
    notes.push_back(absl::StrCat(
        "fp8-rowwise ", std::string(ToString(pass)),
        ": each operand quantized again from BF16 with one scale per row along this GEMM's own "
        "K (torchao's row-wise training recipe), E4M3 throughout"));
  }
  return absl::StrJoin(notes, "; ");
}

FastAccum EffectiveFastAccum(const WorkItem& item, FastAccum job_option) {
  return item.fast_accum == FastAccum::kDefault ? job_option : item.fast_accum;
}

std::string DescribeItem(const WorkItem& item) {
  const std::string shape = item.op.shape.ToString();
  std::string s = std::string(ToString(item.op.pass)) + " ";
  if (!item.op.name.empty() && item.op.name != shape) s += item.op.name + " ";
  s += shape;
  if (item.op.groups > 1) s += " x" + std::to_string(item.op.groups) + " groups";
  s += " " + std::string(ToString(item.recipe));
  if (item.fast_accum != FastAccum::kDefault)
    s += " (fast accumulation " + std::string(ToString(item.fast_accum)) + ")";
  return s + " " + std::string(ToString(item.mode));
}

}  // namespace gemmprof::core
