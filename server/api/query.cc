#include "server/api/query.h"

#include <string>

#include "wire/convert.h"
#include "wire/enum_field.h"

namespace gemmprof::api {

// The conversions live in wire/, shared with the client; the service adds its own
// overloads (results, events) beside them.
using wire::ParseEnumField;
using wire::ToProto;

namespace {

// An empty filter field matches everything; anything else must be a valid name.
template <typename E, typename ParseFn>
absl::Status SetEnum(std::string_view field, const std::string& value, ParseFn parse,
                     std::string_view valid, std::optional<E>* out) {
  if (value.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(*out, ParseEnumField<E>(field, value, parse, valid));
  return absl::OkStatus();
}

absl::Status SetPositive(std::string_view field, int64_t value, std::optional<int64_t>* out) {
  if (value < 0) {
    return absl::InvalidArgumentError(std::string(field) + ": " + std::to_string(value) +
                                      " is negative (0 means any)");
  }
  if (value > 0) *out = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<storage::ResultFilter> FilterFromProto(const v1::QueryResultsRequest& req) {
  storage::ResultFilter f;
  if (!req.device_name().empty()) f.device_name = req.device_name();
  RETURN_IF_ERROR(
      SetEnum("recipe", req.recipe(), core::ParseRecipe, core::RecipeList(), &f.recipe));
  RETURN_IF_ERROR(SetEnum("pass", req.pass(), core::ParsePass, "fprop, dgrad, wgrad", &f.pass));
  RETURN_IF_ERROR(SetEnum("mode", req.mode(), core::ParseMode, "autocast, prequant", &f.mode));
  RETURN_IF_ERROR(SetPositive("m", req.m(), &f.m));
  RETURN_IF_ERROR(SetPositive("k", req.k(), &f.k));
  RETURN_IF_ERROR(SetPositive("n", req.n(), &f.n));
  RETURN_IF_ERROR(SetPositive("since_ms", req.since_ms(), &f.since_ms));
  RETURN_IF_ERROR(SetPositive("until_ms", req.until_ms(), &f.until_ms));
  RETURN_IF_ERROR(SetPositive("job_id", req.job_id(), &f.job_id));
  if (!req.node().empty()) f.node = req.node();
  if (req.page_size() < 0) {
    return absl::InvalidArgumentError("page_size: " + std::to_string(req.page_size()) +
                                      " is negative (0 means the default, 100)");
  }
  if (req.page_size() != 0) f.page_size = req.page_size();
  f.page_token = req.page_token();
  return f;
}

v1::Result ToProto(const storage::ResultRow& row) {
  v1::Result p;
  p.set_result_id(row.result_id);
  p.set_job_id(row.job_id);
  p.set_item_id(row.item_id);
  p.set_measured_ms(row.measured_ms);
  *p.mutable_device() = ToProto(row.device);
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

}  // namespace gemmprof::api
