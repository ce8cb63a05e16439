// An in-process gemmprofd: SQLite store on a temp file, the fake runner, the real
// queue and gRPC server on an ephemeral port, and a client stub connected to it.
#pragma once

#include <grpcpp/create_channel.h>
#include <gtest/gtest.h>

#include <memory>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "server/api/server.h"
#include "server/storage/sqlite/sqlite_store.h"
#include "tests/support/fake_runner.h"
#include "tests/support/temp_dir.h"

namespace gemmprof::api {

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = storage::SqliteStore::Open(dir_.File("api.db"));
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    queue_ = std::make_unique<queue::JobQueue>(*store_, std::vector<device::Runner*>{&runner_});
    ASSERT_TRUE(queue_->Start().ok());
    auto server = Server::Start("127.0.0.1:0", *queue_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::GemmProf::NewStub(channel_);
  }

  void TearDown() override {
    runner_.Release();
    server_->Shutdown(std::chrono::milliseconds(100));
    queue_->Stop();
  }

  // A small shape-list submission with fast timing options.
  static v1::SubmitJobRequest ShapesRequest(std::initializer_list<std::array<int64_t, 3>> shapes) {
    v1::SubmitJobRequest req;
    for (const auto& s : shapes) {
      auto* shape = req.mutable_shapes()->add_shapes();
      shape->set_m(s[0]);
      shape->set_k(s[1]);
      shape->set_n(s[2]);
    }
    req.mutable_timing()->set_timed_iters(3);
    req.mutable_timing()->set_warmup_iters(1);
    return req;
  }

  // Follows the job's event stream to its end.
  std::vector<v1::JobEvent> Watch(int64_t job_id, grpc::Status* status) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::WatchJobRequest req;
    req.set_job_id(job_id);
    auto reader = stub_->WatchJob(&ctx, req);
    std::vector<v1::JobEvent> events;
    v1::JobEvent ev;
    while (reader->Read(&ev)) events.push_back(ev);
    *status = reader->Finish();
    return events;
  }

  testing::TempDir dir_;
  testing::FakeRunner runner_;
  std::unique_ptr<storage::SqliteStore> store_;
  std::unique_ptr<queue::JobQueue> queue_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::GemmProf::Stub> stub_;
};

}  // namespace gemmprof::api
