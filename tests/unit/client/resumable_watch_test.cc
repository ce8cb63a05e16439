// `watch` across lost connections, against a scripted job whose life is a fixed list of
// events: however the stream breaks (where, for how long, with events racing the
// catch-up), every item outcome is shown exactly once, in order, nothing is shown twice,
// and counters never go back. A start missed while disconnected is shown only if the
// item still runs (a start line right before its own outcome line says nothing).
#include "client/commands/resumable_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <set>
#include <sstream>

namespace gemmprof::client {
namespace {

using ::testing::HasSubstr;
using K = core::JobEvent::Kind;

// A job of `n` items run in order; a cached item (every third) finishes without a
// start event, as the daemon does, and item 5 fails. life_ lists what happens.
class TimelineClient : public GemmProfClient {
 public:
  // How one WatchJob call ends: after `deliver` events (after the snapshot) it breaks
  // with `code`, and `gap` more events happen before the next call. deliver < 0: the
  // stream runs to the end.
  struct Stream {
    int deliver = -1;
    int gap = 0;
    absl::StatusCode code = absl::StatusCode::kUnavailable;
    bool snapshot = true;  // false: fails before sending anything
  };
  std::deque<Stream> streams;
  int race = 0;  // events that happen between a resumed snapshot and its GetReport
  int report_calls = 0;
  size_t now = 0;  // events of life_ that have happened

  explicit TimelineClient(int n) {
    for (int i = 0; i < n; ++i) {
      core::ItemRecord item;
      item.item.id = 1000 + i;
      item.item.job_id = kJob;
      item.item.seq = i;
      items_.push_back(item);
      const bool cached = i % 3 == 2;
      if (!cached) life_.push_back({K::kItemStarted, i});
      life_.push_back({i == 5 ? K::kItemFailed : K::kItemFinished, i});
    }
    life_.push_back({K::kJobFinished, -1});
  }

  // (kind, item seq) of every event a complete watch from step `from` shows.
  std::vector<std::pair<K, int>> LifeFrom(size_t from) const {
    return {life_.begin() + static_cast<std::ptrdiff_t>(from), life_.end()};
  }

  absl::Status WatchJob(
      int64_t job_id, const std::function<absl::Status(const core::JobEvent&)>& on_event) override {
    EXPECT_EQ(job_id, kJob);
    const Stream s = streams.empty() ? Stream{} : streams.front();
    if (!streams.empty()) streams.pop_front();
    if (!s.snapshot) return absl::Status(s.code, "connection refused");
    // As the daemon does: a job that has ended gets its snapshot and JOB_FINISHED.
    size_t pos = std::min(now, life_.size() - 1);
    core::JobEvent snap;
    snap.job = JobAt(now);
    RETURN_IF_ERROR(on_event(snap));
    for (int delivered = 0; pos < life_.size(); ++delivered, ++pos) {
      if (s.deliver >= 0 && delivered == s.deliver) {
        broken_ = true;
        now = std::max(now, pos) + s.gap;
        now = std::min(now, life_.size());
        return absl::Status(s.code, "stream broken");
      }
      now = std::max(now, pos + 1);
      core::JobEvent e;
      e.kind = life_[pos].first;
      e.job = JobAt(pos + 1);
      if (life_[pos].second >= 0) e.item = ItemAt(life_[pos].second, pos + 1);
      RETURN_IF_ERROR(on_event(e));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<core::Report> GetReport(int64_t) override {
    ++report_calls;
    if (broken_) now = std::min(now + race, life_.size());  // events race the catch-up
    core::Report r;
    r.job = JobAt(now);
    for (size_t i = 0; i < items_.size(); ++i) r.items.push_back(ItemAt(static_cast<int>(i), now));
    std::reverse(r.items.begin(), r.items.end());  // any order; the watcher sorts
    return r;
  }

  absl::StatusOr<SubmitResult> SubmitJob(const core::JobSpec&) override { return Unused(); }
  absl::StatusOr<core::JobRecord> GetJob(int64_t) override { return Unused(); }
  absl::StatusOr<std::vector<core::JobRecord>> ListJobs(std::optional<core::JobState>, int32_t,
                                                        const std::string&,
                                                        const std::string&) override {
    return Unused();
  }
  absl::StatusOr<core::JobRecord> CancelJob(int64_t) override { return Unused(); }
  absl::StatusOr<std::vector<core::ResultRow>> QueryResults(const core::ResultFilter&,
                                                            int32_t) override {
    return Unused();
  }
  absl::StatusOr<std::vector<core::DeviceInfo>> ListDevices() override { return Unused(); }
  absl::StatusOr<core::DaemonListing> ListDaemons() override { return Unused(); }

  static constexpr int64_t kJob = 42;

 private:
  static absl::Status Unused() { return absl::UnimplementedError("not used by watch"); }

  // The item after the first `t` events.
  core::ItemRecord ItemAt(int seq, size_t t) const {
    core::ItemRecord item = items_[static_cast<size_t>(seq)];
    for (size_t i = 0; i < t; ++i) {
      if (life_[i].second != seq) continue;
      item.status = life_[i].first == K::kItemStarted  ? core::ItemStatus::kRunning
                    : life_[i].first == K::kItemFailed ? core::ItemStatus::kFailed
                                                       : core::ItemStatus::kDone;
    }
    return item;
  }

  // The job after the first `t` events.
  core::JobRecord JobAt(size_t t) const {
    core::JobRecord job;
    job.id = kJob;
    job.total_items = static_cast<int32_t>(items_.size());
    job.state = t == 0 ? core::JobState::kQueued : core::JobState::kRunning;
    for (size_t i = 0; i < t; ++i) {
      if (life_[i].first == K::kItemFinished || life_[i].first == K::kItemFailed)
        ++job.finished_items;
      if (life_[i].first == K::kItemFailed) ++job.failed_items;
      if (life_[i].first == K::kJobFinished) job.state = core::JobState::kPartial;
    }
    return job;
  }

  std::vector<core::ItemRecord> items_;
  std::vector<std::pair<K, int>> life_;
  bool broken_ = false;  // a stream broke: GetReport is a catch-up
};

class ResumableWatchTest : public ::testing::Test {
 protected:
  absl::StatusOr<core::JobRecord> Watch(TimelineClient& client) {
    shown_.clear();
    const WatchHooks hooks{
        .emit = [this](const core::JobEvent& e) { shown_.push_back(e); },
        .sleep_ms = [this](int64_t ms) { slept_ms_.push_back(ms); },
        .notice = [this](const std::string& line) { notices_ << line << "\n"; },
        .address = "gpu-node:50051",
        .policy = {.initial_backoff_ms = 1000, .max_backoff_ms = 8000, .give_up_after_ms = 60000},
    };
    return WatchWithResume(client, TimelineClient::kJob, hooks);
  }

  // The shown events as (kind, item seq), without the leading snapshot, which must be
  // the only snapshot; counters never go back.
  std::vector<std::pair<K, int>> Shown() {
    std::vector<std::pair<K, int>> out;
    EXPECT_FALSE(shown_.empty());
    if (shown_.empty()) return out;
    EXPECT_EQ(shown_[0].kind, K::kSnapshot);
    int32_t finished = 0;
    for (size_t i = 1; i < shown_.size(); ++i) {
      EXPECT_NE(shown_[i].kind, K::kSnapshot) << "event " << i;
      EXPECT_GE(shown_[i].job.finished_items, finished) << "event " << i;
      finished = shown_[i].job.finished_items;
      out.emplace_back(shown_[i].kind, shown_[i].item ? shown_[i].item->item.seq : -1);
    }
    return out;
  }

  // The resumed watch's promise, checked against the job's whole life: the outcomes
  // (finished, failed, job finished) are exactly life's, in life's order; no event twice;
  // a start shown is one of life's and comes before its item's outcome; the first
  // `live` events (delivered before the break) are all shown.
  static void ExpectOutcomesOnceInOrder(const std::vector<std::pair<K, int>>& shown,
                                        const std::vector<std::pair<K, int>>& life, size_t live,
                                        const std::string& where) {
    const auto outcomes = [](const std::vector<std::pair<K, int>>& events) {
      std::vector<std::pair<K, int>> out;
      for (const auto& e : events)
        if (e.first != K::kItemStarted) out.push_back(e);
      return out;
    };
    EXPECT_EQ(outcomes(shown), outcomes(life)) << where;
    std::set<std::pair<K, int>> seen;
    for (size_t i = 0; i < shown.size(); ++i) {
      EXPECT_TRUE(seen.insert(shown[i]).second) << where << ": shown twice at " << i;
      if (shown[i].first != K::kItemStarted) continue;
      EXPECT_NE(std::find(life.begin(), life.end(), shown[i]), life.end()) << where;
      const auto outcome = std::find_if(shown.begin(), shown.end(), [&](const auto& e) {
        return e.second == shown[i].second && e.first != K::kItemStarted;
      });
      EXPECT_GT(outcome - shown.begin(), static_cast<std::ptrdiff_t>(i)) << where;
    }
    for (size_t i = 0; i < std::min(live, life.size()); ++i)
      EXPECT_TRUE(seen.count(life[i])) << where << ": live event " << i << " not shown";
  }

  std::vector<core::JobEvent> shown_;
  std::vector<int64_t> slept_ms_;
  std::ostringstream notices_;
};

TEST_F(ResumableWatchTest, UnbrokenStreamShowsEveryEventOnce) {
  TimelineClient client(8);
  const auto job = Watch(client);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state, core::JobState::kPartial);
  EXPECT_EQ(Shown(), client.LifeFrom(0));
  EXPECT_EQ(client.report_calls, 0) << "a watch from the start needs no report";
  EXPECT_EQ(notices_.str(), "");
  EXPECT_TRUE(slept_ms_.empty());
}

TEST_F(ResumableWatchTest, EveryBreakPointGapAndRaceLosesAndRepeatsNothing) {
  const size_t life = TimelineClient(8).LifeFrom(0).size();
  for (int deliver = 0; deliver < static_cast<int>(life); ++deliver) {
    for (int gap : {0, 1, 3, 100}) {
      for (int race : {0, 2}) {
        TimelineClient client(8);
        client.streams = {{.deliver = deliver, .gap = gap}};
        client.race = race;
        notices_.str("");
        const auto job = Watch(client);
        const std::string where = "deliver " + std::to_string(deliver) + " gap " +
                                  std::to_string(gap) + " race " + std::to_string(race);
        ASSERT_TRUE(job.ok()) << where << ": " << job.status();
        ExpectOutcomesOnceInOrder(Shown(), client.LifeFrom(0), static_cast<size_t>(deliver), where);
        EXPECT_EQ(shown_.back().job.state, core::JobState::kPartial) << where;
        EXPECT_EQ(notices_.str(),
                  "gemmprof: connection to gpu-node:50051 lost; reconnecting...\n"
                  "gemmprof: reconnected to gpu-node:50051\n")
            << where;
      }
    }
  }
}

TEST_F(ResumableWatchTest, SeveralBreaksInARow) {
  TimelineClient client(12);
  client.streams = {{.deliver = 2, .gap = 1},
                    {.deliver = 0, .gap = 2},
                    {.snapshot = false},
                    {.deliver = 3, .gap = 0},
                    {.deliver = 1, .gap = 4}};
  client.race = 1;
  const auto job = Watch(client);
  ASSERT_TRUE(job.ok()) << job.status();
  ExpectOutcomesOnceInOrder(Shown(), client.LifeFrom(0), 2, "several breaks");
}

TEST_F(ResumableWatchTest, AnItemStillRunningAfterTheGapShowsItsMissedStart) {
  TimelineClient client(4);
  // Life: S0 F0 S1 F1 F2(cached) S3 F3 END. Break after S0 F0, S1 happens meanwhile.
  client.streams = {{.deliver = 2, .gap = 1}};
  const auto job = Watch(client);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(Shown(), client.LifeFrom(0)) << "S1 is shown by the catch-up";
  EXPECT_EQ(shown_[3].kind, K::kItemStarted);
  EXPECT_EQ(shown_[3].item->status, core::ItemStatus::kRunning);
}

TEST_F(ResumableWatchTest, AWatchStartedMidJobDoesNotReplayEarlierItems) {
  for (int deliver : {0, 1, 4}) {
    TimelineClient client(8);
    client.now = 5;  // the job ran 5 events before the watch began
    client.streams = {{.deliver = deliver, .gap = 2}};
    const auto job = Watch(client);
    ASSERT_TRUE(job.ok()) << job.status();
    ExpectOutcomesOnceInOrder(Shown(), client.LifeFrom(5), static_cast<size_t>(deliver),
                              "deliver " + std::to_string(deliver));
    EXPECT_EQ(client.report_calls, 2) << "one look at the start, one at the reconnect";
  }
}

TEST_F(ResumableWatchTest, AnEndedJobShowsNoItemsEvenAfterABreak) {
  TimelineClient client(6);
  client.now = client.LifeFrom(0).size();  // it ended before the watch
  client.streams = {{.deliver = 0}};
  const auto job = Watch(client);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(Shown(), (std::vector<std::pair<K, int>>{{K::kJobFinished, -1}}));
  EXPECT_EQ(client.report_calls, 0);
}

TEST_F(ResumableWatchTest, BackoffDoublesUpToTheCapAndResetsAfterASuccess) {
  TimelineClient client(6);
  client.streams = {{.deliver = 2},      {.snapshot = false}, {.snapshot = false},
                    {.snapshot = false}, {.snapshot = false}, {.snapshot = false},
                    {.deliver = 1},      {.snapshot = false}};
  const auto job = Watch(client);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(slept_ms_, (std::vector<int64_t>{1000, 2000, 4000, 8000, 8000, 8000, 1000, 2000}));
  ExpectOutcomesOnceInOrder(Shown(), client.LifeFrom(0), 2, "backoff");
  // One "lost" line per outage, not per attempt.
  const std::string n = notices_.str();
  size_t lost = 0;
  for (size_t at = n.find("lost;"); at != std::string::npos; at = n.find("lost;", at + 1)) ++lost;
  EXPECT_EQ(lost, 2u) << n;
}

TEST_F(ResumableWatchTest, GivesUpAfterThePolicy) {
  TimelineClient client(6);
  client.streams = {{.deliver = 2}};
  for (int i = 0; i < 100; ++i) client.streams.push_back({.snapshot = false});
  const auto job = Watch(client);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(job.status().message()),
              HasSubstr("gave up reconnecting to gpu-node:50051 after 63 s (connection refused); "
                        "run `gemmprof watch 42` again later"));
  int64_t total = 0;
  for (int64_t ms : slept_ms_) total += ms;
  EXPECT_GE(total, 60000);
  EXPECT_LT(total, 60000 + 8000);
}

TEST_F(ResumableWatchTest, AFirstStreamThatFailsIsNotRetried) {
  TimelineClient client(4);
  client.streams = {{.snapshot = false}};
  const auto job = Watch(client);
  EXPECT_EQ(job.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(slept_ms_.empty());
  EXPECT_EQ(notices_.str(), "");
}

TEST_F(ResumableWatchTest, ErrorsOtherThanUnavailableEndTheWatch) {
  TimelineClient client(4);
  client.streams = {{.deliver = 1}, {.deliver = 0, .code = absl::StatusCode::kPermissionDenied}};
  const auto job = Watch(client);
  EXPECT_EQ(job.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(slept_ms_.size(), 1u);
}

}  // namespace
}  // namespace gemmprof::client
