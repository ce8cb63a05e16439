// ResultStore's cluster queue where the store has none (SQLite: one daemon owns it).
#include "server/storage/result_store.h"

namespace gemmprof::storage {
namespace {

absl::Status NoClusterQueue() {
  return absl::FailedPreconditionError(
      "the cluster queue needs a store that several daemons share: start gemmprofd with --db "
      "postgresql://USER@HOST:PORT/DB (this daemon's store is embedded SQLite)");
}

}  // namespace

absl::StatusOr<core::JobRecord> ResultStore::CreateClusterJob(
    core::JobRecord, std::vector<core::WorkItem>, const std::vector<std::vector<int32_t>>&,
    const ClusterTarget&) {
  return NoClusterQueue();
}
absl::StatusOr<std::optional<ClusterBatch>> ResultStore::ClaimClusterBatch(const std::string&,
                                                                           int64_t) {
  return NoClusterQueue();
}
absl::Status ResultStore::RenewClusterLease(int64_t, int64_t) { return NoClusterQueue(); }
absl::StatusOr<bool> ResultStore::FinishClusterBatch(int64_t) { return NoClusterQueue(); }
absl::Status ResultStore::ReleaseClusterBatch(int64_t) { return NoClusterQueue(); }
absl::Status ResultStore::CancelClusterBatches(int64_t) { return NoClusterQueue(); }
absl::StatusOr<ClusterQueueCounts> ResultStore::CountClusterBatches() { return NoClusterQueue(); }
absl::Status ResultStore::RequestDrain(const std::string&) {
  return absl::FailedPreconditionError(
      "--drain: an embedded (SQLite) store has one daemon; drain it with kill -USR1 <its pid>");
}
absl::StatusOr<int64_t> ResultStore::DrainRequest(const std::string&) { return int64_t{0}; }

}  // namespace gemmprof::storage
