#include "core/job.h"

#include <charconv>
#include <sstream>

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
  return os.str();
}

std::vector<Recipe> EffectiveRecipes(const JobSpec& spec) {
  return spec.recipes.empty() ? AllRecipes() : spec.recipes;
}

std::vector<Mode> EffectiveModes(const JobSpec& spec) {
  if (!spec.modes.empty()) return spec.modes;
  if (spec.model.has_value() && !spec.model->sweep_m.empty()) return {Mode::kDynamic};
  return {Mode::kAutocast};
}

std::string DescribeItem(const WorkItem& item) {
  const std::string shape = item.op.shape.ToString();
  std::string s = std::string(ToString(item.op.pass)) + " ";
  if (!item.op.name.empty() && item.op.name != shape) s += item.op.name + " ";
  s += shape;
  if (item.op.groups > 1) s += " x" + std::to_string(item.op.groups) + " groups";
  return s + " " + std::string(ToString(item.recipe)) + " " + std::string(ToString(item.mode));
}

}  // namespace gemmprof::core
