#include "core/job.h"

#include <sstream>

namespace gemmprof::core {

std::string TimingOptions::CacheText() const {
  std::ostringstream os;
  os << "warmup=" << warmup_iters << ";iters=" << timed_iters << ";l2=" << ToString(l2)
     << ";autotune=" << autotune_k << ";seed=" << seed << ";acct=" << ToString(accounting)
     << ";fastacc=" << ToString(fast_accum) << ";amaxlen=" << amax_history_len
     << ";amaxalgo=" << ToString(amax_algo);
  return os.str();
}

std::vector<Recipe> EffectiveRecipes(const JobSpec& spec) {
  return spec.recipes.empty() ? AllRecipes() : spec.recipes;
}

std::vector<Mode> EffectiveModes(const JobSpec& spec) {
  return spec.modes.empty() ? std::vector<Mode>{Mode::kAutocast} : spec.modes;
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
