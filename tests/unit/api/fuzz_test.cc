// Throws randomized and malformed requests at a live in-process server: every call
// must come back with a status (OK or an error), and the server must still answer.
#include <grpcpp/generic/generic_stub.h>

#include <future>
#include <limits>
#include <random>

#include "tests/unit/api/api_fixture.h"

namespace gemmprof::api {
namespace {

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  int64_t Int() {
    static const int64_t kEdges[] = {0,
                                     -1,
                                     1,
                                     2,
                                     16,
                                     128,
                                     4095,
                                     4096,
                                     15872,
                                     1 << 20,
                                     std::numeric_limits<int32_t>::max(),
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min()};
    if (Coin()) return kEdges[rng_() % std::size(kEdges)];
    return static_cast<int64_t>(rng_() % 512) - 16;
  }
  std::string Word() {
    static const char* kWords[] = {
        "bf16", "fp8-current", "nvfp4", "autocast", "prequant",          "hot", "cold",
        "",     "FP8",         "max",   "per-gemm", "\xc3\xa9t\xc3\xa9", "a,b"};
    if (Coin()) return kWords[rng_() % std::size(kWords)];
    // Printable ASCII: proto3 strings must be UTF-8 (raw bytes are the wire test's job).
    std::string s(rng_() % 12, ' ');
    for (auto& c : s) c = static_cast<char>(32 + rng_() % 95);
    return s;
  }
  bool Coin() { return rng_() % 2 == 0; }

  // A valid small request with 0-3 fields replaced by random or edge values, so both
  // the accepting and the rejecting paths are exercised.
  v1::SubmitJobRequest Request() {
    v1::SubmitJobRequest r;
    if (Coin()) {
      auto* m = r.mutable_model();
      m->set_hidden_size(64);
      m->set_intermediate_size(128);
      m->set_num_attention_heads(4);
      m->set_num_hidden_layers(2);
      m->set_micro_batch_size(2);
      m->set_sequence_length(16);
    } else {
      auto* s = r.mutable_shapes()->add_shapes();
      s->set_m(32);
      s->set_k(16);
      s->set_n(48);
    }
    r.add_recipes("bf16");
    r.mutable_timing()->set_timed_iters(2);
    const std::vector<std::function<void()>> mutations = {
        [&] { r.mutable_model()->set_hidden_size(Int()); },
        [&] { r.mutable_model()->set_num_attention_heads(Int()); },
        [&] { r.mutable_model()->set_num_key_value_heads(Int()); },
        [&] { r.mutable_model()->set_num_hidden_layers(Int()); },
        [&] { r.mutable_model()->set_micro_batch_size(Int()); },
        [&] { r.mutable_model()->set_sequence_length(Int()); },
        [&] { r.mutable_model()->set_vocab_size(Int()); },
        [&] { r.mutable_model()->set_hidden_act(Word()); },
        [&] { r.mutable_model()->set_num_experts(Int()); },
        [&] { r.mutable_model()->set_experts_per_token(Int()); },
        [&] { r.mutable_model()->set_tensor_parallel(Int()); },
        [&] { r.mutable_model()->set_moe_skew(static_cast<double>(Int()) / 7.0); },
        [&] {
          auto* s = r.mutable_shapes()->add_shapes();
          s->set_m(Int());
          s->set_k(Int());
          s->set_n(Int());
        },
        [&] { r.add_recipes(Word()); },
        [&] { r.add_modes(Word()); },
        [&] { r.mutable_timing()->set_warmup_iters(static_cast<int32_t>(Int())); },
        [&] { r.mutable_timing()->set_timed_iters(static_cast<int32_t>(Int())); },
        [&] { r.mutable_timing()->set_autotune_k(static_cast<int32_t>(Int())); },
        [&] { r.mutable_timing()->set_l2(Word()); },
        [&] { r.mutable_timing()->set_accounting(Word()); },
        [&] { r.mutable_timing()->set_amax_history_len(static_cast<int32_t>(Int())); },
        [&] { r.mutable_timing()->set_gpu_warmup_s(static_cast<double>(Int())); },
    };
    for (int i = rng_() % 4; i > 0; --i) mutations[rng_() % mutations.size()]();
    return r;
  }

  std::string Bytes() {
    std::string s(rng_() % 64, ' ');
    for (auto& c : s) c = static_cast<char>(rng_() % 256);
    return s;
  }

 private:
  std::mt19937_64 rng_;
};

TEST_F(ApiTest, RandomizedRequestsNeverCrashTheDaemon) {
  Fuzzer fuzz(20261122);
  int ok = 0, rejected = 0;
  for (int i = 0; i < 400; ++i) {
    auto req = fuzz.Request();
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status;
    if (i % 2 == 0) {
      v1::PlanJobResponse plan;
      status = stub_->PlanJob(&ctx, req, &plan);
    } else {
      v1::SubmitJobResponse resp;
      status = stub_->SubmitJob(&ctx, req, &resp);
    }
    ASSERT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE) << "daemon died at " << i;
    ASSERT_NE(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << i;
    if (status.ok()) {
      ++ok;
    } else {
      ++rejected;
      EXPECT_FALSE(status.error_message().empty()) << status.error_code();
    }
  }
  EXPECT_GT(rejected, 0);
  grpc::ClientContext ctx;
  v1::ListDevicesResponse devices;
  EXPECT_TRUE(stub_->ListDevices(&ctx, v1::ListDevicesRequest(), &devices).ok());
  std::cout << "fuzz: " << ok << " accepted, " << rejected << " rejected\n";
}

TEST_F(ApiTest, MalformedWireBytesAreRejected) {
  Fuzzer fuzz(7);
  grpc::GenericStub generic(channel_);
  const char* methods[] = {"/gemmprof.v1.GemmProf/SubmitJob", "/gemmprof.v1.GemmProf/PlanJob",
                           "/gemmprof.v1.GemmProf/GetReport", "/gemmprof.v1.GemmProf/QueryResults",
                           "/gemmprof.v1.GemmProf/CancelJob"};
  for (int i = 0; i < 200; ++i) {
    std::string bytes = fuzz.Bytes();
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    std::promise<grpc::Status> done;
    generic.UnaryCall(&ctx, methods[i % std::size(methods)], grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) { done.set_value(s); });
    auto status = done.get_future().get();
    ASSERT_NE(status.error_code(), grpc::StatusCode::UNAVAILABLE) << "daemon died at " << i;
  }
  grpc::ClientContext ctx;
  v1::ListDevicesResponse devices;
  EXPECT_TRUE(stub_->ListDevices(&ctx, v1::ListDevicesRequest(), &devices).ok());
}

}  // namespace
}  // namespace gemmprof::api
