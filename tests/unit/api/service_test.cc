#include <grpcpp/generic/generic_stub.h>

#include <future>

#include "tests/unit/api/api_fixture.h"
#include "wire/convert.h"

namespace gemmprof::api {
namespace {

TEST_F(ApiTest, SubmitWatchAndReport) {
  auto req = ShapesRequest({{256, 128, 64}, {64, 64, 64}});
  req.add_recipes("bf16");
  req.add_recipes("nvfp4");
  grpc::ClientContext ctx;
  v1::SubmitJobResponse resp;
  ASSERT_TRUE(stub_->SubmitJob(&ctx, req, &resp).ok());
  EXPECT_GT(resp.job_id(), 0);
  EXPECT_EQ(resp.total_items(), 4);

  grpc::Status status;
  auto events = Watch(resp.job_id(), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().kind(), v1::JobEvent::SNAPSHOT);
  EXPECT_EQ(events.back().kind(), v1::JobEvent::JOB_FINISHED);
  EXPECT_EQ(events.back().job().state(), "succeeded");
  EXPECT_EQ(events.back().job().finished_items(), 4);

  grpc::ClientContext rctx;
  v1::GetReportRequest rreq;
  rreq.set_job_id(resp.job_id());
  v1::Report report;
  ASSERT_TRUE(stub_->GetReport(&rctx, rreq, &report).ok());
  ASSERT_EQ(report.items_size(), 4);
  int not_supported = 0;
  for (const auto& item : report.items()) {
    if (item.recipe() == "nvfp4") {
      EXPECT_EQ(item.status(), "not_supported");
      EXPECT_EQ(item.error(), "nvfp4 needs sm_100+, this is sm_90");
      ++not_supported;
    } else {
      EXPECT_EQ(item.status(), "done");
      EXPECT_GT(item.result().time().median_ms(), 0);
    }
  }
  EXPECT_EQ(not_supported, 2);
  EXPECT_EQ(report.job().device().name(), "Fake GPU");

  // A watcher that arrives after the end still gets the state, then the end.
  auto late = Watch(resp.job_id(), &status);
  ASSERT_EQ(late.size(), 2u);
  EXPECT_EQ(late[0].kind(), v1::JobEvent::SNAPSHOT);
  EXPECT_EQ(late[1].kind(), v1::JobEvent::JOB_FINISHED);
}

TEST_F(ApiTest, ReconnectingWatcherGetsCurrentStateFirst) {
  runner_.Hold();
  grpc::ClientContext ctx;
  v1::SubmitJobResponse resp;
  ASSERT_TRUE(stub_->SubmitJob(&ctx, ShapesRequest({{64, 64, 64}, {32, 32, 32}}), &resp).ok());
  ASSERT_TRUE(runner_.WaitForRunsStarted(1));
  {
    grpc::ClientContext wctx;
    v1::WatchJobRequest wreq;
    wreq.set_job_id(resp.job_id());
    auto reader = stub_->WatchJob(&wctx, wreq);
    v1::JobEvent first;
    ASSERT_TRUE(reader->Read(&first));
    EXPECT_EQ(first.kind(), v1::JobEvent::SNAPSHOT);
    EXPECT_EQ(first.job().state(), "running");
    wctx.TryCancel();  // the client goes away mid-job
    reader->Finish();
  }
  runner_.Release();
  grpc::Status status;
  auto events = Watch(resp.job_id(), &status);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(events.front().kind(), v1::JobEvent::SNAPSHOT);
  EXPECT_EQ(events.back().kind(), v1::JobEvent::JOB_FINISHED);
}

TEST_F(ApiTest, BadRequestsGetInvalidArgumentNamingTheField) {
  struct Case {
    std::string name;
    std::function<void(v1::SubmitJobRequest&)> mutate;
    std::string expect_in_message;
  };
  std::vector<Case> cases = {
      {"no workload", [](auto& r) { r.clear_shapes(); }, "workload"},
      {"unknown recipe", [](auto& r) { r.add_recipes("fp16"); }, "fp8-current"},
      {"unknown mode", [](auto& r) { r.add_modes("eager"); }, "autocast"},
      {"unknown l2", [](auto& r) { r.mutable_timing()->set_l2("warm"); }, "timing.l2"},
      {"negative iterations", [](auto& r) { r.mutable_timing()->set_timed_iters(-5); }, "-5"},
      {"zero dimension", [](auto& r) { r.mutable_shapes()->mutable_shapes(0)->set_m(0); }, "0"},
      {"too many retries", [](auto& r) { r.set_retries(9); },
       "retries: 9 is out of range; give 0 (no retry) to 3"},
      {"negative retries", [](auto& r) { r.set_retries(-1); }, "retries: -1"},
      {"indivisible heads",
       [](auto& r) {
         auto* m = r.mutable_model();
         m->set_hidden_size(4095);
         m->set_intermediate_size(16384);
         m->set_num_attention_heads(32);
         m->set_num_hidden_layers(24);
         m->set_micro_batch_size(1);
         m->set_sequence_length(128);
       },
       "4095"},
  };
  for (const auto& c : cases) {
    auto req = ShapesRequest({{64, 64, 64}});
    c.mutate(req);
    grpc::ClientContext ctx;
    v1::SubmitJobResponse resp;
    auto status = stub_->SubmitJob(&ctx, req, &resp);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name;
    EXPECT_NE(status.error_message().find(c.expect_in_message), std::string::npos)
        << c.name << ": " << status.error_message();
  }
  grpc::ClientContext ctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(stub_->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0) << "rejected submissions store nothing";
}

TEST_F(ApiTest, UnknownJobsAreNotFound) {
  grpc::ClientContext c1, c2, c3;
  v1::GetJobRequest g;
  g.set_job_id(4242);
  v1::Job job;
  EXPECT_EQ(stub_->GetJob(&c1, g, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::CancelJobRequest c;
  c.set_job_id(4242);
  EXPECT_EQ(stub_->CancelJob(&c2, c, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  v1::GetReportRequest r;
  r.set_job_id(4242);
  v1::Report report;
  EXPECT_EQ(stub_->GetReport(&c3, r, &report).error_code(), grpc::StatusCode::NOT_FOUND);
  grpc::Status status;
  auto events = Watch(4242, &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(events.empty());
}

TEST_F(ApiTest, PlanDerivesTheSeedModelWithoutStoringIt) {
  v1::SubmitJobRequest req;
  auto* m = req.mutable_model();
  m->set_hidden_size(4096);
  m->set_intermediate_size(16384);
  m->set_num_attention_heads(32);
  m->set_num_hidden_layers(24);
  m->set_micro_batch_size(31);
  m->set_sequence_length(512);
  req.add_recipes("bf16");
  grpc::ClientContext ctx;
  v1::PlanJobResponse plan;
  ASSERT_TRUE(stub_->PlanJob(&ctx, req, &plan).ok());
  ASSERT_EQ(plan.ops_size(), 12);
  EXPECT_EQ(plan.num_layers(), 24);
  EXPECT_EQ(plan.ops(0).shape().m(), 15872);
  EXPECT_EQ(plan.ops(0).shape().n(), 12288);
  EXPECT_EQ(plan.total_items(), 12);
  grpc::ClientContext lctx;
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(stub_->ListJobs(&lctx, v1::ListJobsRequest(), &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
}

TEST_F(ApiTest, ListJobsPagesNewestFirstAndFiltersByState) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    grpc::ClientContext ctx;
    v1::SubmitJobResponse resp;
    ASSERT_TRUE(stub_->SubmitJob(&ctx, ShapesRequest({{8 + i, 8, 8}}), &resp).ok());
    ids.push_back(resp.job_id());
  }
  for (int64_t id : ids) {
    grpc::Status s;
    Watch(id, &s);
  }
  v1::ListJobsRequest req;
  req.set_page_size(2);
  std::vector<int64_t> seen;
  do {
    grpc::ClientContext ctx;
    v1::ListJobsResponse resp;
    ASSERT_TRUE(stub_->ListJobs(&ctx, req, &resp).ok());
    for (const auto& j : resp.jobs()) seen.push_back(j.id());
    req.set_page_token(resp.next_page_token());
  } while (!req.page_token().empty());
  EXPECT_EQ(seen, std::vector<int64_t>(ids.rbegin(), ids.rend()));

  grpc::ClientContext bad;
  v1::ListJobsRequest bad_req;
  bad_req.set_state("sleeping");
  v1::ListJobsResponse resp;
  EXPECT_EQ(stub_->ListJobs(&bad, bad_req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext ok;
  v1::ListJobsRequest queued;
  queued.set_state("queued");
  ASSERT_TRUE(stub_->ListJobs(&ok, queued, &resp).ok());
  EXPECT_EQ(resp.jobs_size(), 0);
}

TEST_F(ApiTest, QueryAndStreamResults) {
  auto req = ShapesRequest({{64, 64, 64}, {128, 64, 32}});
  req.add_recipes("bf16");
  req.add_recipes("fp8-current");
  grpc::ClientContext ctx;
  v1::SubmitJobResponse resp;
  ASSERT_TRUE(stub_->SubmitJob(&ctx, req, &resp).ok());
  grpc::Status s;
  Watch(resp.job_id(), &s);

  v1::QueryResultsRequest q;
  q.set_recipe("fp8-current");
  grpc::ClientContext qctx;
  v1::QueryResultsResponse results;
  ASSERT_TRUE(stub_->QueryResults(&qctx, q, &results).ok());
  ASSERT_EQ(results.results_size(), 2);
  for (const auto& r : results.results()) {
    EXPECT_EQ(r.item().recipe(), "fp8-current");
    EXPECT_EQ(r.device().name(), "Fake GPU");
    EXPECT_EQ(r.timing().timed_iters(), 3);
  }
  q.set_m(128);
  grpc::ClientContext mctx;
  ASSERT_TRUE(stub_->QueryResults(&mctx, q, &results).ok());
  EXPECT_EQ(results.results_size(), 1);

  v1::QueryResultsRequest all;
  grpc::ClientContext sctx;
  auto reader = stub_->StreamResults(&sctx, all);
  v1::Result row;
  int rows = 0;
  while (reader->Read(&row)) ++rows;
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(rows, 4);

  for (auto mutate : std::vector<std::function<void(v1::QueryResultsRequest&)>>{
           [](auto& r) { r.set_recipe("int4"); }, [](auto& r) { r.set_pass("backward"); },
           [](auto& r) { r.set_m(-3); }, [](auto& r) { r.set_page_size(-1); }}) {
    v1::QueryResultsRequest bad;
    mutate(bad);
    grpc::ClientContext bctx;
    EXPECT_EQ(stub_->QueryResults(&bctx, bad, &results).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    grpc::ClientContext sbctx;
    auto breader = stub_->StreamResults(&sbctx, bad);
    while (breader->Read(&row)) {
    }
    EXPECT_EQ(breader->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(ApiTest, ListDevicesSaysWhatIsSupportedAndWhy) {
  grpc::ClientContext ctx;
  v1::ListDevicesResponse resp;
  ASSERT_TRUE(stub_->ListDevices(&ctx, v1::ListDevicesRequest(), &resp).ok());
  ASSERT_EQ(resp.devices_size(), 1);
  const auto& d = resp.devices(0);
  EXPECT_EQ(d.sm(), 90);
  ASSERT_EQ(d.recipes_size(), static_cast<int>(core::AllRecipes().size()));
  for (const auto& r : d.recipes()) {
    EXPECT_EQ(r.supported(), r.recipe() != "mxfp8" && r.recipe() != "nvfp4") << r.recipe();
    if (!r.supported()) EXPECT_NE(r.reason().find("sm_100"), std::string::npos);
  }
}

TEST_F(ApiTest, ListDaemonsAnswersTheStoresRecordsAndItsClock) {
  core::DaemonRecord a;
  a.node = "gpu-a";
  a.backend = "cuda";
  a.models = {{"NVIDIA H200", 2, 0}};
  a.devices = 2;
  a.busy = 1;
  a.heartbeat_unix_ms = 1234;
  ASSERT_TRUE(store_->PutDaemon(a).ok());
  grpc::ClientContext ctx;
  v1::ListDaemonsResponse resp;
  ASSERT_TRUE(stub_->ListDaemons(&ctx, v1::ListDaemonsRequest(), &resp).ok());
  ASSERT_EQ(resp.daemons_size(), 1);
  const core::DaemonRecord got = wire::FromProto(resp.daemons(0));
  EXPECT_EQ(got.node, "gpu-a");
  EXPECT_EQ(got.busy, 1);
  ASSERT_EQ(got.models.size(), 1u);
  EXPECT_EQ(got.models[0].count, 2);
  EXPECT_EQ(got.heartbeat_unix_ms, 1234);
  EXPECT_GT(resp.now_unix_ms(), int64_t{1'700'000'000'000});  // the daemon's wall clock
}

TEST_F(ApiTest, HealthCheckReportsServingPerService) {
  grpc::GenericStub generic(channel_);
  // grpc.health.v1.HealthCheckRequest{service = kServiceName}, encoded by hand: field 1,
  // wire type 2 (length-delimited).
  std::string name = kServiceName;
  std::string bytes = std::string("\x0a", 1) + static_cast<char>(name.size()) + name;
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext ctx;
  std::promise<grpc::Status> done;
  generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) { done.set_value(s); });
  auto status = done.get_future().get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string out;
  for (const auto& s : slices)
    out += std::string(reinterpret_cast<const char*>(s.begin()), s.size());
  EXPECT_EQ(out, std::string("\x08\x01", 2)) << "status = SERVING";
}

TEST_F(ApiTest, ReflectionListsTheService) {
  // grpc.reflection.v1alpha.ServerReflectionRequest{list_services: ""}, encoded by hand
  // (field 7, length-delimited, empty), over the generic bidi-streaming call.
  grpc::GenericStub generic(channel_);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = generic.PrepareCall(
      &ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&](int expected) {
    ASSERT_TRUE(cq.Next(&tag, &ok));
    ASSERT_TRUE(ok);
    ASSERT_EQ(tag, reinterpret_cast<void*>(expected));
  };
  call->StartCall(reinterpret_cast<void*>(1));
  step(1);
  std::string bytes("\x3a\x00", 2);
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  step(2);
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(3));
  step(3);
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string out;
  for (const auto& s : slices)
    out += std::string(reinterpret_cast<const char*>(s.begin()), s.size());
  EXPECT_NE(out.find(kServiceName), std::string::npos);
  EXPECT_NE(out.find("grpc.health.v1.Health"), std::string::npos);
  call->WritesDone(reinterpret_cast<void*>(4));
  step(4);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(5);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace gemmprof::api
