#include "core/enums.h"

#include <array>
#include <utility>

namespace gemmprof::core {
namespace {

template <typename E, size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

constexpr Names<Recipe, 10> kRecipeNames{{{Recipe::kBf16, "bf16"},
                                          {Recipe::kFp8Current, "fp8-current"},
                                          {Recipe::kFp8Delayed, "fp8-delayed"},
                                          {Recipe::kFp8Block, "fp8-block"},
                                          {Recipe::kMxfp8, "mxfp8"},
                                          {Recipe::kNvfp4, "nvfp4"},
                                          {Recipe::kFp8Rowwise, "fp8-rowwise"},
                                          {Recipe::kInt8Rowwise, "int8-rowwise"},
                                          {Recipe::kW8a16, "w8a16"},
                                          {Recipe::kW4a16, "w4a16"}}};
constexpr Names<Pass, 3> kPassNames{
    {{Pass::kFprop, "fprop"}, {Pass::kDgrad, "dgrad"}, {Pass::kWgrad, "wgrad"}}};
constexpr Names<Mode, 3> kModeNames{
    {{Mode::kAutocast, "autocast"}, {Mode::kPrequant, "prequant"}, {Mode::kDynamic, "dynamic"}}};
constexpr Names<Accounting, 2> kAccountingNames{
    {{Accounting::kTrainingStep, "training-step"}, {Accounting::kPerGemm, "per-gemm"}}};
constexpr Names<L2Policy, 3> kL2Names{
    {{L2Policy::kHot, "hot"}, {L2Policy::kCold, "cold"}, {L2Policy::kClean, "clean"}}};
constexpr Names<FastAccum, 3> kFastAccumNames{
    {{FastAccum::kDefault, "default"}, {FastAccum::kOn, "on"}, {FastAccum::kOff, "off"}}};
constexpr Names<AmaxAlgo, 2> kAmaxAlgoNames{
    {{AmaxAlgo::kMax, "max"}, {AmaxAlgo::kMostRecent, "most_recent"}}};
constexpr Names<TimingBackend, 2> kTimingBackendNames{
    {{TimingBackend::kEvents, "events"}, {TimingBackend::kKernels, "kernels"}}};
constexpr Names<MeasureContext, 2> kMeasureContextNames{
    {{MeasureContext::kWorkload, "workload"}, {MeasureContext::kIsolated, "isolated"}}};
constexpr Names<MoeLayout, 2> kMoeLayoutNames{
    {{MoeLayout::kContiguous, "contiguous"}, {MoeLayout::kMasked, "masked"}}};
constexpr Names<JobState, 6> kJobStateNames{{{JobState::kQueued, "queued"},
                                             {JobState::kRunning, "running"},
                                             {JobState::kSucceeded, "succeeded"},
                                             {JobState::kPartial, "partial"},
                                             {JobState::kFailed, "failed"},
                                             {JobState::kCancelled, "cancelled"}}};
constexpr Names<ItemStatus, 6> kItemStatusNames{{{ItemStatus::kQueued, "queued"},
                                                 {ItemStatus::kRunning, "running"},
                                                 {ItemStatus::kDone, "done"},
                                                 {ItemStatus::kFailed, "failed"},
                                                 {ItemStatus::kNotSupported, "not_supported"},
                                                 {ItemStatus::kCancelled, "cancelled"}}};
constexpr Names<Verification, 4> kVerificationNames{
    {{Verification::kPassed, "passed"},
     {Verification::kIncorrect, "incorrect"},
     {Verification::kNotVerified, "not_verified"},
     {Verification::kNotSupported, "not_supported"}}};

template <typename E, size_t N>
std::string_view Lookup(const Names<E, N>& names, E v) {
  for (const auto& [e, s] : names)
    if (e == v) return s;
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> Find(const Names<E, N>& names, std::string_view s) {
  for (const auto& [e, name] : names)
    if (name == s) return e;
  return std::nullopt;
}

}  // namespace

std::string_view ToString(Recipe v) { return Lookup(kRecipeNames, v); }
std::string_view ToString(Pass v) { return Lookup(kPassNames, v); }
std::string_view ToString(Mode v) { return Lookup(kModeNames, v); }
std::string_view ToString(Accounting v) { return Lookup(kAccountingNames, v); }
std::string_view ToString(L2Policy v) { return Lookup(kL2Names, v); }
std::string_view ToString(FastAccum v) { return Lookup(kFastAccumNames, v); }
std::string_view ToString(AmaxAlgo v) { return Lookup(kAmaxAlgoNames, v); }
std::string_view ToString(TimingBackend v) { return Lookup(kTimingBackendNames, v); }
std::string_view ToString(MeasureContext v) { return Lookup(kMeasureContextNames, v); }
std::string_view ToString(MoeLayout v) { return Lookup(kMoeLayoutNames, v); }
std::string_view ToString(JobState v) { return Lookup(kJobStateNames, v); }
std::string_view ToString(ItemStatus v) { return Lookup(kItemStatusNames, v); }
std::string_view ToString(Verification v) { return Lookup(kVerificationNames, v); }

std::optional<Recipe> ParseRecipe(std::string_view s) { return Find(kRecipeNames, s); }
std::optional<Pass> ParsePass(std::string_view s) { return Find(kPassNames, s); }
std::optional<Mode> ParseMode(std::string_view s) { return Find(kModeNames, s); }
std::optional<Accounting> ParseAccounting(std::string_view s) { return Find(kAccountingNames, s); }
std::optional<L2Policy> ParseL2Policy(std::string_view s) { return Find(kL2Names, s); }
std::optional<FastAccum> ParseFastAccum(std::string_view s) { return Find(kFastAccumNames, s); }
std::optional<AmaxAlgo> ParseAmaxAlgo(std::string_view s) { return Find(kAmaxAlgoNames, s); }
std::optional<TimingBackend> ParseTimingBackend(std::string_view s) {
  return Find(kTimingBackendNames, s);
}
std::optional<MeasureContext> ParseMeasureContext(std::string_view s) {
  return Find(kMeasureContextNames, s);
}
std::optional<MoeLayout> ParseMoeLayout(std::string_view s) { return Find(kMoeLayoutNames, s); }
std::optional<JobState> ParseJobState(std::string_view s) { return Find(kJobStateNames, s); }
std::optional<ItemStatus> ParseItemStatus(std::string_view s) { return Find(kItemStatusNames, s); }
std::optional<Verification> ParseVerification(std::string_view s) {
  return Find(kVerificationNames, s);
}

const std::vector<Recipe>& AllRecipes() {
  static const std::vector<Recipe> kAll = [] {
    std::vector<Recipe> v;
    for (const auto& [e, s] : kRecipeNames) v.push_back(e);
    return v;
  }();
  return kAll;
}

const std::vector<Recipe>& DefaultRecipes() {
  static const std::vector<Recipe> kDefault = [] {
    std::vector<Recipe> v;
    for (Recipe r : AllRecipes()) {
      if (!IsServingRecipe(r)) v.push_back(r);
    }
    return v;
  }();
  return kDefault;
}

bool IsServingRecipe(Recipe recipe) {
  return recipe == Recipe::kInt8Rowwise || IsWeightOnly(recipe);
}

bool IsWeightOnly(Recipe recipe) { return recipe == Recipe::kW8a16 || recipe == Recipe::kW4a16; }

bool SharesQuantizationAcrossPasses(Recipe recipe) {
  return recipe != Recipe::kBf16 && recipe != Recipe::kFp8Rowwise && !IsServingRecipe(recipe);
}

std::string PassUnsupportedReason(Recipe recipe, Pass pass) {
  if (!IsServingRecipe(recipe) || pass == Pass::kFprop) return "";
  return std::string(ToString(recipe)) + " is a serving recipe: fprop only (no " +
         std::string(ToString(pass)) + " form; train with bf16 or an fp8 recipe)";
}

bool HasFastAccumChoice(Recipe recipe) {
  return recipe == Recipe::kFp8Current || recipe == Recipe::kFp8Delayed ||
         recipe == Recipe::kFp8Rowwise;
}

std::optional<bool> ResolveFastAccum(Recipe recipe, Pass pass, FastAccum option) {
  if (recipe == Recipe::kFp8Block) return false;
  if (!HasFastAccumChoice(recipe)) return std::nullopt;
  if (option == FastAccum::kOn) return true;
  if (option == FastAccum::kOff) return false;
  return pass == Pass::kFprop;
}

std::string RecipeList() {
  std::string out;
  for (const auto& [e, s] : kRecipeNames) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kPartial || s == JobState::kFailed ||
         s == JobState::kCancelled;
}

bool IsFinal(ItemStatus s) { return s != ItemStatus::kQueued && s != ItemStatus::kRunning; }

}  // namespace gemmprof::core
