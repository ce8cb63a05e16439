#include "server/api/service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "server/api/watch_reactor.h"
#include "wire/convert.h"
#include "wire/grpc_status.h"
#include "wire/token.h"

namespace gemmprof::api {

// Handlers convert with wire/ (FromProto -> domain -> ToProto), shared with the client.
using wire::FromProto;
using wire::ToGrpcStatus;
using wire::ToProto;

namespace {

grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* ctx, const absl::Status& status) {
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// A streaming reactor that only reports an error.
template <typename T>
class ErrorWriter final : public grpc::ServerWriteReactor<T> {
 public:
  explicit ErrorWriter(const absl::Status& s) { this->Finish(ToGrpcStatus(s)); }
  void OnDone() override { delete this; }
};

std::vector<std::string_view> AuthorizationValues(const grpc::CallbackServerContext* ctx) {
  std::vector<std::string_view> values;
  const auto range = ctx->client_metadata().equal_range(wire::kAuthorizationHeader);
  for (auto it = range.first; it != range.second; ++it) {
    values.emplace_back(it->second.data(), it->second.size());
  }
  return values;
}

// Streams every row matching a filter, a page of the store at a time.
class ResultsReactor final : public grpc::ServerWriteReactor<v1::Result> {
 public:
  ResultsReactor(storage::ResultStore& store, storage::ResultFilter filter)
      : store_(store), filter_(std::move(filter)) {
    filter_.page_size = 1000;
    Next();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream write failed"));
    Next();
  }
  void OnDone() override { delete this; }

 private:
  void Next() {
    if (rows_.empty() && !exhausted_) {
      auto page = store_.QueryResults(filter_);
      if (!page.ok()) return Finish(ToGrpcStatus(page.status()));
      rows_.assign(page->items.begin(), page->items.end());
      filter_.page_token = page->next_page_token;
      exhausted_ = page->next_page_token.empty();
    }
    if (rows_.empty()) return Finish(grpc::Status::OK);
    current_ = ToProto(rows_.front());
    rows_.pop_front();
    StartWrite(&current_);
  }

  storage::ResultStore& store_;
  storage::ResultFilter filter_;
  std::deque<storage::ResultRow> rows_;
  bool exhausted_ = false;
  v1::Result current_;
};

}  // namespace

GemmProfService::GemmProfService(queue::JobQueue& queue,
                                 std::shared_ptr<const security::AccessControl> access,
                                 int max_watches_per_client)
    : queue_(queue),
      access_(access ? std::move(access) : std::make_shared<const security::AccessControl>()),
      watches_(max_watches_per_client) {}

absl::StatusOr<security::Caller> GemmProfService::Authorize(grpc::CallbackServerContext* ctx,
                                                            std::string_view method) const {
  auto caller = access_->Authorize(AuthorizationValues(ctx), method);
  // Refusals are logged without the header: it may hold a real token with a typo.
  if (caller.status().code() == absl::StatusCode::kPermissionDenied) {
    spdlog::info("{} from {} refused: {}", method, ctx->peer(),
                 std::string(caller.status().message()));
  } else if (!caller.ok()) {
    spdlog::debug("{} from {} refused: {}", method, ctx->peer(),
                  std::string(caller.status().message()));
  }
  return caller;
}

grpc::ServerUnaryReactor* GemmProfService::SubmitJob(grpc::CallbackServerContext* ctx,
                                                     const v1::SubmitJobRequest* req,
                                                     v1::SubmitJobResponse* resp) {
  auto caller = Authorize(ctx, "SubmitJob");
  if (!caller.ok()) return Reply(ctx, caller.status());
  auto spec = FromProto(*req);
  if (!spec.ok()) return Reply(ctx, spec.status());
  // Priority jumps the cluster queue's fair share: admins only.
  if (spec->priority != 0 && caller->role != security::Role::kAdmin) {
    return Reply(ctx, absl::PermissionDeniedError(absl::StrCat(
                          "priority: ", spec->priority, " needs an admin token; token '",
                          caller->name, "' may submit with the default priority 0 only")));
  }
  auto job = queue_.Submit(*spec, caller->name);
  if (!job.ok()) return Reply(ctx, job.status());
  resp->set_job_id(job->id);
  resp->set_total_items(job->total_items);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::JobEvent>* GemmProfService::WatchJob(grpc::CallbackServerContext* ctx,
                                                                  const v1::WatchJobRequest* req) {
  auto caller = Authorize(ctx, "WatchJob");
  if (!caller.ok()) return new ErrorWriter<v1::JobEvent>(caller.status());
  const std::string peer = ctx->peer();
  auto lease = watches_.Acquire(security::WatchClientKey(caller->name, peer),
                                security::WatchClientLabel(caller->name, peer));
  if (!lease.ok()) return new ErrorWriter<v1::JobEvent>(lease.status());
  return new WatchReactor(queue_, req->job_id(), *std::move(lease));
}

grpc::ServerUnaryReactor* GemmProfService::GetJob(grpc::CallbackServerContext* ctx,
                                                  const v1::GetJobRequest* req, v1::Job* resp) {
  if (auto caller = Authorize(ctx, "GetJob"); !caller.ok()) return Reply(ctx, caller.status());
  auto job = queue_.store().GetJob(req->job_id());
  if (job.ok()) *resp = ToProto(*job);
  return Reply(ctx, job.status());
}

grpc::ServerUnaryReactor* GemmProfService::ListJobs(grpc::CallbackServerContext* ctx,
                                                    const v1::ListJobsRequest* req,
                                                    v1::ListJobsResponse* resp) {
  if (auto caller = Authorize(ctx, "ListJobs"); !caller.ok()) return Reply(ctx, caller.status());
  auto filter = FromProto(*req);
  if (!filter.ok()) return Reply(ctx, filter.status());
  auto page = queue_.store().ListJobs(*filter);
  if (!page.ok()) return Reply(ctx, page.status());
  for (const auto& job : page->items) *resp->add_jobs() = ToProto(job);
  resp->set_next_page_token(page->next_page_token);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GemmProfService::CancelJob(grpc::CallbackServerContext* ctx,
                                                     const v1::CancelJobRequest* req,
                                                     v1::Job* resp) {
  auto caller = Authorize(ctx, "CancelJob");
  if (!caller.ok()) return Reply(ctx, caller.status());
  auto owned = queue_.store().GetJob(req->job_id());
  if (!owned.ok()) return Reply(ctx, owned.status());
  if (auto s = security::CheckCanCancel(*caller, req->job_id(), owned->submitted_by); !s.ok()) {
    spdlog::info("CancelJob from {} refused: {}", ctx->peer(), std::string(s.message()));
    return Reply(ctx, s);
  }
  auto job = queue_.Cancel(req->job_id());
  if (job.ok()) *resp = ToProto(*job);
  return Reply(ctx, job.status());
}

grpc::ServerUnaryReactor* GemmProfService::PlanJob(grpc::CallbackServerContext* ctx,
                                                   const v1::SubmitJobRequest* req,
                                                   v1::PlanJobResponse* resp) {
  if (auto caller = Authorize(ctx, "PlanJob"); !caller.ok()) return Reply(ctx, caller.status());
  auto spec = FromProto(*req);
  if (!spec.ok()) return Reply(ctx, spec.status());
  auto planned = queue_.Plan(*spec);
  if (!planned.ok()) return Reply(ctx, planned.status());
  *resp = ToProto(planned->plan, planned->recipes, planned->modes,
                  static_cast<int32_t>(planned->items.size()));
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GemmProfService::GetReport(grpc::CallbackServerContext* ctx,
                                                     const v1::GetReportRequest* req,
                                                     v1::Report* resp) {
  if (auto caller = Authorize(ctx, "GetReport"); !caller.ok()) return Reply(ctx, caller.status());
  core::Report report;
  auto job = queue_.store().GetJob(req->job_id());
  if (!job.ok()) return Reply(ctx, job.status());
  report.job = *std::move(job);
  auto items = queue_.store().GetItems(req->job_id());
  if (!items.ok()) return Reply(ctx, items.status());
  report.items = *std::move(items);
  *resp = ToProto(report);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GemmProfService::QueryResults(grpc::CallbackServerContext* ctx,
                                                        const v1::QueryResultsRequest* req,
                                                        v1::QueryResultsResponse* resp) {
  if (auto caller = Authorize(ctx, "QueryResults"); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  auto filter = FromProto(*req);
  if (!filter.ok()) return Reply(ctx, filter.status());
  auto page = queue_.store().QueryResults(*filter);
  if (!page.ok()) return Reply(ctx, page.status());
  for (const auto& row : page->items) *resp->add_results() = ToProto(row);
  resp->set_next_page_token(page->next_page_token);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::Result>* GemmProfService::StreamResults(
    grpc::CallbackServerContext* ctx, const v1::QueryResultsRequest* req) {
  auto caller = Authorize(ctx, "StreamResults");
  if (!caller.ok()) return new ErrorWriter<v1::Result>(caller.status());
  auto filter = FromProto(*req);
  if (!filter.ok()) return new ErrorWriter<v1::Result>(filter.status());
  return new ResultsReactor(queue_.store(), *std::move(filter));
}

grpc::ServerUnaryReactor* GemmProfService::ListDevices(grpc::CallbackServerContext* ctx,
                                                       const v1::ListDevicesRequest*,
                                                       v1::ListDevicesResponse* resp) {
  if (auto caller = Authorize(ctx, "ListDevices"); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  for (const auto& d : queue_.Devices()) *resp->add_devices() = ToProto(d);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GemmProfService::ListDaemons(grpc::CallbackServerContext* ctx,
                                                       const v1::ListDaemonsRequest*,
                                                       v1::ListDaemonsResponse* resp) {
  if (auto caller = Authorize(ctx, "ListDaemons"); !caller.ok()) {
    return Reply(ctx, caller.status());
  }
  auto daemons = queue_.store().ListDaemons();
  if (!daemons.ok()) return Reply(ctx, daemons.status());
  for (const core::DaemonRecord& d : *daemons) *resp->add_daemons() = ToProto(d);
  resp->set_now_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
  return Reply(ctx, absl::OkStatus());
}

}  // namespace gemmprof::api
