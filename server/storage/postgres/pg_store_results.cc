// PgStore: finishing items, results, the cache and history queries.
#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "server/storage/absl_string_view.h"
#include "server/storage/json_codec.h"
#include "server/storage/paging.h"
#include "server/storage/postgres/pg_store.h"
#include "server/storage/result_query.h"
#include "server/storage/store_rows.h"
#include "server/storage/store_rules.h"

namespace gemmprof::storage {

absl::Status PgStore::FinishItem(int64_t item_id, core::ItemStatus status, const std::string& error,
                                 const std::optional<core::Measurement>& measurement,
                                 const core::DeviceInfo& device, const core::TimingOptions& timing,
                                 const std::string& cache_key,
                                 std::optional<int64_t> cached_result_id) {
  return FinishItems({ItemFinish{item_id, status, error, measurement, cache_key, cached_result_id}},
                     device, timing);
}

absl::Status PgStore::FinishItems(const std::vector<ItemFinish>& items,
                                  const core::DeviceInfo& device,
                                  const core::TimingOptions& timing) {
  for (const ItemFinish& f : items) {
    RETURN_IF_ERROR(CheckFinishArguments(f.item_id, f.status, f.measurement.has_value(),
                                         f.cached_result_id.has_value()));
  }
  return Call([&]() -> absl::Status {
    ASSIGN_OR_RETURN(PgTransaction txn, PgTransaction::Begin(*conn_));
    for (const ItemFinish& f : items) RETURN_IF_ERROR(FinishItemLocked(f, device, timing));
    return txn.Commit();
  });
}

absl::Status PgStore::FinishItemLocked(const ItemFinish& f, const core::DeviceInfo& device,
                                       const core::TimingOptions& timing) {
  // FOR UPDATE: a second writer of the same item waits, then sees it final.
  ASSIGN_OR_RETURN(PgResult current,
                   conn_->Exec("SELECT status FROM items WHERE id = ? FOR UPDATE", {f.item_id}));
  if (current.Rows() == 0) return ItemNotFound(f.item_id);
  std::optional<core::ItemStatus> status = core::ParseItemStatus(current.At(0).Text(0));
  if (status.has_value() && core::IsFinal(*status)) {
    return absl::FailedPreconditionError(
        absl::StrCat("item ", f.item_id, " is already ", AbslSv(core::ToString(*status))));
  }
  PgParam result_id, cached_id;
  int64_t measured_ms = 0;
  if (f.cached_result_id.has_value()) {
    ASSIGN_OR_RETURN(PgResult found, conn_->Exec("SELECT measured_ms FROM results WHERE id = ?",
                                                 {*f.cached_result_id}));
    if (found.Rows() == 0) {
      return absl::NotFoundError(
          absl::StrCat("cached_result_id: result ", *f.cached_result_id, " not found"));
    }
    measured_ms = found.At(0).Int64(0);
    cached_id = *f.cached_result_id;
  } else if (f.measurement.has_value()) {
    measured_ms = options_.now_ms();
    ASSIGN_OR_RETURN(int64_t id, InsertResultLocked(f.item_id, *f.measurement, device, timing,
                                                    f.cache_key, measured_ms));
    result_id = id;
  }
  return conn_
      ->Exec(
          "UPDATE items SET status = ?, error = ?, cached = ?, result_id = ?, "
          "cached_result_id = ?, measured_ms = ? WHERE id = ?",
          {std::string(core::ToString(f.status)), f.error, int64_t{f.cached_result_id.has_value()},
           result_id, cached_id, measured_ms, f.item_id})
      .status();
}

absl::StatusOr<int64_t> PgStore::ContextIdLocked(std::string_view kind, const std::string& json) {
  // Another node may insert the same context at once: DO NOTHING waits for its commit,
  // and the SELECT (a new snapshot) then sees that row.
  RETURN_IF_ERROR(conn_
                      ->Exec("INSERT INTO contexts (kind, hash, json) VALUES (?, md5(?), ?) "
                             "ON CONFLICT (kind, hash) DO NOTHING",
                             {std::string(kind), json, json})
                      .status());
  ASSIGN_OR_RETURN(PgResult found,
                   conn_->Exec("SELECT id FROM contexts WHERE kind = ? AND hash = md5(?)",
                               {std::string(kind), json}));
  if (found.Rows() == 0) return absl::InternalError("contexts: inserted row not found");
  return found.At(0).Int64(0);
}

absl::StatusOr<int64_t> PgStore::InsertResultLocked(
    int64_t item_id, const core::Measurement& measurement, const core::DeviceInfo& device,
    const core::TimingOptions& timing, const std::string& cache_key, int64_t measured_ms) {
  ASSIGN_OR_RETURN(int64_t device_context, ContextIdLocked("device", EncodeDeviceInfo(device)));
  ASSIGN_OR_RETURN(int64_t timing_context, ContextIdLocked("timing", EncodeTimingOptions(timing)));
  // The shape columns are copied from the item so history queries need no join.
  ASSIGN_OR_RETURN(
      PgResult inserted,
      conn_->Exec(
          "INSERT INTO results (job_id, item_id, measured_ms, device_name, device_sm, "
          "driver_version, cublaslt_version, device_context_id, m, k, n, pass, recipe, mode, "
          "groups, timing_context_id, measurement_json, cache_key, median_ms, node, device_uuid) "
          "SELECT i.job_id, i.id, ?, ?, ?, ?, ?, ?, i.m, i.k, i.n, i.pass, i.recipe, i.mode, "
          "i.groups, ?, ?, ?, ?, ?, ? FROM items i WHERE i.id = ? RETURNING id",
          {measured_ms, device.name, int64_t{device.sm}, device.driver_version,
           device.cublaslt_version, device_context, timing_context, EncodeMeasurement(measurement),
           cache_key,
           // As in SQLite: the column keeps 0 for a NaN median; the JSON keeps the NaN.
           std::isfinite(measurement.time.median_ms) ? measurement.time.median_ms : 0.0,
           options_.node, device.uuid, item_id}));
  if (inserted.Rows() != 1) return ItemNotFound(item_id);
  return inserted.At(0).Int64(0);
}

absl::StatusOr<std::optional<CachedResult>> PgStore::LookupCache(const std::string& cache_key) {
  return Call([&]() -> absl::StatusOr<std::optional<CachedResult>> {
    ASSIGN_OR_RETURN(
        PgResult result,
        conn_->Exec("SELECT r.id, r.measured_ms, r.measurement_json, r.node, r.device_uuid "
                    "FROM results r JOIN items i ON i.id = r.item_id "
                    "WHERE r.cache_key = ? AND i.status = 'done' ORDER BY r.id DESC LIMIT 1",
                    {cache_key}));
    if (result.Rows() == 0) return std::optional<CachedResult>();
    PgResult::Row row = result.At(0);
    CachedResult hit;
    hit.result_id = row.Int64(0);
    hit.measured_ms = row.Int64(1);
    ASSIGN_OR_RETURN(hit.measurement, DecodeMeasurement(row.Text(2)));
    hit.node = row.Text(3);
    hit.device_uuid = row.Text(4);
    return std::optional<CachedResult>(std::move(hit));
  });
}

absl::StatusOr<Page<ResultRow>> PgStore::QueryResults(const ResultFilter& filter) {
  ASSIGN_OR_RETURN(ResultQuery query, BuildResultQuery(filter));
  std::vector<PgParam> params;
  for (const auto& p : query.params) {
    std::visit([&](const auto& value) { params.emplace_back(value); }, p);
  }
  return Call([&]() -> absl::StatusOr<Page<ResultRow>> {
    ASSIGN_OR_RETURN(PgResult result, conn_->Exec(query.sql, params));
    Page<ResultRow> page;
    DecodedDevice last_device;
    for (int r = 0; r < result.Rows(); ++r) {
      if (static_cast<int32_t>(page.items.size()) == filter.page_size) {
        page.next_page_token = MakePageToken(page.items.back().result_id);
        break;
      }
      ASSIGN_OR_RETURN(ResultRow row, ReadResultRow(result.At(r), &last_device));
      page.items.push_back(std::move(row));
    }
    return page;
  });
}

absl::Status PgStore::PutDaemon(const core::DaemonRecord& daemon) {
  return Call([&]() -> absl::Status {
    return conn_
        ->Exec(
            "INSERT INTO daemons (node, heartbeat_ms, record_json) VALUES (?, ?, ?) "
            "ON CONFLICT (node) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms, "
            "record_json = excluded.record_json",
            {daemon.node, daemon.heartbeat_unix_ms, EncodeDaemon(daemon)})
        .status();
  });
}

absl::StatusOr<std::vector<core::DaemonRecord>> PgStore::ListDaemons() {
  return Call([&]() -> absl::StatusOr<std::vector<core::DaemonRecord>> {
    ASSIGN_OR_RETURN(PgResult result, conn_->Exec("SELECT record_json FROM daemons ORDER BY node"));
    std::vector<core::DaemonRecord> out;
    for (int r = 0; r < result.Rows(); ++r) {
      ASSIGN_OR_RETURN(core::DaemonRecord d, DecodeDaemon(result.At(r).Text(0)));
      out.push_back(std::move(d));
    }
    return out;
  });
}

}  // namespace gemmprof::storage
