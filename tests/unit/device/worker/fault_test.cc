#include "device/worker/fault.h"

#include <gtest/gtest.h>

namespace gemmprof::worker {
namespace {

using Kind = WorkerFault::Kind;

TEST(WorkerFaultTest, ParsesEveryForm) {
  auto faults = ParseWorkerFaults(
      "exit-at-start, hang@5,crash@0,kill@12,exit@3,illegal-address@7,context-lost@8,refuse@9");
  ASSERT_TRUE(faults.ok()) << faults.status();
  ASSERT_EQ(faults->size(), 8u);
  EXPECT_TRUE(ExitsAtStart(*faults));
  EXPECT_EQ(FaultForItem(*faults, 5)->kind, Kind::kHang);
  EXPECT_EQ(FaultForItem(*faults, 0)->kind, Kind::kCrash);
  EXPECT_EQ(FaultForItem(*faults, 12)->kind, Kind::kKill);
  EXPECT_EQ(FaultForItem(*faults, 3)->kind, Kind::kExit);
  EXPECT_EQ(FaultForItem(*faults, 7)->kind, Kind::kIllegalAddress);
  EXPECT_EQ(FaultForItem(*faults, 8)->kind, Kind::kContextLost);
  EXPECT_EQ(FaultForItem(*faults, 9)->kind, Kind::kRefuse);
  EXPECT_FALSE(FaultForItem(*faults, 1).has_value());
  EXPECT_FALSE(FaultForItem(*faults, -1).has_value()) << "exit-at-start is no item's fault";
}

TEST(WorkerFaultTest, AGroupMeetsTheFaultOfItsFirstFaultyItemButARefusal) {
  auto faults = ParseWorkerFaults("exit-at-start,hang@5,crash@3,refuse@1");
  ASSERT_TRUE(faults.ok()) << faults.status();
  std::optional<WorkerFault> f = FaultForGroup(*faults, {1, 5, 3});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, Kind::kHang);
  EXPECT_EQ(f->seq, 5);
  f = FaultForGroup(*faults, {3, 5});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, Kind::kCrash);
  EXPECT_EQ(f->seq, 3);
  EXPECT_FALSE(FaultForGroup(*faults, {0, 1, 2, 4}).has_value()) << "refuse@1 is the item's";
  EXPECT_FALSE(FaultForGroup(*faults, {-1}).has_value()) << "exit-at-start is no item's fault";
  EXPECT_FALSE(FaultForGroup(*faults, {}).has_value());
  EXPECT_TRUE(Refuses(*faults, 1));
  EXPECT_FALSE(Refuses(*faults, 3));
  EXPECT_EQ(FaultForItem(*faults, 1)->kind, Kind::kRefuse);
}

TEST(WorkerFaultTest, EmptyMeansNoFault) {
  auto faults = ParseWorkerFaults("");
  ASSERT_TRUE(faults.ok());
  EXPECT_TRUE(faults->empty());
  EXPECT_FALSE(ExitsAtStart(*faults));
}

TEST(WorkerFaultTest, BadEntriesNameTheVariableTheEntryAndTheForms) {
  for (const char* bad : {"boom", "hang", "hang@", "hang@-1", "hang@x", "hang@3x", "explode@3",
                          "crash@1,oops", "hang@99999999999"}) {
    auto faults = ParseWorkerFaults(bad);
    ASSERT_FALSE(faults.ok()) << bad;
    EXPECT_EQ(faults.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(faults.status().message());
    EXPECT_NE(message.find("GEMMPROF_WORKER_FAULT"), std::string::npos) << message;
    EXPECT_NE(message.find("exit-at-start, hang@SEQ"), std::string::npos) << message;
  }
  EXPECT_NE(std::string(ParseWorkerFaults("crash@1,oops").status().message()).find("'oops'"),
            std::string::npos);
}

}  // namespace
}  // namespace gemmprof::worker
