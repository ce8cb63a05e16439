// Members: the distinct pieces of work of a request. Items of one measurement group
// (core::GroupKey) whose work keys are equal are the same work (fp8-current and
// fp8-delayed prequant on a GPU, say): one member measures them once, and its
// measurement is given to each of them, saying whose it is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/group.h"
#include "core/job.h"
#include "core/result.h"

namespace gemmprof::measure {

struct MemberItems {
  std::vector<size_t> items;  // request indexes, in order; items[0] is the one measured
  size_t group = 0;           // its measurement group: 0.. in order of first appearance
};

// The members of `items[i]` for i in `live` (in that order). `work_keys[i]` is item i's
// work key (the runner's: what decides its computation). With `share`, items of one
// group with equal work keys form one member; without, each item is a member of its own
// (benchmarks of identical work timed separately). Equal work in two groups of a batch
// (a square fprop and its dgrad) stays two members, so each group's comparisons are its
// own. Members come in order of their first item.
std::vector<MemberItems> GroupMembers(const std::vector<core::WorkItem>& items,
                                      const std::vector<size_t>& live,
                                      const std::vector<std::string>& work_keys, bool share);

// The members of each group: result[g] lists member indexes of group g, in order.
std::vector<std::vector<size_t>> MembersByGroup(const std::vector<MemberItems>& members);

// Gives `measurement` of `member` to its items in `result`: items[0] gets it as is, every
// other item a copy with shared_with_item set and a note first in its notes naming the
// measured item ("same <work> as fp8-current prequant (item 3): one measurement"; `work`
// is "GPU work" on a GPU).
void GiveMeasurement(const std::vector<core::WorkItem>& items, const MemberItems& member,
                     std::string_view work, core::Measurement measurement,
                     core::GroupResult& result);

}  // namespace gemmprof::measure
