#include "device/worker/protocol.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

namespace {

void AddItems(const std::vector<core::WorkItem>& items,
              google::protobuf::RepeatedPtrField<gemmprof::v1::Item>* out) {
  for (const core::WorkItem& item : items) {
    core::ItemRecord record;
    record.item = item;
    *out->Add() = wire::ToProto(record);
  }
}

// The items of a call; InvalidArgument naming the item ("items[2]: ...").
absl::StatusOr<std::vector<core::WorkItem>> ItemsOf(
    const google::protobuf::RepeatedPtrField<gemmprof::v1::Item>& items) {
  std::vector<core::WorkItem> out;
  out.reserve(items.size());
  for (int i = 0; i < items.size(); ++i) {
    absl::StatusOr<core::ItemRecord> record = wire::FromProto(items.Get(i));
    if (!record.ok()) {
      return absl::Status(record.status().code(),
                          absl::StrCat("items[", i, "]: ", record.status().message()));
    }
    out.push_back(std::move(record->item));
  }
  return out;
}

}  // namespace

wp::FitCall ToFitCall(const std::vector<core::WorkItem>& items, const core::TimingOptions& timing) {
  wp::FitCall call;
  AddItems(items, call.mutable_items());
  *call.mutable_timing() = wire::ToProto(timing);
  return call;
}

absl::Status FromFitCall(const wp::FitCall& call, std::vector<core::WorkItem>* items,
                         core::TimingOptions* timing) {
  ASSIGN_OR_RETURN(*items, ItemsOf(call.items()));
  ASSIGN_OR_RETURN(*timing, wire::FromProto(call.timing()));
  return absl::OkStatus();
}

wp::GroupCall ToGroupCall(const core::GroupRequest& request) {
  wp::GroupCall call;
  call.set_group_uid(request.group_uid);
  AddItems(request.items, call.mutable_items());
  *call.mutable_timing() = wire::ToProto(request.timing);
  call.set_share_identical_work(request.share_identical_work);
  call.set_deadline_unix_ms(request.deadline_unix_ms);
  call.set_profile(request.profile);
  return call;
}

absl::StatusOr<core::GroupRequest> FromGroupCall(const wp::GroupCall& call) {
  core::GroupRequest request;
  request.group_uid = call.group_uid();
  ASSIGN_OR_RETURN(request.items, ItemsOf(call.items()));
  ASSIGN_OR_RETURN(request.timing, wire::FromProto(call.timing()));
  request.share_identical_work = call.share_identical_work();
  request.deadline_unix_ms = call.deadline_unix_ms();
  request.profile = call.profile();
  return request;
}

wp::GroupResult ToProto(const core::GroupResult& result) {
  wp::GroupResult p;
  for (const core::ItemOutcome& outcome : result.outcomes) {
    wp::ItemOutcome* o = p.add_outcomes();
    o->set_item_id(outcome.item_id);
    *o->mutable_status() = ToProto(outcome.status);
    if (outcome.status.ok() && outcome.measurement.has_value()) {
      *o->mutable_measurement() = wire::ToProto(*outcome.measurement);
    }
  }
  p.set_rounds(result.rounds);
  p.set_stop_reason(result.stop_reason);
  return p;
}

absl::StatusOr<core::GroupResult> FromGroupResult(const wp::GroupResult& p,
                                                  const core::GroupRequest& request) {
  const std::string group = absl::StrCat("the worker's answer to group '", request.group_uid, "'");
  if (p.outcomes_size() != static_cast<int>(request.items.size())) {
    return absl::InternalError(absl::StrCat(group, " has ", p.outcomes_size(), " outcomes for ",
                                            request.items.size(), " items"));
  }
  core::GroupResult result;
  result.rounds = p.rounds();
  result.stop_reason = p.stop_reason();
  for (int i = 0; i < p.outcomes_size(); ++i) {
    const wp::ItemOutcome& o = p.outcomes(i);
    const int64_t expected = request.items[i].id;
    if (o.item_id() != expected) {
      return absl::InternalError(absl::StrCat(group, ": outcome ", i, " is for item ", o.item_id(),
                                              ", expected item ", expected));
    }
    core::ItemOutcome& out = result.outcomes.emplace_back();
    out.item_id = o.item_id();
    out.status = FromProto(o.status());
    if (!out.status.ok()) continue;
    if (!o.has_measurement()) {
      return absl::InternalError(
          absl::StrCat(group, ": item ", expected, " succeeded without a measurement"));
    }
    absl::StatusOr<core::Measurement> m = wire::FromProto(o.measurement());
    if (!m.ok()) {
      return absl::InternalError(absl::StrCat(
          group, ": item ", expected, "'s measurement is malformed: ", m.status().message()));
    }
    out.measurement = *std::move(m);
  }
  return result;
}

}  // namespace gemmprof::worker
