// The gRPC service gemmprof.v1.GemmProf on the callback API. Each handler is
// FromProto -> domain call -> ToProto -> status; nothing here decides policy.
#pragma once

#include "gemmprof/v1/gemmprof.grpc.pb.h"
#include "server/queue/job_queue.h"

namespace gemmprof::api {

class GemmProfService final : public v1::GemmProf::CallbackService {
 public:
  // `queue` must outlive the service.
  explicit GemmProfService(queue::JobQueue& queue) : queue_(queue) {}

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

 private:
  queue::JobQueue& queue_;
};

}  // namespace gemmprof::api
