#include "client/transport.h"

#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdlib>

#include "client/call_errors.h"
#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "wire/convert.h"
#include "wire/token.h"

namespace gemmprof::client {
namespace {

namespace v1 = ::gemmprof::v1;

std::chrono::system_clock::time_point In(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// gRPC logs handshake and connection errors to stderr on its own; the CLI says what
// went wrong in one line instead. GRPC_VERBOSITY set by the user keeps gRPC's logging.
void DropLog(gpr_log_func_args*) {}
void QuietGrpcLog() {
  if (std::getenv("GRPC_VERBOSITY") == nullptr) gpr_set_log_function(&DropLog);
}

// Keepalive pings find a connection that died silently (a laptop changing networks)
// while `watch` waits; gRPC servers accept a ping every 5 minutes by default.
constexpr int kKeepaliveTimeMs = 330'000;
constexpr int kKeepaliveTimeoutMs = 20'000;
// gRPC's own reconnect backoff grows to 2 minutes; `watch` retries sooner than that.
constexpr int kMaxReconnectBackoffMs = 5'000;

grpc::ChannelArguments ChannelArgs(const ConnectionSettings& settings) {
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(RetryServiceConfigJson());
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
  if (!settings.tls_server_name.empty()) args.SetSslTargetNameOverride(settings.tls_server_name);
  return args;
}

}  // namespace

struct Transport::Impl {
  ConnectionSettings settings;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::GemmProf::Stub> stub;

  absl::Status Check(const grpc::Status& s) const {
    return DescribeCallError(static_cast<absl::StatusCode>(s.error_code()), s.error_message(),
                             settings);
  }

  // Adds what every call carries: the token (never logged) and, for unary calls, the
  // deadline.
  void Prepare(grpc::ClientContext& ctx, bool unary) const {
    if (!settings.token.empty())
      ctx.AddMetadata(wire::kAuthorizationHeader, wire::kBearerPrefix + settings.token);
    if (unary) ctx.set_deadline(In(settings.timeout_s));
  }

  // Runs one unary call.
  template <typename Req, typename Resp, typename Method>
  absl::StatusOr<Resp> Call(Method method, const Req& req) {
    grpc::ClientContext ctx;
    Prepare(ctx, /*unary=*/true);
    Resp resp;
    RETURN_IF_ERROR(Check(((*stub).*method)(&ctx, req, &resp)));
    return resp;
  }
};

Transport::Transport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transport::~Transport() = default;

const std::vector<std::string_view>& RetriedMethods() {
  static const std::vector<std::string_view> methods = {
      "GetJob", "ListJobs", "GetReport", "QueryResults", "ListDevices", "PlanJob", "ListDaemons"};
  return methods;
}

std::string RetryServiceConfigJson() {
  std::string names;
  for (std::string_view m : RetriedMethods())
    names += std::string(names.empty() ? "" : ",") +
             R"({"service":"gemmprof.v1.GemmProf","method":")" + std::string(m) + R"("})";
  // A daemon restart takes a few seconds: 5 attempts over about 4 s ride it out, and
  // a dead daemon is reported soon enough.
  return R"({"methodConfig":[{"name":[)" + names +
         R"(],"retryPolicy":{"maxAttempts":5,"initialBackoff":"0.25s","maxBackoff":"4s",)"
         R"("backoffMultiplier":2,"retryableStatusCodes":["UNAVAILABLE"]}}]})";
}

absl::StatusOr<std::unique_ptr<GemmProfClient>> Transport::Connect(
    const ConnectionSettings& settings) {
  QuietGrpcLog();
  auto impl = std::make_unique<Impl>();
  impl->settings = settings;
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (settings.tls) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = settings.tls_ca_pem;  // empty: the system's roots
    tls.pem_cert_chain = settings.tls_cert_pem;
    tls.pem_private_key = settings.tls_key_pem;
    credentials = grpc::SslCredentials(tls);
    if (credentials == nullptr)
      return absl::InternalError("cannot set up TLS for " + settings.address);
  }
  impl->channel = grpc::CreateCustomChannel(settings.address, credentials, ChannelArgs(settings));
  impl->stub = v1::GemmProf::NewStub(impl->channel);
  return std::unique_ptr<GemmProfClient>(new Transport(std::move(impl)));
}

absl::StatusOr<SubmitResult> Transport::SubmitJob(const core::JobSpec& spec) {
  ASSIGN_OR_RETURN(const v1::SubmitJobResponse resp,
                   (impl_->Call<v1::SubmitJobRequest, v1::SubmitJobResponse>(
                       &v1::GemmProf::Stub::SubmitJob, wire::ToProto(spec))));
  return SubmitResult{resp.job_id(), resp.total_items()};
}

absl::Status Transport::WatchJob(
    int64_t job_id, const std::function<absl::Status(const core::JobEvent&)>& on_event) {
  // No deadline: a job may run for hours. A dead connection ends the stream through
  // keepalive.
  grpc::ClientContext ctx;
  impl_->Prepare(ctx, /*unary=*/false);
  v1::WatchJobRequest req;
  req.set_job_id(job_id);
  auto reader = impl_->stub->WatchJob(&ctx, req);
  v1::JobEvent event;
  bool finished = false;
  absl::Status stopped;
  while (stopped.ok() && reader->Read(&event)) {
    auto e = wire::FromProto(event);
    stopped = e.ok() ? on_event(*e) : e.status();
    finished |= e.ok() && e->kind == core::JobEvent::Kind::kJobFinished;
  }
  if (!stopped.ok()) {
    ctx.TryCancel();
    reader->Finish().IgnoreError();
    return stopped;
  }
  const grpc::Status end = reader->Finish();
  // The client never cancels a watch it still reads, so CANCELLED means the daemon (a
  // restart) or the network ended it: as good as a lost connection.
  if (end.error_code() == grpc::StatusCode::CANCELLED)
    return absl::UnavailableError("the watch stream of job " + std::to_string(job_id) +
                                  " was cancelled by " + impl_->settings.address + " (" +
                                  end.error_message() + ")");
  RETURN_IF_ERROR(impl_->Check(end));
  if (!finished)
    return absl::UnavailableError("the watch stream of job " + std::to_string(job_id) +
                                  " ended before the job finished");
  return absl::OkStatus();
}

absl::StatusOr<core::JobRecord> Transport::GetJob(int64_t job_id) {
  v1::GetJobRequest req;
  req.set_job_id(job_id);
  ASSIGN_OR_RETURN(const v1::Job job,
                   (impl_->Call<v1::GetJobRequest, v1::Job>(&v1::GemmProf::Stub::GetJob, req)));
  return wire::FromProto(job);
}

absl::StatusOr<std::vector<core::JobRecord>> Transport::ListJobs(
    std::optional<core::JobState> state, int32_t limit, const std::string& node,
    const std::string& campaign) {
  core::JobFilter filter;
  filter.state = state;
  if (!node.empty()) filter.node = node;
  if (!campaign.empty()) filter.campaign = campaign;
  filter.page_size = limit;
  const v1::ListJobsRequest req = wire::ToProto(filter);
  ASSIGN_OR_RETURN(
      const v1::ListJobsResponse resp,
      (impl_->Call<v1::ListJobsRequest, v1::ListJobsResponse>(&v1::GemmProf::Stub::ListJobs, req)));
  std::vector<core::JobRecord> jobs;
  for (const v1::Job& j : resp.jobs()) {
    ASSIGN_OR_RETURN(core::JobRecord job, wire::FromProto(j));
    jobs.push_back(std::move(job));
    if (static_cast<int32_t>(jobs.size()) >= limit) break;
  }
  return jobs;
}

absl::StatusOr<core::JobRecord> Transport::CancelJob(int64_t job_id) {
  v1::CancelJobRequest req;
  req.set_job_id(job_id);
  ASSIGN_OR_RETURN(const v1::Job job, (impl_->Call<v1::CancelJobRequest, v1::Job>(
                                          &v1::GemmProf::Stub::CancelJob, req)));
  return wire::FromProto(job);
}

absl::StatusOr<core::Report> Transport::GetReport(int64_t job_id) {
  v1::GetReportRequest req;
  req.set_job_id(job_id);
  ASSIGN_OR_RETURN(const v1::Report report, (impl_->Call<v1::GetReportRequest, v1::Report>(
                                                &v1::GemmProf::Stub::GetReport, req)));
  return wire::FromProto(report);
}

absl::StatusOr<std::vector<core::ResultRow>> Transport::QueryResults(
    const core::ResultFilter& filter, int32_t limit) {
  core::ResultFilter page = filter;
  page.page_token.clear();
  std::vector<core::ResultRow> rows;
  // Pages until the limit is met or the server has no more.
  do {
    page.page_size = std::min(limit - static_cast<int32_t>(rows.size()), 1000);
    ASSIGN_OR_RETURN(const v1::QueryResultsResponse resp,
                     (impl_->Call<v1::QueryResultsRequest, v1::QueryResultsResponse>(
                         &v1::GemmProf::Stub::QueryResults, wire::ToProto(page))));
    for (const v1::Result& r : resp.results()) {
      ASSIGN_OR_RETURN(core::ResultRow row, wire::FromProto(r));
      if (static_cast<int32_t>(rows.size()) < limit) rows.push_back(std::move(row));
    }
    page.page_token = resp.next_page_token();
  } while (!page.page_token.empty() && static_cast<int32_t>(rows.size()) < limit);
  return rows;
}

absl::StatusOr<core::DaemonListing> Transport::ListDaemons() {
  ASSIGN_OR_RETURN(const v1::ListDaemonsResponse resp,
                   (impl_->Call<v1::ListDaemonsRequest, v1::ListDaemonsResponse>(
                       &v1::GemmProf::Stub::ListDaemons, v1::ListDaemonsRequest())));
  core::DaemonListing out;
  out.now_unix_ms = resp.now_unix_ms();
  for (const v1::Daemon& d : resp.daemons()) out.daemons.push_back(wire::FromProto(d));
  return out;
}

absl::StatusOr<std::vector<core::DeviceInfo>> Transport::ListDevices() {
  ASSIGN_OR_RETURN(const v1::ListDevicesResponse resp,
                   (impl_->Call<v1::ListDevicesRequest, v1::ListDevicesResponse>(
                       &v1::GemmProf::Stub::ListDevices, v1::ListDevicesRequest())));
  std::vector<core::DeviceInfo> devices;
  for (const v1::Device& d : resp.devices()) {
    ASSIGN_OR_RETURN(core::DeviceInfo device, wire::FromProto(d));
    devices.push_back(std::move(device));
  }
  return devices;
}

}  // namespace gemmprof::client
