#include "server/worker/protocol.h"

#include <string>

#include "core/error_detail.h"
#include "wire/convert.h"

namespace gemmprof::worker {

wp::Status ToProto(const absl::Status& status) {
  wp::Status p;
  p.set_code(static_cast<int32_t>(status.code()));
  p.set_message(std::string(status.message()));
  p.set_source(core::SourceOf(status));
  p.set_context_lost(core::IsContextLost(status));
  return p;
}

absl::Status FromProto(const wp::Status& p) {
  if (p.code() == 0) return absl::OkStatus();
  absl::Status status(static_cast<absl::StatusCode>(p.code()), p.message());
  if (!p.source().empty()) status = core::WithSource(std::move(status), p.source());
  if (p.context_lost()) status = core::MarkContextLost(std::move(status));
  return status;
}

wp::ItemCall ToItemCall(const core::WorkItem& item, const core::TimingOptions& timing) {
  wp::ItemCall call;
  core::ItemRecord record;
  record.item = item;
  *call.mutable_item() = wire::ToProto(record);
  *call.mutable_timing() = wire::ToProto(timing);
  return call;
}

absl::Status FromItemCall(const wp::ItemCall& call, core::WorkItem* item,
                          core::TimingOptions* timing) {
  ASSIGN_OR_RETURN(core::ItemRecord record, wire::FromProto(call.item()));
  ASSIGN_OR_RETURN(*timing, wire::FromProto(call.timing()));
  *item = std::move(record.item);
  return absl::OkStatus();
}

}  // namespace gemmprof::worker
