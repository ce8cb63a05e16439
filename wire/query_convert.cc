// The conversions of convert.h for what readers ask beyond a job id and what they get back:
// watch events, job and result filters, stored result rows.
#include <absl/strings/str_cat.h>

#include <string>

#include "wire/convert.h"
#include "wire/enum_field.h"

namespace gemmprof::wire {
namespace {

using Kind = core::JobEvent::Kind;

// An empty filter field matches everything; anything else must be a valid name.
template <typename E, typename ParseFn>
absl::Status SetEnum(std::string_view field, const std::string& value, ParseFn parse,
                     std::string_view valid, std::optional<E>* out) {
  if (value.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(*out, ParseEnumField<E>(field, value, parse, valid));
  return absl::OkStatus();
}

// 0 means any; a negative value is an error.
absl::Status SetPositive(std::string_view field, int64_t value, std::optional<int64_t>* out) {
  if (value < 0) {
    return absl::InvalidArgumentError(std::string(field) + ": " + std::to_string(value) +
                                      " is negative (0 means any)");
  }
  if (value > 0) *out = value;
  return absl::OkStatus();
}

}  // namespace

v1::JobEvent ToProto(const core::JobEvent& event) {
  v1::JobEvent p;
  switch (event.kind) {
    case Kind::kSnapshot:
      p.set_kind(v1::JobEvent::SNAPSHOT);
      break;
    case Kind::kItemStarted:
      p.set_kind(v1::JobEvent::ITEM_STARTED);
      break;
    case Kind::kItemFinished:
      p.set_kind(v1::JobEvent::ITEM_FINISHED);
      break;
    case Kind::kItemFailed:
      p.set_kind(v1::JobEvent::ITEM_FAILED);
      break;
    case Kind::kJobFinished:
      p.set_kind(v1::JobEvent::JOB_FINISHED);
      break;
  }
  *p.mutable_job() = ToProto(event.job);
  if (event.item.has_value()) *p.mutable_item() = ToProto(*event.item);
  return p;
}

absl::StatusOr<core::JobEvent> FromProto(const v1::JobEvent& p) {
  core::JobEvent e;
  switch (p.kind()) {
    case v1::JobEvent::ITEM_STARTED:
      e.kind = Kind::kItemStarted;
      break;
    case v1::JobEvent::ITEM_FINISHED:
      e.kind = Kind::kItemFinished;
      break;
    case v1::JobEvent::ITEM_FAILED:
      e.kind = Kind::kItemFailed;
      break;
    case v1::JobEvent::JOB_FINISHED:
      e.kind = Kind::kJobFinished;
      break;
    default:
      // A kind this client does not know still carries the job's state.
      e.kind = Kind::kSnapshot;
      break;
  }
  ASSIGN_OR_RETURN(e.job, FromProto(p.job()));
  if (p.has_item()) {
    ASSIGN_OR_RETURN(core::ItemRecord item, FromProto(p.item()));
    e.item = std::move(item);
  }
  return e;
}

v1::ListJobsRequest ToProto(const core::JobFilter& f) {
  v1::ListJobsRequest p;
  if (f.state) p.set_state(std::string(core::ToString(*f.state)));
  if (f.node) p.set_node(*f.node);
  if (f.campaign) p.set_campaign(*f.campaign);
  p.set_page_size(f.page_size);
  p.set_page_token(f.page_token);
  return p;
}

absl::StatusOr<core::JobFilter> FromProto(const v1::ListJobsRequest& p) {
  core::JobFilter f;
  RETURN_IF_ERROR(SetEnum("state", p.state(), core::ParseJobState,
                          "queued, running, succeeded, partial, failed, cancelled", &f.state));
  if (!p.node().empty()) f.node = p.node();
  if (p.campaign().size() > core::kMaxCampaignChars) {
    return absl::InvalidArgumentError(absl::StrCat("campaign: ", p.campaign().size(),
                                                   " characters, more than the limit of ",
                                                   core::kMaxCampaignChars));
  }
  if (!p.campaign().empty()) f.campaign = p.campaign();
  if (p.page_size() != 0) f.page_size = p.page_size();
  f.page_token = p.page_token();
  return f;
}

v1::QueryResultsRequest ToProto(const core::ResultFilter& f) {
  v1::QueryResultsRequest p;
  if (f.device_name) p.set_device_name(*f.device_name);
  if (f.recipe) p.set_recipe(std::string(core::ToString(*f.recipe)));
  if (f.pass) p.set_pass(std::string(core::ToString(*f.pass)));
  if (f.mode) p.set_mode(std::string(core::ToString(*f.mode)));
  p.set_m(f.m.value_or(0));
  p.set_k(f.k.value_or(0));
  p.set_n(f.n.value_or(0));
  p.set_since_ms(f.since_ms.value_or(0));
  p.set_until_ms(f.until_ms.value_or(0));
  p.set_job_id(f.job_id.value_or(0));
  p.set_page_size(f.page_size);
  p.set_page_token(f.page_token);
  if (f.node) p.set_node(*f.node);
  return p;
}

absl::StatusOr<core::ResultFilter> FromProto(const v1::QueryResultsRequest& p) {
  core::ResultFilter f;
  if (!p.device_name().empty()) f.device_name = p.device_name();
  RETURN_IF_ERROR(SetEnum("recipe", p.recipe(), core::ParseRecipe, core::RecipeList(), &f.recipe));
  RETURN_IF_ERROR(SetEnum("pass", p.pass(), core::ParsePass, "fprop, dgrad, wgrad", &f.pass));
  RETURN_IF_ERROR(SetEnum("mode", p.mode(), core::ParseMode, "autocast, prequant", &f.mode));
  RETURN_IF_ERROR(SetPositive("m", p.m(), &f.m));
  RETURN_IF_ERROR(SetPositive("k", p.k(), &f.k));
  RETURN_IF_ERROR(SetPositive("n", p.n(), &f.n));
  RETURN_IF_ERROR(SetPositive("since_ms", p.since_ms(), &f.since_ms));
  RETURN_IF_ERROR(SetPositive("until_ms", p.until_ms(), &f.until_ms));
  RETURN_IF_ERROR(SetPositive("job_id", p.job_id(), &f.job_id));
  if (!p.node().empty()) f.node = p.node();
  if (p.page_size() < 0) {
    return absl::InvalidArgumentError("page_size: " + std::to_string(p.page_size()) +
                                      " is negative (0 means the default, 100)");
  }
  if (p.page_size() != 0) f.page_size = p.page_size();
  f.page_token = p.page_token();
  return f;
}

v1::Result ToProto(const core::ResultRow& row) {
  v1::Result p;
  p.set_result_id(row.result_id);
  p.set_job_id(row.job_id);
  p.set_item_id(row.item_id);
  p.set_measured_ms(row.measured_ms);
  *p.mutable_device() = ToProto(row.device);
  // On the wire a result is an item of its job: done, with the measurement and where it
  // was made.
  core::ItemRecord item;
  item.item = row.item;
  item.status = core::ItemStatus::kDone;
  item.cached = row.cached;
  item.measured_ms = row.measured_ms;
  item.result = row.measurement;
  item.measured_node = row.node;
  item.device_uuid = row.device.uuid;
  *p.mutable_item() = ToProto(item);
  *p.mutable_timing() = ToProto(row.timing);
  p.set_node(row.node);
  return p;
}

absl::StatusOr<core::ResultRow> FromProto(const v1::Result& p) {
  core::ResultRow row;
  row.result_id = p.result_id();
  row.job_id = p.job_id();
  row.item_id = p.item_id();
  row.measured_ms = p.measured_ms();
  row.node = p.node();
  ASSIGN_OR_RETURN(row.device, FromProto(p.device()));
  ASSIGN_OR_RETURN(core::ItemRecord item, FromProto(p.item()));
  row.item = std::move(item.item);
  row.measurement = std::move(item.result);
  row.cached = item.cached;
  ASSIGN_OR_RETURN(row.timing, FromProto(p.timing()));
  return row;
}

}  // namespace gemmprof::wire
