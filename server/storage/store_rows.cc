#include "server/storage/store_rows.h"

#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/storage/absl_string_view.h"
#include "server/storage/json_codec.h"

namespace gemmprof::storage {

const std::string_view kJobColumns =
    "j.id, j.state, j.error, j.created_ms, j.started_ms, j.finished_ms, j.spec_json, "
    "j.plan_json, j.device_json, "
    "(SELECT count(*) FROM items c WHERE c.job_id = j.id), "
    "(SELECT count(*) FROM items c WHERE c.job_id = j.id AND c.status IN "
    "('done', 'failed', 'not_supported', 'cancelled')), "
    "(SELECT count(*) FROM items c WHERE c.job_id = j.id AND c.status = 'failed'), "
    "j.submitted_by, j.node";

const std::string_view kItemColumns =
    "i.id, i.job_id, i.seq, i.op_name, i.pass, i.m, i.k, i.n, i.groups, i.layers, i.per_layer, "
    "i.recipe, i.mode, i.status, i.error, i.cached, i.measured_ms, r.measurement_json, r.node, "
    "r.device_uuid, i.group_tokens, i.moe_layout, i.fast_accum";

const std::string_view kResultColumns =
    "r.id, r.job_id, r.item_id, r.measured_ms, dc.json, i.seq, i.op_name, r.pass, r.m, "
    "r.k, r.n, r.groups, i.layers, i.per_layer, r.recipe, r.mode, tc.json, "
    "r.measurement_json, r.node, i.group_tokens, i.moe_layout, i.fast_accum";

const std::string_view kResultFrom =
    "results r JOIN items i ON i.id = r.item_id "
    "JOIN contexts dc ON dc.id = r.device_context_id "
    "JOIN contexts tc ON tc.id = r.timing_context_id";

std::string_view FinalStatusesSql() { return "('done', 'failed', 'not_supported', 'cancelled')"; }

std::string GroupTokensText(const std::vector<int64_t>& tokens) {
  return absl::StrJoin(tokens, ",");
}

absl::StatusOr<std::vector<int64_t>> ParseGroupTokens(std::string_view text, int64_t item_id) {
  std::vector<int64_t> tokens;
  if (text.empty()) return tokens;
  for (absl::string_view part : absl::StrSplit(AbslSv(text), ',')) {
    int64_t count = 0;
    if (!absl::SimpleAtoi(part, &count) || count < 0) {
      return absl::DataLossError(absl::StrCat("items.group_tokens: bad value '", AbslSv(text),
                                              "' in row ", item_id,
                                              " (comma-separated token counts >= 0)"));
    }
    tokens.push_back(count);
  }
  return tokens;
}

namespace {

template <typename E>
absl::Status ReadEnum(const RowView& row, int column, std::string_view what, int64_t row_id,
                      std::optional<E> (*parse)(std::string_view), E* out) {
  const std::string text = row.Text(column);
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
  int group_tokens, layout, fast_accum;  // always the item's own columns (items.*)
};

// `row_id` and `table` name the row whose columns are read; the routed-expert and
// fast-accumulation columns are always the item's, named by `item->id`.
absl::Status ReadWorkItem(const RowView& row, const WorkItemColumns& c, int64_t row_id,
                          std::string_view table, core::WorkItem* item) {
  item->seq = static_cast<int32_t>(row.Int64(c.seq));
  item->op.name = row.Text(c.name);
  RETURN_IF_ERROR(ReadEnum(row, c.pass, absl::StrCat(AbslSv(table), ".pass"), row_id,
                           core::ParsePass, &item->op.pass));
  item->op.shape = {row.Int64(c.m), row.Int64(c.k), row.Int64(c.n)};
  item->op.groups = row.Int64(c.groups);
  item->op.layers = row.Int64(c.layers);
  item->op.per_layer = row.Int64(c.per_layer) != 0;
  ASSIGN_OR_RETURN(item->op.group_tokens, ParseGroupTokens(row.Text(c.group_tokens), item->id));
  RETURN_IF_ERROR(ReadEnum(row, c.layout, "items.moe_layout", item->id, core::ParseMoeLayout,
                           &item->op.layout));
  RETURN_IF_ERROR(ReadEnum(row, c.fast_accum, "items.fast_accum", item->id, core::ParseFastAccum,
                           &item->fast_accum));
  RETURN_IF_ERROR(ReadEnum(row, c.recipe, absl::StrCat(AbslSv(table), ".recipe"), row_id,
                           core::ParseRecipe, &item->recipe));
  return ReadEnum(row, c.mode, absl::StrCat(AbslSv(table), ".mode"), row_id, core::ParseMode,
                  &item->mode);
}

}  // namespace

absl::StatusOr<core::JobRecord> ReadJobRow(const RowView& row) {
  core::JobRecord job;
  job.id = row.Int64(0);
  RETURN_IF_ERROR(ReadEnum(row, 1, "jobs.state", job.id, core::ParseJobState, &job.state));
  job.error = row.Text(2);
  job.created_ms = row.Int64(3);
  job.started_ms = row.Int64(4);
  job.finished_ms = row.Int64(5);
  ASSIGN_OR_RETURN(job.spec, DecodeJobSpec(row.Text(6)));
  ASSIGN_OR_RETURN(job.plan, DecodePlan(row.Text(7)));
  ASSIGN_OR_RETURN(job.device, DecodeDeviceInfo(row.Text(8)));
  job.total_items = static_cast<int32_t>(row.Int64(9));
  job.finished_items = static_cast<int32_t>(row.Int64(10));
  job.failed_items = static_cast<int32_t>(row.Int64(11));
  job.submitted_by = row.Text(12);
  job.node = row.Text(13);
  return job;
}

absl::StatusOr<core::ItemRecord> ReadItemRow(const RowView& row) {
  core::ItemRecord rec;
  rec.item.id = row.Int64(0);
  rec.item.job_id = row.Int64(1);
  RETURN_IF_ERROR(ReadWorkItem(row, {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 20, 21, 22}, rec.item.id,
                               "items", &rec.item));
  RETURN_IF_ERROR(
      ReadEnum(row, 13, "items.status", rec.item.id, core::ParseItemStatus, &rec.status));
  rec.error = row.Text(14);
  rec.cached = row.Int64(15) != 0;
  rec.measured_ms = row.Int64(16);
  if (!row.IsNull(17)) {
    ASSIGN_OR_RETURN(rec.result, DecodeMeasurement(row.Text(17)));
    rec.measured_node = row.Text(18);
    rec.device_uuid = row.Text(19);
  }
  return rec;
}

absl::StatusOr<ResultRow> ReadResultRow(const RowView& src, DecodedDevice* last_device) {
  ResultRow row;
  row.result_id = src.Int64(0);
  row.job_id = src.Int64(1);
  row.item_id = src.Int64(2);
  row.measured_ms = src.Int64(3);
  std::string device_json = src.Text(4);
  if (last_device != nullptr && last_device->json == device_json) {
    row.device = last_device->device;
  } else {
    ASSIGN_OR_RETURN(row.device, DecodeDeviceInfo(device_json));
    if (last_device != nullptr) *last_device = {std::move(device_json), row.device};
  }
  row.item.id = row.item_id;
  row.item.job_id = row.job_id;
  RETURN_IF_ERROR(ReadWorkItem(src, {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 19, 20, 21},
                               row.result_id, "results", &row.item));
  ASSIGN_OR_RETURN(row.timing, DecodeTimingOptions(src.Text(16)));
  ASSIGN_OR_RETURN(row.measurement, DecodeMeasurement(src.Text(17)));
  row.node = src.Text(18);
  return row;
}

}  // namespace gemmprof::storage
