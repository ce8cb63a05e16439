#include "core/group.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "core/enums.h"

namespace gemmprof::core {

std::string GroupKey(const GemmOp& op) {
  return absl::StrCat(std::string(ToString(op.pass)), " ", op.shape.m, "x", op.shape.k, "x", op.shape.n, " g",
                      op.groups);
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

}  // namespace gemmprof::core
