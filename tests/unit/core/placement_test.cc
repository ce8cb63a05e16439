#include "core/placement.h"

#include "core/job.h"
#include "core/validation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gemmprof::core {
namespace {

using ::testing::HasSubstr;

TEST(PlacementTest, EveryFormReadsBackAsItself) {
  for (const char* text : {"", "this-node", "any", "model:NVIDIA H200", "node:gpu-7"}) {
    absl::StatusOr<Placement> p = ParsePlacement("where", text);
    ASSERT_TRUE(p.ok()) << text << ": " << p.status();
    EXPECT_EQ(ToString(*p), text);
  }
  absl::StatusOr<Placement> model = ParsePlacement("where", "model: NVIDIA H100 80GB HBM3 ");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->kind, PlacementKind::kModel);
  EXPECT_EQ(model->name, "NVIDIA H100 80GB HBM3");
  EXPECT_TRUE(model->Clustered());
  EXPECT_FALSE(ParsePlacement("where", "this-node")->Clustered());
  EXPECT_FALSE(ParsePlacement("where", "")->Clustered());
}

TEST(PlacementTest, BadPlacementsNameTheFieldTheValueAndTheForms) {
  const struct {
    const char* text;
    const char* why;
  } cases[] = {
      {"gpu:h200", "'gpu:h200' is not a placement"},
      {"Any", "'Any' is not a placement"},
      {"model:", "names no model or node after the colon"},
      {"node:  ", "names no model or node after the colon"},
      {"model:a,b", "names more than one target"},
  };
  for (const auto& c : cases) {
    absl::StatusOr<Placement> p = ParsePlacement("--where", c.text);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(p.status().message(), HasSubstr(std::string("--where: '") + c.text + "'"));
    EXPECT_THAT(p.status().message(), HasSubstr(c.why));
    EXPECT_THAT(p.status().message(), HasSubstr("give this-node, any, model:NAME or node:NAME"));
  }
  const std::string long_name = "model:" + std::string(201, 'x');
  EXPECT_THAT(ParsePlacement("where", long_name).status().message(),
              HasSubstr("longer than 200 characters"));
}

TEST(PlacementTest, PriorityAndCampaignOfASpecAreChecked) {
  JobSpec spec;
  spec.shapes = {GemmShape{64, 64, 64}};
  ASSERT_TRUE(ValidateJobSpec(spec).ok());
  for (int32_t bad : {kMinPriority - 1, kMaxPriority + 1}) {
    spec.priority = bad;
    absl::Status s = ValidateJobSpec(spec);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(),
                HasSubstr("priority: " + std::to_string(bad) + " is out of range; give -10..10"));
  }
  spec.priority = kMaxPriority;
  EXPECT_TRUE(ValidateJobSpec(spec).ok());
  spec.campaign = std::string(65, 'c');
  EXPECT_THAT(ValidateJobSpec(spec).message(),
              HasSubstr("campaign: 65 characters, more than the limit of 64"));
  spec.campaign = "c1";
  spec.where.kind = PlacementKind::kThisNode;
  EXPECT_THAT(ValidateJobSpec(spec).message(),
              HasSubstr("campaign: a campaign's jobs run through the cluster queue"));
}

}  // namespace
}  // namespace gemmprof::core
