#include "server/storage/store_rows.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"
#include "server/storage/json_codec.h"

namespace gemmprof::storage {

const std::string_view kJobColumns =
    "j.id, j.state, j.error, j.created_ms, j.started_ms, j.finished_ms, j.spec_json, "
    "j.plan_json, j.device_json, "
    "(SELECT count(*) FROM items c WHERE c.job_id = j.id), "
    "(SELECT count(*) FROM items c WHERE c.job_id = j.id AND c.status IN "
    "('done', 'failed', 'not_supported', 'cancelled')), "
    "(SELECT count(*) FROM items c WHERE c.job_id = j.id AND c.status = 'failed'), j.submitted_by";

const std::string_view kItemColumns =
    "i.id, i.job_id, i.seq, i.op_name, i.pass, i.m, i.k, i.n, i.groups, i.layers, i.per_layer, "
    "i.recipe, i.mode, i.status, i.error, i.cached, i.measured_ms, r.measurement_json";

const std::string_view kResultColumns =
    "r.id, r.job_id, r.item_id, r.measured_ms, r.device_json, i.seq, i.op_name, r.pass, r.m, "
    "r.k, r.n, r.groups, i.layers, i.per_layer, r.recipe, r.mode, r.timing_json, "
    "r.measurement_json";

std::string_view FinalStatusesSql() { return "('done', 'failed', 'not_supported', 'cancelled')"; }

namespace {

template <typename E>
absl::Status ReadEnum(const Statement& stmt, int column, std::string_view what, int64_t row_id,
                      std::optional<E> (*parse)(std::string_view), E* out) {
  const std::string text = stmt.ColumnText(column);
  std::optional<E> value = parse(text);
  if (!value.has_value()) {
    return absl::DataLossError(
        absl::StrCat(AbslSv(what), ": unknown value '", text, "' in row ", row_id));
  }
  *out = *value;
  return absl::OkStatus();
}

// kItemColumns and kResultColumns hold a work item's fields at different positions,
// so each reader passes its own indexes.
struct WorkItemColumns {
  int seq, name, pass, m, k, n, groups, layers, per_layer, recipe, mode;
};

absl::Status ReadWorkItem(const Statement& stmt, const WorkItemColumns& c, int64_t row_id,
                          std::string_view table, core::WorkItem* item) {
  item->seq = static_cast<int32_t>(stmt.ColumnInt64(c.seq));
  item->op.name = stmt.ColumnText(c.name);
  RETURN_IF_ERROR(ReadEnum(stmt, c.pass, absl::StrCat(AbslSv(table), ".pass"), row_id,
                           core::ParsePass, &item->op.pass));
  item->op.shape = {stmt.ColumnInt64(c.m), stmt.ColumnInt64(c.k), stmt.ColumnInt64(c.n)};
  item->op.groups = stmt.ColumnInt64(c.groups);
  item->op.layers = stmt.ColumnInt64(c.layers);
  item->op.per_layer = stmt.ColumnInt64(c.per_layer) != 0;
  RETURN_IF_ERROR(ReadEnum(stmt, c.recipe, absl::StrCat(AbslSv(table), ".recipe"), row_id,
                           core::ParseRecipe, &item->recipe));
  return ReadEnum(stmt, c.mode, absl::StrCat(AbslSv(table), ".mode"), row_id, core::ParseMode,
                  &item->mode);
}

}  // namespace

absl::StatusOr<core::JobRecord> ReadJobRow(const Statement& stmt) {
  core::JobRecord job;
  job.id = stmt.ColumnInt64(0);
  RETURN_IF_ERROR(ReadEnum(stmt, 1, "jobs.state", job.id, core::ParseJobState, &job.state));
  job.error = stmt.ColumnText(2);
  job.created_ms = stmt.ColumnInt64(3);
  job.started_ms = stmt.ColumnInt64(4);
  job.finished_ms = stmt.ColumnInt64(5);
  ASSIGN_OR_RETURN(job.spec, DecodeJobSpec(stmt.ColumnText(6)));
  ASSIGN_OR_RETURN(job.plan, DecodePlan(stmt.ColumnText(7)));
  ASSIGN_OR_RETURN(job.device, DecodeDeviceInfo(stmt.ColumnText(8)));
  job.total_items = static_cast<int32_t>(stmt.ColumnInt64(9));
  job.finished_items = static_cast<int32_t>(stmt.ColumnInt64(10));
  job.failed_items = static_cast<int32_t>(stmt.ColumnInt64(11));
  job.submitted_by = stmt.ColumnText(12);
  return job;
}

absl::StatusOr<core::ItemRecord> ReadItemRow(const Statement& stmt) {
  core::ItemRecord rec;
  rec.item.id = stmt.ColumnInt64(0);
  rec.item.job_id = stmt.ColumnInt64(1);
  RETURN_IF_ERROR(
      ReadWorkItem(stmt, {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, rec.item.id, "items", &rec.item));
  RETURN_IF_ERROR(
      ReadEnum(stmt, 13, "items.status", rec.item.id, core::ParseItemStatus, &rec.status));
  rec.error = stmt.ColumnText(14);
  rec.cached = stmt.ColumnInt64(15) != 0;
  rec.measured_ms = stmt.ColumnInt64(16);
  if (!stmt.ColumnIsNull(17)) {
    ASSIGN_OR_RETURN(rec.result, DecodeMeasurement(stmt.ColumnText(17)));
  }
  return rec;
}

absl::StatusOr<ResultRow> ReadResultRow(const Statement& stmt, DecodedDevice* last_device) {
  ResultRow row;
  row.result_id = stmt.ColumnInt64(0);
  row.job_id = stmt.ColumnInt64(1);
  row.item_id = stmt.ColumnInt64(2);
  row.measured_ms = stmt.ColumnInt64(3);
  std::string device_json = stmt.ColumnText(4);
  if (last_device != nullptr && last_device->json == device_json) {
    row.device = last_device->device;
  } else {
    ASSIGN_OR_RETURN(row.device, DecodeDeviceInfo(device_json));
    if (last_device != nullptr) *last_device = {std::move(device_json), row.device};
  }
  row.item.id = row.item_id;
  row.item.job_id = row.job_id;
  RETURN_IF_ERROR(ReadWorkItem(stmt, {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, row.result_id,
                               "results", &row.item));
  ASSIGN_OR_RETURN(row.timing, DecodeTimingOptions(stmt.ColumnText(16)));
  ASSIGN_OR_RETURN(row.measurement, DecodeMeasurement(stmt.ColumnText(17)));
  return row;
}

}  // namespace gemmprof::storage
