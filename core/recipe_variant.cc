#include "core/recipe_variant.h"

#include <vector>

#include "absl/status/status.h"
#include "core/status.h"

namespace gemmprof::core {

namespace {

constexpr Pass kPasses[] = {Pass::kFprop, Pass::kDgrad, Pass::kWgrad};

size_t Index(Pass pass) { return static_cast<size_t>(pass); }

absl::Status Bad(const std::string& message) { return absl::InvalidArgumentError(message); }

const char kFastRecipes[] = "fp8-current, fp8-delayed, fp8-rowwise";

// "fprop/wgrad", "all" or "none" -> kOn for the passes named, kOff for the others.
absl::StatusOr<std::array<FastAccum, 3>> ParseFastPasses(std::string_view list,
                                                         const std::string& part) {
  std::array<FastAccum, 3> out;
  out.fill(FastAccum::kOff);
  if (list == "all") {
    out.fill(FastAccum::kOn);
    return out;
  }
  if (list == "none") return out;
  const std::string valid = "; valid: fprop, dgrad, wgrad joined by \"/\", or all, or none";
  if (list.empty()) return Bad(part + ": no passes after \"fast-accum:\"" + valid);
  for (size_t from = 0;;) {
    const size_t slash = list.find('/', from);
    const std::string_view name =
        list.substr(from, slash == std::string_view::npos ? slash : slash - from);
    const std::optional<Pass> pass = ParsePass(name);
    if (!pass) return Bad(part + ": unknown pass \"" + std::string(name) + "\"" + valid);
    if (out[Index(*pass)] == FastAccum::kOn)
      return Bad(part + ": " + std::string(name) + " is named twice");
    out[Index(*pass)] = FastAccum::kOn;
    if (slash == std::string_view::npos) break;
    from = slash + 1;
  }
  return out;
}

// A fast pass must run a recipe with an FP8 accumulation setting, and some pass must.
absl::Status CheckFastPasses(const RecipeVariant& v, const std::string& part) {
  bool any = false;
  for (Pass pass : kPasses) {
    const Recipe r = v.For(pass);
    any = any || HasFastAccumChoice(r);
    if (v.FastAccumFor(pass) != FastAccum::kOn || HasFastAccumChoice(r)) continue;
    const std::string why =
        r == Recipe::kFp8Block
            ? "fp8-block, whose block scaling always splits accumulation"
            : std::string(ToString(r)) + ", which has no FP8 accumulation setting";
    return Bad(part + ": " + std::string(ToString(pass)) + " runs " + why +
               " (fast accumulation is a choice of " + kFastRecipes + ")");
  }
  if (!any) {
    return Bad(part + ": no pass runs a recipe with an FP8 accumulation setting (" + kFastRecipes +
               ")");
  }
  return absl::OkStatus();
}

}  // namespace

Recipe RecipeVariant::For(Pass pass) const { return pass_recipe[Index(pass)].value_or(base); }

FastAccum RecipeVariant::FastAccumFor(Pass pass) const { return pass_fast_accum[Index(pass)]; }

bool RecipeVariant::sets_fast_accum() const {
  for (FastAccum f : pass_fast_accum)
    if (f != FastAccum::kDefault) return true;
  return false;
}

bool RecipeVariant::composite() const {
  for (const auto& r : pass_recipe)
    if (r.has_value()) return true;
  return sets_fast_accum();
}

std::string RecipeVariant::Name() const {
  std::string out(ToString(base));
  for (Pass pass : kPasses) {
    if (const auto& r = pass_recipe[Index(pass)]) {
      out += "+" + std::string(ToString(pass)) + ":" + std::string(ToString(*r));
    }
  }
  if (sets_fast_accum()) {
    std::string fast;
    int count = 0;
    for (Pass pass : kPasses) {
      if (FastAccumFor(pass) != FastAccum::kOn) continue;
      fast += (fast.empty() ? "" : "/") + std::string(ToString(pass));
      ++count;
    }
    out += "+fast-accum:" + (count == 3 ? "all" : count == 0 ? "none" : fast);
  }
  return out;
}

std::string RecipeVariant::Describe() const {
  std::string out;
  for (Pass pass : kPasses) {
    if (!out.empty()) out += ", ";
    out += std::string(ToString(pass)) + " " + std::string(ToString(For(pass)));
    if (FastAccumFor(pass) != FastAccum::kDefault && HasFastAccumChoice(For(pass)))
      out +=
          FastAccumFor(pass) == FastAccum::kOn ? " (fast accumulation)" : " (split accumulation)";
  }
  return out;
}

PassItem ItemFor(const RecipeVariant& v, Pass pass, FastAccum job_option) {
  const Recipe recipe = v.For(pass);
  const FastAccum own = v.FastAccumFor(pass);
  if (own == FastAccum::kDefault || !HasFastAccumChoice(recipe) ||
      ResolveFastAccum(recipe, pass, own) == ResolveFastAccum(recipe, pass, job_option))
    return {recipe, FastAccum::kDefault};
  return {recipe, own};
}

std::string ToString(const RecipeVariant& v) { return v.Name(); }

std::string SplitQuantizationNote(const RecipeVariant& v) {
  std::string split;
  int count = 0;
  for (Recipe r : AllRecipes()) {
    if (!SharesQuantizationAcrossPasses(r)) continue;
    int runs = 0;
    for (Pass pass : kPasses) runs += v.For(pass) == r ? 1 : 0;
    if (runs == 0 || runs == 3) continue;
    split += (split.empty() ? "" : ", ") + std::string(ToString(r));
    ++count;
  }
  if (split.empty()) return "";
  return split + (count == 1 ? " shares" : " share") +
         " quantized operands across a training step's passes (fprop writes the "
         "transposed copies dgrad and wgrad read; dgrad writes dY's for wgrad), and this "
         "variant runs " +
         std::string(count == 1 ? "it" : "them") +
         " in some passes only: its autocast items count that quantization as "
         "a whole " +
         split + " step does (copies written for a pass it does not run in " + split +
         " are counted; copies a pass reads from one it does not run in " + split +
         " are not quantized); prequant, dynamic and --accounting per-gemm totals are exact";
}

absl::StatusOr<RecipeVariant> ParseRecipeVariant(std::string_view name) {
  const std::string quoted = "\"" + std::string(name) + "\"";
  const std::string valid = "; valid: " + RecipeList();
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t plus = name.find('+', from);
    parts.push_back(name.substr(from, plus == std::string_view::npos ? plus : plus - from));
    if (plus == std::string_view::npos) break;
    from = plus + 1;
  }
  const std::optional<Recipe> base = ParseRecipe(parts[0]);
  if (!base) {
    if (parts.size() == 1) return Bad("unknown recipe " + quoted + valid);
    return Bad("unknown recipe \"" + std::string(parts[0]) + "\" in " + quoted + valid);
  }
  RecipeVariant v(*base);
  std::string fast_part;  // the "+fast-accum" part, quoted, for its errors
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string part = "\"+" + std::string(parts[i]) + "\" in " + quoted;
    const size_t colon = parts[i].find(':');
    const std::string_view role = parts[i].substr(0, colon);
    if (role == "fast-accum") {
      if (v.sets_fast_accum()) return Bad(part + ": fast-accum is given twice");
      if (colon == std::string_view::npos) {
        return Bad(part +
                   ": fast-accum needs the passes that accumulate fast after \":\" (as in "
                   "\"+fast-accum:fprop/wgrad\", or all, or none)");
      }
      ASSIGN_OR_RETURN(v.pass_fast_accum, ParseFastPasses(parts[i].substr(colon + 1), part));
      fast_part = part;
      continue;
    }
    const std::optional<Pass> pass = ParsePass(role);
    if (!pass) {
      return Bad(part + ": unknown role \"" + std::string(role) +
                 "\"; a role is a pass: fprop, dgrad or wgrad (as in \"+wgrad:bf16\")");
    }
    if (colon == std::string_view::npos) {
      return Bad(part + ": a role needs a recipe after \":\" (as in \"+" + std::string(role) +
                 ":bf16\")");
    }
    const std::string_view recipe_name = parts[i].substr(colon + 1);
    const std::optional<Recipe> recipe = ParseRecipe(recipe_name);
    if (!recipe) {
      return Bad(part + ": unknown recipe \"" + std::string(recipe_name) + "\" for " +
                 std::string(role) + valid);
    }
    if (v.pass_recipe[Index(*pass)].has_value()) {
      return Bad(part + ": " + std::string(role) + " is given a recipe twice");
    }
    if (*recipe == *base) {
      return Bad(part + ": " + std::string(role) + " already runs " + std::string(ToString(*base)) +
                 ", the base recipe; leave the part out");
    }
    if (const std::string why = PassUnsupportedReason(*recipe, *pass); !why.empty()) {
      return Bad(part + ": " + why);
    }
    v.pass_recipe[Index(*pass)] = *recipe;
  }
  const bool overrides = v.pass_recipe[0] || v.pass_recipe[1] || v.pass_recipe[2];
  if (overrides && v.For(Pass::kFprop) == v.For(Pass::kDgrad) &&
      v.For(Pass::kDgrad) == v.For(Pass::kWgrad)) {
    return Bad(quoted + ": every pass runs " + std::string(ToString(v.For(Pass::kFprop))) +
               "; give that recipe by its name");
  }
  if (v.sets_fast_accum()) RETURN_IF_ERROR(CheckFastPasses(v, fast_part));
  return v;
}

}  // namespace gemmprof::core
