// Tables of the smaller commands: plan, jobs, devices, history. Pure.
#pragma once

#include <string>
#include <vector>

#include "client/client_types.h"
#include "core/gemm.h"
#include "core/job.h"

namespace gemmprof::client::render {

// `gemmprof plan`: pass, op, MxKxN, groups, layers, GFLOP per call and per model, with
// the item count (ops x recipes x modes) of the spec.
std::string RenderPlan(const core::Plan& plan, const core::JobSpec& spec);
// `gemmprof jobs`: id, state, items, failed, model, label, device, by (the token name
// that submitted the job, "-" when none), created (UTC).
std::string RenderJobs(const std::vector<core::JobRecord>& jobs);
// `gemmprof devices`: one block per device with its recipes and why any is unsupported.
std::string RenderDevices(const std::vector<core::DeviceInfo>& devices);
// `gemmprof history`: measured (UTC), job, device, pass, op, MxKxN, recipe, mode,
// median ms, TFLOP/s, samples, cached.
std::string RenderHistory(const std::vector<HistoryRow>& rows);

}  // namespace gemmprof::client::render
