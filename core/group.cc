#include "core/group.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/derive.h"
#include "core/enums.h"

namespace gemmprof::core {

std::string GroupKey(const GemmOp& op) {
  // Experts at other tokens are other data: their own buffers and batch.
  return absl::StrCat(std::string(ToString(op.pass)), " ", op.shape.m, "x", op.shape.k, "x",
                      op.shape.n, " g", op.groups,
                      op.group_tokens.empty() ? "" : " t" + absl::StrJoin(op.group_tokens, ","));
}

std::vector<std::vector<size_t>> GroupItems(const std::vector<WorkItem>& items) {
  std::vector<std::vector<size_t>> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < items.size(); ++i) {
    auto [it, inserted] = index.try_emplace(GroupKey(items[i].op), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  return groups;
}

std::string ContextOf(const JobSpec& spec, const GemmOp& op) {
  if (spec.timing.context == MeasureContext::kIsolated) return "isolated";
  if (spec.model.has_value() && spec.model->sweep_m.empty()) return "workload: training step";
  const std::optional<int64_t> tokens = SweepM(op.name);
  return absl::StrCat("workload: m=", tokens.value_or(op.shape.m));
}

std::string BatchGemms(const std::vector<WorkItem>& items) {
  std::string out;
  std::map<std::string, bool> seen;
  for (const WorkItem& item : items) {
    if (!seen.try_emplace(GroupKey(item.op), true).second) continue;
    if (!out.empty()) out += ", ";
    if (item.op.pass != Pass::kFprop)
      absl::StrAppend(&out, std::string(ToString(item.op.pass)), " ");
    out += item.op.shape.ToString();
    if (item.op.groups > 1) absl::StrAppend(&out, " g", item.op.groups);
  }
  return out;
}

}  // namespace gemmprof::core
