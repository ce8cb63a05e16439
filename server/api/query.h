// Result-history queries: wire request -> store filter, store row -> wire result.
#pragma once

#include "gemmprof/v1/gemmprof.pb.h"
#include "core/status.h"
#include "server/storage/result_store.h"

namespace gemmprof::api {

// InvalidArgument naming the field for unknown recipe/pass/mode names or negative
// sizes and times. page_size 0 takes the default.
absl::StatusOr<storage::ResultFilter> FilterFromProto(const v1::QueryResultsRequest& req);
v1::Result ToProto(const storage::ResultRow& row);

}  // namespace gemmprof::api
