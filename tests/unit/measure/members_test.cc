// Members: which items are the same work, which measurement group each is in, and how a
// shared measurement is given to every item it answers.
#include "measure/members.h"

#include <gtest/gtest.h>

#include <vector>

namespace gemmprof::measure {
namespace {

core::WorkItem Item(int64_t id, core::Pass pass, int64_t m, core::Recipe recipe,
                    core::Mode mode = core::Mode::kPrequant) {
  core::WorkItem item;
  item.id = id;
  item.seq = static_cast<int32_t>(id);
  item.op.pass = pass;
  item.op.shape = {m, 256, 512};
  item.recipe = recipe;
  item.mode = mode;
  return item;
}

class GroupMembersTest : public ::testing::Test {
 protected:
  // Two groups: fprop 128 (items 0-2), dgrad 128 (items 3-4); items 1 and 2 are the same
  // work, and so are 3 and 4.
  std::vector<core::WorkItem> items = {
      Item(10, core::Pass::kFprop, 128, core::Recipe::kBf16),
      Item(11, core::Pass::kFprop, 128, core::Recipe::kFp8Current),
      Item(12, core::Pass::kFprop, 128, core::Recipe::kFp8Delayed),
      Item(13, core::Pass::kDgrad, 128, core::Recipe::kFp8Current),
      Item(14, core::Pass::kDgrad, 128, core::Recipe::kFp8Delayed),
  };
  std::vector<std::string> keys = {"bf16", "fp8", "fp8", "fp8", "fp8"};
};

TEST_F(GroupMembersTest, EqualWorkInOneGroupIsOneMember) {
  const std::vector<MemberItems> m = GroupMembers(items, {0, 1, 2, 3, 4}, keys, true);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].items, (std::vector<size_t>{0}));
  EXPECT_EQ(m[1].items, (std::vector<size_t>{1, 2}));
  EXPECT_EQ(m[2].items, (std::vector<size_t>{3, 4}));
  EXPECT_EQ(m[0].group, 0u);
  EXPECT_EQ(m[1].group, 0u);
  // The same work key in another group (dgrad) stays a member of its own.
  EXPECT_EQ(m[2].group, 1u);
  EXPECT_EQ(MembersByGroup(m), (std::vector<std::vector<size_t>>{{0, 1}, {2}}));
}

TEST_F(GroupMembersTest, WithoutSharingEveryItemIsAMember) {
  const std::vector<MemberItems> m = GroupMembers(items, {0, 1, 2, 3, 4}, keys, false);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[2].items, (std::vector<size_t>{2}));
  EXPECT_EQ(m[4].group, 1u);
}

TEST_F(GroupMembersTest, OnlyLiveItemsAndGroupsNumberedByFirstAppearance) {
  const std::vector<MemberItems> m = GroupMembers(items, {3, 2, 4}, keys, true);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].items, (std::vector<size_t>{3, 4}));
  EXPECT_EQ(m[0].group, 0u);  // dgrad came first
  EXPECT_EQ(m[1].items, (std::vector<size_t>{2}));
  EXPECT_EQ(m[1].group, 1u);
  EXPECT_TRUE(GroupMembers(items, {}, keys, true).empty());
}

TEST_F(GroupMembersTest, ASharedMeasurementSaysWhoseItIs) {
  core::GroupResult result;
  result.outcomes.resize(items.size());
  core::Measurement m;
  m.notes = "fast accumulation on";
  GiveMeasurement(items, {{1, 2}, 0}, "GPU work", m, result);
  ASSERT_TRUE(result.outcomes[1].measurement.has_value());
  EXPECT_EQ(result.outcomes[1].measurement->notes, "fast accumulation on");
  EXPECT_EQ(result.outcomes[1].measurement->shared_with_item, 0);
  ASSERT_TRUE(result.outcomes[2].measurement.has_value());
  EXPECT_EQ(result.outcomes[2].measurement->shared_with_item, 11);
  EXPECT_EQ(result.outcomes[2].measurement->notes,
            "same GPU work as fp8-current prequant (item 11): one measurement; fast "
            "accumulation on");
  EXPECT_FALSE(result.outcomes[0].measurement.has_value());
  m.notes.clear();
  GiveMeasurement(items, {{3, 4}, 1}, "host work", m, result);
  EXPECT_EQ(result.outcomes[4].measurement->notes,
            "same host work as fp8-current prequant (item 13): one measurement");
}

}  // namespace
}  // namespace gemmprof::measure
