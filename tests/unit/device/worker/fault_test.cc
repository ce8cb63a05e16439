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
  EXPECT_TRUE(ExitsAtStart(*faults, 1));
  EXPECT_TRUE(ExitsAtStart(*faults, 100)) << "plain exit-at-start: every start";
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
  EXPECT_FALSE(ExitsAtStart(*faults, 1));
}

TEST(WorkerFaultTest, OnceAndCountedStartsParseAndPrintAsWritten) {
  auto faults = ParseWorkerFaults("kill@5:once,hang@7,exit-at-start:3,illegal-address@2:once");
  ASSERT_TRUE(faults.ok()) << faults.status();
  ASSERT_EQ(faults->size(), 4u);
  EXPECT_TRUE((*faults)[0].once);
  EXPECT_EQ((*faults)[0].kind, Kind::kKill);
  EXPECT_EQ((*faults)[0].seq, 5);
  EXPECT_FALSE((*faults)[1].once);
  EXPECT_EQ((*faults)[2].starts, 3);
  std::vector<std::string> written;
  for (const WorkerFault& f : *faults) written.push_back(f.ToString());
  EXPECT_EQ(written, (std::vector<std::string>{"kill@5:once", "hang@7", "exit-at-start:3",
                                               "illegal-address@2:once"}));
  // exit-at-start:3: the device's starts 1 to 3 exit, the 4th comes up.
  EXPECT_TRUE(ExitsAtStart(*faults, 1));
  EXPECT_TRUE(ExitsAtStart(*faults, 3));
  EXPECT_FALSE(ExitsAtStart(*faults, 4));
  // A group meets a :once fault like any other; whether it fires is ClaimFault's.
  EXPECT_EQ(FaultForGroup(*faults, {4, 5})->seq, 5);
}

TEST(WorkerFaultTest, AOnceFaultFiresForTheFirstClaimOfItsDaemonOnly) {
  const std::string dir = ::testing::TempDir();
  const int64_t daemon = 1000000 + (reinterpret_cast<uintptr_t>(&dir) % 1000000);
  auto faults = ParseWorkerFaults("kill@5:once,kill@6");
  ASSERT_TRUE(faults.ok());
  EXPECT_TRUE(ClaimFault((*faults)[0], dir, daemon));
  EXPECT_FALSE(ClaimFault((*faults)[0], dir, daemon)) << "a restarted worker never fires it";
  EXPECT_TRUE(ClaimFault((*faults)[0], dir, daemon + 1)) << "another daemon's is its own";
  EXPECT_TRUE(ClaimFault((*faults)[1], dir, daemon));
  EXPECT_TRUE(ClaimFault((*faults)[1], dir, daemon)) << "a repeating fault fires every time";
  // No directory for the marker: never fires (a transient fault must not repeat).
  EXPECT_FALSE(ClaimFault((*faults)[0], "/nonexistent/dir", daemon + 2));
}

TEST(WorkerFaultTest, BadEntriesNameTheVariableTheEntryAndTheForms) {
  for (const char* bad :
       {"boom", "hang", "hang@", "hang@-1", "hang@x", "hang@3x", "explode@3", "crash@1,oops",
        "hang@99999999999", "hang@3:twice", "hang@3:once:once", "hang:once", "exit-at-start:0",
        "exit-at-start:x", "exit-at-start:-2", "exit-at-start:once"}) {
    auto faults = ParseWorkerFaults(bad);
    ASSERT_FALSE(faults.ok()) << bad;
    EXPECT_EQ(faults.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(faults.status().message());
    EXPECT_NE(message.find("GEMMPROF_WORKER_FAULT"), std::string::npos) << message;
    EXPECT_NE(message.find("exit-at-start[:N], hang@SEQ"), std::string::npos) << message;
  }
  EXPECT_NE(std::string(ParseWorkerFaults("crash@1,oops").status().message()).find("'oops'"),
            std::string::npos);
}

}  // namespace
}  // namespace gemmprof::worker
