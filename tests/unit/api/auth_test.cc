// Tokens, roles, job owners and limits, through a real server and raw generated stubs.
#include <gmock/gmock.h>
#include <grpcpp/generic/generic_stub.h>

#include <future>
#include <thread>

#include "tests/unit/api/secure_fixture.h"

namespace gemmprof::api {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class AuthTest : public SecureApiTest {
 protected:
  void SetUp() override {
    access_ = Tokens();
    ASSERT_NE(access_, nullptr);
  }
  void StartWithTokens(queue::QueueLimits limits = {}, int max_watches = 32) {
    ServerOptions o;
    o.access = access_;
    o.max_watches_per_client = max_watches;
    Start(o, limits);
    stub_ = PlaintextStub();
  }
  grpc::Status List(const std::string& token) {
    v1::ListJobsResponse resp;
    return stub_->ListJobs(Ctx(token).get(), v1::ListJobsRequest(), &resp);
  }
  grpc::Status Cancel(const std::string& token, int64_t job_id) {
    v1::CancelJobRequest req;
    req.set_job_id(job_id);
    v1::Job job;
    return stub_->CancelJob(Ctx(token).get(), req, &job);
  }
  // Opens a WatchJob stream and reads its first event (or its error).
  struct OpenWatch {
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader;
    bool first_read = false;
  };
  OpenWatch Watch(const std::string& token, int64_t job_id) {
    OpenWatch w;
    w.ctx = Ctx(token);
    v1::WatchJobRequest req;
    req.set_job_id(job_id);
    w.reader = stub_->WatchJob(w.ctx.get(), req);
    v1::JobEvent ev;
    w.first_read = w.reader->Read(&ev);
    return w;
  }

  std::shared_ptr<security::AccessControl> access_;
  std::unique_ptr<v1::GemmProf::Stub> stub_;
};

TEST_F(AuthTest, EveryMethodWithoutATokenIsUnauthenticated) {
  StartWithTokens();
  auto check = [](const grpc::Status& s, const char* what) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << what;
    EXPECT_EQ(s.error_message(),
              "no token: this gemmprofd requires one (authorization: Bearer <token>)")
        << what;
  };
  check(List(""), "ListJobs");
  v1::SubmitJobResponse submitted;
  check(stub_->SubmitJob(Ctx("").get(), OneShape(), &submitted), "SubmitJob");
  v1::PlanJobResponse plan;
  check(stub_->PlanJob(Ctx("").get(), OneShape(), &plan), "PlanJob");
  v1::Job job;
  check(stub_->GetJob(Ctx("").get(), v1::GetJobRequest(), &job), "GetJob");
  check(Cancel("", 1), "CancelJob");
  v1::Report report;
  check(stub_->GetReport(Ctx("").get(), v1::GetReportRequest(), &report), "GetReport");
  v1::QueryResultsResponse results;
  check(stub_->QueryResults(Ctx("").get(), v1::QueryResultsRequest(), &results), "QueryResults");
  v1::ListDevicesResponse devices;
  check(stub_->ListDevices(Ctx("").get(), v1::ListDevicesRequest(), &devices), "ListDevices");
  OpenWatch w = Watch("", 1);
  EXPECT_FALSE(w.first_read);
  check(w.reader->Finish(), "WatchJob");
  auto ctx = Ctx("");
  auto stream = stub_->StreamResults(ctx.get(), v1::QueryResultsRequest());
  v1::Result r;
  EXPECT_FALSE(stream->Read(&r));
  check(stream->Finish(), "StreamResults");
  EXPECT_TRUE(store_->ListJobs({})->items.empty()) << "nothing was submitted";
}

TEST_F(AuthTest, UnknownTokensAreUnauthenticatedAndNeverEchoed) {
  StartWithTokens();
  const std::string guess = "gpt_a-guess-that-is-not-in-the-file";
  grpc::Status s = List(guess);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(s.error_message(), "unknown token");
  // A digest from the file is not a token.
  s = List(wire::TokenSha256Hex(kAdminToken));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AuthTest, AReadTokenListsButCannotSubmitOrCancel) {
  StartWithTokens();
  EXPECT_TRUE(List(kReadToken).ok());
  v1::PlanJobResponse plan;
  EXPECT_TRUE(stub_->PlanJob(Ctx(kReadToken).get(), OneShape(), &plan).ok());
  v1::ListDevicesResponse devices;
  EXPECT_TRUE(stub_->ListDevices(Ctx(kReadToken).get(), {}, &devices).ok());
  v1::SubmitJobResponse resp;
  grpc::Status s = stub_->SubmitJob(Ctx(kReadToken).get(), OneShape(), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(), "token 'alice' has role read; SubmitJob needs role submit");
  const int64_t job = Submit(*stub_, kSubmitToken);
  s = Cancel(kReadToken, job);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(), "token 'alice' has role read; CancelJob needs role submit");
}

TEST_F(AuthTest, JobsRecordWhoSubmittedThem) {
  StartWithTokens();
  const int64_t by_bob = Submit(*stub_, kSubmitToken);
  const int64_t by_root = Submit(*stub_, kAdminToken);
  v1::GetJobRequest req;
  req.set_job_id(by_bob);
  v1::Job job;
  ASSERT_TRUE(stub_->GetJob(Ctx(kReadToken).get(), req, &job).ok());
  EXPECT_EQ(job.submitted_by(), "bob");
  v1::ListJobsResponse list;
  ASSERT_TRUE(stub_->ListJobs(Ctx(kReadToken).get(), {}, &list).ok());
  ASSERT_EQ(list.jobs_size(), 2);
  EXPECT_EQ(list.jobs(0).id(), by_root);
  EXPECT_EQ(list.jobs(0).submitted_by(), "root");
  EXPECT_EQ(store_->GetJob(by_bob)->submitted_by, "bob");
}

TEST_F(AuthTest, ASubmitTokenCancelsItsOwnJobsOnly) {
  runner_.Hold();
  StartWithTokens();
  const int64_t running = Submit(*stub_, kSubmitToken);
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  const int64_t queued = Submit(*stub_, kSubmitToken);
  grpc::Status s = Cancel(kOtherSubmitToken, queued);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(), "job " + std::to_string(queued) +
                                   " was submitted by 'bob'; token 'carol' has role submit and "
                                   "may cancel only its own jobs (admin cancels any)");
  EXPECT_EQ(store_->GetJob(queued)->state, core::JobState::kQueued) << "left alone";
  EXPECT_TRUE(Cancel(kSubmitToken, queued).ok());
  EXPECT_EQ(store_->GetJob(queued)->state, core::JobState::kCancelled);
  EXPECT_TRUE(Cancel(kSubmitToken, running).ok());
  // Unknown jobs are NOT_FOUND for everyone, not a hint about owners.
  EXPECT_EQ(Cancel(kOtherSubmitToken, 999).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthTest, AnAdminCancelsAnyJob) {
  runner_.Hold();
  StartWithTokens();
  const int64_t running = Submit(*stub_, kSubmitToken);
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  const int64_t queued = Submit(*stub_, kOtherSubmitToken);
  EXPECT_TRUE(Cancel(kAdminToken, queued).ok());
  EXPECT_EQ(store_->GetJob(queued)->state, core::JobState::kCancelled);
  EXPECT_TRUE(Cancel(kAdminToken, running).ok());
}

TEST_F(AuthTest, ReloadedTokensApplyToTheNextCall) {
  StartWithTokens();
  testing::WriteTextFile(dir_.File("tokens"),
                         "alice admin " + wire::TokenSha256Hex(kReadToken) + "\n");
  ASSERT_TRUE(access_->Reload().ok());
  EXPECT_TRUE(Submit(*stub_, kReadToken) > 0);
  EXPECT_EQ(List(kSubmitToken).error_code(), grpc::StatusCode::UNAUTHENTICATED) << "bob is gone";
  testing::WriteTextFile(dir_.File("tokens"), "alice boss 00\n");
  EXPECT_FALSE(access_->Reload().ok());
  EXPECT_TRUE(List(kReadToken).ok()) << "a broken file keeps the previous tokens";
}

TEST_F(AuthTest, HealthCheckingStaysOpen) {
  StartWithTokens();
  grpc::GenericStub generic(grpc::CreateChannel(Address(), grpc::InsecureChannelCredentials()));
  grpc::ByteBuffer request;  // HealthCheckRequest{} is empty on the wire
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext ctx;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) { done.set_value(s); });
  grpc::Status status = done.get_future().get();
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(AuthTest, QueuedJobsAreLimited) {
  runner_.Hold();
  StartWithTokens({.max_queued_jobs = 2});
  const int64_t first = Submit(*stub_, kSubmitToken);
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  Submit(*stub_, kSubmitToken);
  v1::SubmitJobResponse resp;
  grpc::Status s = stub_->SubmitJob(Ctx(kAdminToken).get(), OneShape(), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("2 queued or running jobs"));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-queued-jobs 2"));
  // Planning is not queuing.
  v1::PlanJobResponse plan;
  EXPECT_TRUE(stub_->PlanJob(Ctx(kReadToken).get(), OneShape(), &plan).ok());
  ASSERT_TRUE(Cancel(kSubmitToken, first).ok());
  runner_.Release();
  for (int i = 0; i < 500 && !core::IsTerminal(store_->GetJob(first)->state); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The worker lets go of a job just after its final state is stored.
  grpc::Status freed;
  for (int i = 0; i < 100; ++i) {
    freed = stub_->SubmitJob(Ctx(kSubmitToken).get(), OneShape(), &resp);
    if (freed.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(freed.ok()) << "a slot came free: " << freed.error_message();
}

TEST_F(AuthTest, ItemsPerJobAreLimited) {
  StartWithTokens({.max_queued_jobs = 10, .max_items_per_job = 3});
  v1::SubmitJobRequest req = OneShape();
  for (int i = 0; i < 3; ++i) *req.mutable_shapes()->add_shapes() = req.shapes().shapes(0);
  v1::SubmitJobResponse resp;
  grpc::Status s = stub_->SubmitJob(Ctx(kSubmitToken).get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("4 items exceed the limit of 3 per job"));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-items-per-job"));
  req.mutable_shapes()->mutable_shapes()->RemoveLast();
  EXPECT_TRUE(stub_->SubmitJob(Ctx(kSubmitToken).get(), req, &resp).ok());
}

TEST_F(AuthTest, WatchesArePerTokenAndLimited) {
  runner_.Hold();
  StartWithTokens({}, /*max_watches=*/2);
  const int64_t job = Submit(*stub_, kSubmitToken);
  OpenWatch a = Watch(kReadToken, job);
  OpenWatch b = Watch(kReadToken, job);
  ASSERT_TRUE(a.first_read && b.first_read);
  OpenWatch c = Watch(kReadToken, job);
  EXPECT_FALSE(c.first_read);
  grpc::Status s = c.reader->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.error_message(),
            "token 'alice' already has 2 open WatchJob streams, the limit (gemmprofd "
            "--max-watches-per-client 2); close one first");
  OpenWatch other = Watch(kSubmitToken, job);
  EXPECT_TRUE(other.first_read) << "bob has his own budget";
  // Closing one frees its slot once the server has seen the stream end.
  a.ctx->TryCancel();
  a.reader->Finish();
  bool reopened = false;
  for (int i = 0; i < 200 && !reopened; ++i) {
    OpenWatch d = Watch(kReadToken, job);
    reopened = d.first_read;
    if (!reopened) {
      d.reader->Finish();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } else {
      d.ctx->TryCancel();
      d.reader->Finish();
    }
  }
  EXPECT_TRUE(reopened);
  for (OpenWatch* w : {&b, &other}) {
    w->ctx->TryCancel();
    w->reader->Finish();
  }
}

TEST_F(AuthTest, WithoutTokensWatchesCountPerPeerAndEverythingIsAllowed) {
  runner_.Hold();
  ServerOptions o;
  o.max_watches_per_client = 1;
  Start(o);
  stub_ = PlaintextStub();
  const int64_t job = Submit(*stub_, "");
  EXPECT_EQ(store_->GetJob(job)->submitted_by, "");
  OpenWatch a = Watch("", job);
  ASSERT_TRUE(a.first_read);
  // Another connection from the same host counts against the same budget.
  auto other_stub = PlaintextStub();
  auto ctx = Ctx("");
  v1::WatchJobRequest req;
  req.set_job_id(job);
  auto reader = other_stub->WatchJob(ctx.get(), req);
  v1::JobEvent ev;
  EXPECT_FALSE(reader->Read(&ev));
  grpc::Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("client ipv4:127.0.0.1 already has 1 open"));
  EXPECT_TRUE(Cancel("", job).ok());
  runner_.Release();  // the job may have started: it ends at its item boundary
  while (a.reader->Read(&ev)) {
  }
  EXPECT_TRUE(a.reader->Finish().ok());
}

}  // namespace
}  // namespace gemmprof::api
