// The gRPC service gemmprof.v1.GemmProf on the callback API. Each handler is
// FromProto -> domain call -> ToProto -> status; nothing here decides policy. Every
// handler first asks `access` whether the caller's token may make the call.
#pragma once

#include <memory>
#include <string_view>

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "server/queue/job_queue.h"
#include "server/security/access_control.h"
#include "server/security/watch_limiter.h"

namespace gemmprof::api {

class GemmProfService final : public v1::GemmProf::CallbackService {
 public:
  // `queue` must outlive the service. Without `access` every call is allowed.
  // `max_watches_per_client` caps open WatchJob streams per token (or peer host).
  explicit GemmProfService(queue::JobQueue& queue,
                           std::shared_ptr<const security::AccessControl> access = nullptr,
                           int max_watches_per_client = 32);

  grpc::ServerUnaryReactor* SubmitJob(grpc::CallbackServerContext* ctx,
                                      const v1::SubmitJobRequest* req,
                                      v1::SubmitJobResponse* resp) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* ctx,
                                                   const v1::WatchJobRequest* req) override;
  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* ctx, const v1::GetJobRequest* req,
                                   v1::Job* resp) override;
  grpc::ServerUnaryReactor* ListJobs(grpc::CallbackServerContext* ctx,
                                     const v1::ListJobsRequest* req,
                                     v1::ListJobsResponse* resp) override;
  grpc::ServerUnaryReactor* CancelJob(grpc::CallbackServerContext* ctx,
                                      const v1::CancelJobRequest* req, v1::Job* resp) override;
  grpc::ServerUnaryReactor* PlanJob(grpc::CallbackServerContext* ctx,
                                    const v1::SubmitJobRequest* req,
                                    v1::PlanJobResponse* resp) override;
  grpc::ServerUnaryReactor* GetReport(grpc::CallbackServerContext* ctx,
                                      const v1::GetReportRequest* req, v1::Report* resp) override;
  grpc::ServerUnaryReactor* QueryResults(grpc::CallbackServerContext* ctx,
                                         const v1::QueryResultsRequest* req,
                                         v1::QueryResultsResponse* resp) override;
  grpc::ServerWriteReactor<v1::Result>* StreamResults(grpc::CallbackServerContext* ctx,
                                                      const v1::QueryResultsRequest* req) override;
  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext* ctx,
                                        const v1::ListDevicesRequest* req,
                                        v1::ListDevicesResponse* resp) override;
  grpc::ServerUnaryReactor* ListDaemons(grpc::CallbackServerContext* ctx,
                                        const v1::ListDaemonsRequest* req,
                                        v1::ListDaemonsResponse* resp) override;

 private:
  // The caller of `method`, or why it may not call it (logged, never with the token).
  absl::StatusOr<security::Caller> Authorize(grpc::CallbackServerContext* ctx,
                                             std::string_view method) const;

  queue::JobQueue& queue_;
  std::shared_ptr<const security::AccessControl> access_;
  security::WatchLimiter watches_;
};

}  // namespace gemmprof::api
