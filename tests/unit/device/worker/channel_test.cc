#include "device/worker/channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "gemmprof/v1/worker.pb.h"

namespace gemmprof::worker {
namespace {

namespace wp = ::gemmprof::v1::worker;

class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(MakeChannelPair(&a_, &b_).ok()); }

  // Writes raw bytes on a's descriptor, bypassing the framing.
  void WriteRaw(const std::string& bytes) {
    ASSERT_EQ(write(a_.fd(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }

  MessageChannel a_, b_;
};

TEST_F(ChannelTest, MessagesArriveWholeAndInOrder) {
  wp::Request first, second;
  first.set_id(7);
  first.mutable_measure_group()->add_items()->set_seq(3);
  second.set_id(8);
  second.mutable_begin_job()->mutable_timing()->set_timed_iters(5);
  ASSERT_TRUE(a_.Send(first).ok());
  ASSERT_TRUE(a_.Send(second).ok());
  wp::Request got;
  ASSERT_TRUE(b_.Receive(&got, 5).ok());
  EXPECT_EQ(got.id(), 7u);
  EXPECT_EQ(got.measure_group().items(0).seq(), 3);
  ASSERT_TRUE(b_.Receive(&got, 5).ok());
  EXPECT_EQ(got.id(), 8u);
  EXPECT_EQ(got.begin_job().timing().timed_iters(), 5);
}

TEST_F(ChannelTest, EmptyAndLargeMessagesRoundTrip) {
  wp::Response empty, large;
  large.mutable_status()->set_message(std::string(1 << 20, 'x'));  // above a socket buffer
  std::thread sender([&] {
    EXPECT_TRUE(a_.Send(empty).ok());
    EXPECT_TRUE(a_.Send(large).ok());
  });
  wp::Response got;
  ASSERT_TRUE(b_.Receive(&got, 5).ok());
  EXPECT_EQ(got.id(), 0u);
  ASSERT_TRUE(b_.Receive(&got, 5).ok());
  EXPECT_EQ(got.status().message().size(), size_t{1} << 20);
  sender.join();
}

TEST_F(ChannelTest, ATimeoutIsDeadlineExceededAndLosesNothing) {
  wp::Request got;
  EXPECT_EQ(b_.Receive(&got, 0.05).code(), absl::StatusCode::kDeadlineExceeded);
  wp::Request sent;
  sent.set_id(1);
  ASSERT_TRUE(a_.Send(sent).ok());
  ASSERT_TRUE(b_.Receive(&got, 5).ok());
  EXPECT_EQ(got.id(), 1u);
}

TEST_F(ChannelTest, APeerThatClosesIsUnavailableOnBothSides) {
  a_ = MessageChannel();
  wp::Request got;
  EXPECT_EQ(b_.Receive(&got, 5).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(b_.Send(got).code(), absl::StatusCode::kUnavailable) << "and no SIGPIPE";
}

TEST_F(ChannelTest, ShutdownWakesABlockedReceive) {
  wp::Request got;
  std::thread stopper([&] { b_.Shutdown(); });
  EXPECT_EQ(b_.Receive(&got, -1).code(), absl::StatusCode::kUnavailable);
  stopper.join();
}

TEST_F(ChannelTest, BadFramesAreDataLoss) {
  wp::Request got;
  WriteRaw(std::string("\xff\xff\xff\x7f", 4));  // ~2 GiB announced
  EXPECT_EQ(b_.Receive(&got, 5).code(), absl::StatusCode::kDataLoss);

  MessageChannel c, d;
  ASSERT_TRUE(MakeChannelPair(&c, &d).ok());
  const std::string cut(
      "\x10\x00\x00\x00"
      "abc",
      7);  // 16 announced, 3 sent, then closed
  ASSERT_EQ(write(c.fd(), cut.data(), cut.size()), 7);
  c = MessageChannel();
  EXPECT_EQ(d.Receive(&got, 5).code(), absl::StatusCode::kDataLoss);

  MessageChannel e, f;
  ASSERT_TRUE(MakeChannelPair(&e, &f).ok());
  const std::string garbage("\x02\x00\x00\x00\xff\xff", 6);  // not a Request
  ASSERT_EQ(write(e.fd(), garbage.data(), garbage.size()), 6);
  EXPECT_EQ(f.Receive(&got, 5).code(), absl::StatusCode::kDataLoss);
}

TEST_F(ChannelTest, AClosedChannelRefusesWork) {
  MessageChannel none;
  wp::Request r;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.Send(r).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(none.Receive(&r, 0).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gemmprof::worker
