// The SELECT column lists of the store and the code that turns their rows back into
// core structs. Shared by SqliteStore and PgStore (one logical schema).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/status.h"
#include "server/storage/result_store.h"
#include "server/storage/row_view.h"

namespace gemmprof::storage {

// SELECT <kJobColumns> FROM jobs j ... ; counts come from the job's items.
extern const std::string_view kJobColumns;
// SELECT <kItemColumns> FROM items i LEFT JOIN results r ON r.id = coalesce(i.result_id,
// i.cached_result_id) ...
extern const std::string_view kItemColumns;
// SELECT <kResultColumns> FROM <kResultFrom> ... (results with their item and their
// device and timing contexts).
extern const std::string_view kResultColumns;
extern const std::string_view kResultFrom;

// Read the current row of a statement selecting the columns above.
// Errors: DataLoss for an unknown enum name or undecodable JSON.
absl::StatusOr<core::JobRecord> ReadJobRow(const RowView& row);
absl::StatusOr<core::ItemRecord> ReadItemRow(const RowView& row);
// Rows of one query mostly share a device; `last_device` (may be null) remembers the
// last decoded device JSON so repeats skip the decode.
struct DecodedDevice {
  std::string json;
  core::DeviceInfo device;
};
absl::StatusOr<ResultRow> ReadResultRow(const RowView& row, DecodedDevice* last_device);

// Final item statuses as an SQL list: ('done','failed',...).
std::string_view FinalStatusesSql();

// items.group_tokens: an op's per-group tokens comma-separated, "" for none.
std::string GroupTokensText(const std::vector<int64_t>& tokens);
// Its inverse. DataLoss naming the column, the value and `item_id` for text that is not
// comma-separated counts >= 0.
absl::StatusOr<std::vector<int64_t>> ParseGroupTokens(std::string_view text, int64_t item_id);

}  // namespace gemmprof::storage
