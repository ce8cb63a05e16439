#include "server/api/service.h"

#include <deque>
#include <mutex>

#include "wire/convert.h"
#include "wire/enum_field.h"
#include "wire/grpc_status.h"
#include "server/api/query.h"
#include "server/api/watch_reactor.h"

namespace gemmprof::api {

// The conversions live in wire/, shared with the client; the service adds its own
// overloads (results, events) beside them.
using wire::FromProto;
using wire::ParseEnumField;
using wire::ToGrpcStatus;
using wire::ToProto;

namespace {

grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* ctx, const absl::Status& status) {
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
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

grpc::ServerUnaryReactor* GemmProfService::SubmitJob(grpc::CallbackServerContext* ctx,
                                                     const v1::SubmitJobRequest* req,
                                                     v1::SubmitJobResponse* resp) {
  auto spec = FromProto(*req);
  if (!spec.ok()) return Reply(ctx, spec.status());
  auto job = queue_.Submit(*spec);
  if (!job.ok()) return Reply(ctx, job.status());
  resp->set_job_id(job->id);
  resp->set_total_items(job->total_items);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::JobEvent>* GemmProfService::WatchJob(grpc::CallbackServerContext*,
                                                                  const v1::WatchJobRequest* req) {
  return new WatchReactor(queue_, req->job_id());
}

grpc::ServerUnaryReactor* GemmProfService::GetJob(grpc::CallbackServerContext* ctx,
                                                  const v1::GetJobRequest* req, v1::Job* resp) {
  auto job = queue_.store().GetJob(req->job_id());
  if (job.ok()) *resp = ToProto(*job);
  return Reply(ctx, job.status());
}

grpc::ServerUnaryReactor* GemmProfService::ListJobs(grpc::CallbackServerContext* ctx,
                                                    const v1::ListJobsRequest* req,
                                                    v1::ListJobsResponse* resp) {
  storage::JobFilter filter;
  if (!req->state().empty()) {
    auto state = ParseEnumField<core::JobState>("state", req->state(), core::ParseJobState,
                                                "queued, running, succeeded, failed, cancelled");
    if (!state.ok()) return Reply(ctx, state.status());
    filter.state = *state;
  }
  if (req->page_size() != 0) filter.page_size = req->page_size();
  filter.page_token = req->page_token();
  auto page = queue_.store().ListJobs(filter);
  if (!page.ok()) return Reply(ctx, page.status());
  for (const auto& job : page->items) *resp->add_jobs() = ToProto(job);
  resp->set_next_page_token(page->next_page_token);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerUnaryReactor* GemmProfService::CancelJob(grpc::CallbackServerContext* ctx,
                                                     const v1::CancelJobRequest* req,
                                                     v1::Job* resp) {
  auto job = queue_.Cancel(req->job_id());
  if (job.ok()) *resp = ToProto(*job);
  return Reply(ctx, job.status());
}

grpc::ServerUnaryReactor* GemmProfService::PlanJob(grpc::CallbackServerContext* ctx,
                                                   const v1::SubmitJobRequest* req,
                                                   v1::PlanJobResponse* resp) {
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
  auto filter = FilterFromProto(*req);
  if (!filter.ok()) return Reply(ctx, filter.status());
  auto page = queue_.store().QueryResults(*filter);
  if (!page.ok()) return Reply(ctx, page.status());
  for (const auto& row : page->items) *resp->add_results() = ToProto(row);
  resp->set_next_page_token(page->next_page_token);
  return Reply(ctx, absl::OkStatus());
}

grpc::ServerWriteReactor<v1::Result>* GemmProfService::StreamResults(
    grpc::CallbackServerContext*, const v1::QueryResultsRequest* req) {
  auto filter = FilterFromProto(*req);
  if (!filter.ok()) {
    // A reactor that only reports the error.
    class ErrorReactor final : public grpc::ServerWriteReactor<v1::Result> {
     public:
      explicit ErrorReactor(const absl::Status& s) { Finish(ToGrpcStatus(s)); }
      void OnDone() override { delete this; }
    };
    return new ErrorReactor(filter.status());
  }
  return new ResultsReactor(queue_.store(), *std::move(filter));
}

grpc::ServerUnaryReactor* GemmProfService::ListDevices(grpc::CallbackServerContext* ctx,
                                                       const v1::ListDevicesRequest*,
                                                       v1::ListDevicesResponse* resp) {
  for (const auto& d : queue_.Devices()) *resp->add_devices() = ToProto(d);
  return Reply(ctx, absl::OkStatus());
}

}  // namespace gemmprof::api
