#include "core/recipe_variant.h"

#include <vector>

#include "absl/status/status.h"

namespace gemmprof::core {

namespace {

constexpr Pass kPasses[] = {Pass::kFprop, Pass::kDgrad, Pass::kWgrad};

size_t Index(Pass pass) { return static_cast<size_t>(pass); }

absl::Status Bad(const std::string& message) { return absl::InvalidArgumentError(message); }

}  // namespace

Recipe RecipeVariant::For(Pass pass) const { return pass_recipe[Index(pass)].value_or(base); }

bool RecipeVariant::composite() const {
  for (const auto& r : pass_recipe)
    if (r.has_value()) return true;
  return false;
}

std::string RecipeVariant::Name() const {
  std::string out(ToString(base));
  for (Pass pass : kPasses) {
    if (const auto& r = pass_recipe[Index(pass)]) {
      out += "+" + std::string(ToString(pass)) + ":" + std::string(ToString(*r));
    }
  }
  return out;
}

std::string RecipeVariant::Describe() const {
  std::string out;
  for (Pass pass : kPasses) {
    if (!out.empty()) out += ", ";
    out += std::string(ToString(pass)) + " " + std::string(ToString(For(pass)));
  }
  return out;
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
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string part = "\"+" + std::string(parts[i]) + "\" in " + quoted;
    const size_t colon = parts[i].find(':');
    const std::string_view role = parts[i].substr(0, colon);
    if (role == "fast-accum") {
      return Bad(part +
                 ": fast accumulation per pass is not supported yet (submit --fast-accum on|off "
                 "sets it for every pass of a job)");
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
  if (v.composite() && v.For(Pass::kFprop) == v.For(Pass::kDgrad) &&
      v.For(Pass::kDgrad) == v.For(Pass::kWgrad)) {
    return Bad(quoted + ": every pass runs " + std::string(ToString(v.For(Pass::kFprop))) +
               "; give that recipe by its name");
  }
  return v;
}

}  // namespace gemmprof::core
