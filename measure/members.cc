#include "measure/members.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/enums.h"

namespace gemmprof::measure {

std::vector<MemberItems> GroupMembers(const std::vector<core::WorkItem>& items,
                                      const std::vector<size_t>& live,
                                      const std::vector<std::string>& work_keys, bool share) {
  std::vector<MemberItems> members;
  std::vector<std::string> member_keys, group_keys;
  for (size_t i : live) {
    const std::string group_key = core::GroupKey(items[i].op);
    std::string key = absl::StrCat(group_key, "|", work_keys[i]);
    auto it = std::find(member_keys.begin(), member_keys.end(), key);
    if (share && it != member_keys.end()) {
      members[it - member_keys.begin()].items.push_back(i);
      continue;
    }
    auto g = std::find(group_keys.begin(), group_keys.end(), group_key);
    if (g == group_keys.end()) g = group_keys.insert(g, group_key);
    member_keys.push_back(std::move(key));
    members.push_back({{i}, static_cast<size_t>(g - group_keys.begin())});
  }
  return members;
}

std::vector<std::vector<size_t>> MembersByGroup(const std::vector<MemberItems>& members) {
  std::vector<std::vector<size_t>> groups;
  for (size_t m = 0; m < members.size(); ++m) {
    if (members[m].group >= groups.size()) groups.resize(members[m].group + 1);
    groups[members[m].group].push_back(m);
  }
  return groups;
}

void GiveMeasurement(const std::vector<core::WorkItem>& items, const MemberItems& member,
                     std::string_view work, core::Measurement measurement,
                     core::GroupResult& result) {
  const core::WorkItem& own = items[member.items.front()];
  for (size_t j = 1; j < member.items.size(); ++j) {
    core::Measurement shared = measurement;
    shared.shared_with_item = own.id;
    const std::string note = absl::StrCat(
        "same ", std::string(work), " as ", std::string(core::ToString(own.recipe)), " ",
        std::string(core::ToString(own.mode)), " (item ", own.seq, "): one measurement");
    shared.notes = shared.notes.empty() ? note : absl::StrCat(note, "; ", shared.notes);
    result.outcomes[member.items[j]].measurement = std::move(shared);
  }
  result.outcomes[member.items.front()].measurement = std::move(measurement);
}

}  // namespace gemmprof::measure
