// Where a job runs (`submit --where`): on the node that accepted it, or on any daemon of
// a cluster that shares one PostgreSQL store and has an idle GPU of the job's device
// model (the cluster queue, docs/cluster.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gemmprof::core {

enum class PlacementKind {
  kDefault,   // "": any on a PostgreSQL store, this-node on SQLite
  kThisNode,  // the daemon that accepted the job, on its own GPUs
  kAny,       // any daemon with the job's device model (the accepting daemon's, see docs)
  kModel,     // any daemon with a GPU named `name` ("NVIDIA H200")
  kNode,      // the daemon of node `name`
};

struct Placement {
  PlacementKind kind = PlacementKind::kDefault;
  std::string name;  // the model or the node; empty otherwise

  // Through the cluster queue (any daemon may take its batches)?
  bool Clustered() const {
    return kind == PlacementKind::kAny || kind == PlacementKind::kModel ||
           kind == PlacementKind::kNode;
  }
};

// The forms `--where` and the proto's `where` take, for error messages.
inline constexpr char kPlacementForms[] = "this-node, any, model:NAME or node:NAME";

// Parses one placement ("model:NVIDIA H200"); "" is kDefault. InvalidArgument naming
// `field`, the value and the forms.
absl::StatusOr<Placement> ParsePlacement(std::string_view field, std::string_view text);
// The text ParsePlacement reads back ("" for kDefault).
std::string ToString(const Placement& p);

// A job's priority among the cluster queue's batches (`submit --priority`, admins
// only): higher first; 0 for everyone else.
inline constexpr int32_t kMinPriority = -10;
inline constexpr int32_t kMaxPriority = 10;

}  // namespace gemmprof::core
