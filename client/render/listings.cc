#include "client/render/listings.h"

#include "client/render/format.h"
#include "client/render/text_table.h"

namespace gemmprof::client::render {

std::string RenderPlan(const core::Plan& plan, const core::JobSpec& spec) {
  TextTable t({"pass", "op", "MxKxN", "groups", "layers", "GFLOP per call", "GFLOP per model"},
              {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight,
               Align::kRight, Align::kRight});
  double total = 0;
  for (const core::GemmOp& op : plan.ops) {
    const double per_model = op.Flops() * static_cast<double>(op.per_layer ? op.layers : 1);
    total += per_model;
    t.AddRow({std::string(core::ToString(op.pass)), op.name, op.shape.ToString(),
              std::to_string(op.groups), op.per_layer ? std::to_string(op.layers) : "once",
              FormatFixed(op.Flops() / 1e9, 1), FormatFixed(per_model / 1e9, 1)});
  }
  const size_t recipes = core::EffectiveRecipes(spec).size();
  const size_t modes = core::EffectiveModes(spec).size();
  return "Plan: " + plan.model_name + ", " + std::to_string(plan.num_layers) + " layers, " +
         std::to_string(plan.ops.size()) + " GEMMs\n" + t.RenderText() +
         "Total: " + FormatFixed(total / 1e12, 3) + " TFLOP per step; " +
         std::to_string(plan.ops.size() * recipes * modes) + " items (" +
         std::to_string(plan.ops.size()) + " GEMMs x " + std::to_string(recipes) + " recipes x " +
         std::to_string(modes) + " modes)\n";
}

std::string RenderJobs(const std::vector<core::JobRecord>& jobs) {
  if (jobs.empty()) return "no jobs\n";
  TextTable t(
      {"id", "state", "items done", "failed", "model", "label", "node", "device", "by", "created"},
      {Align::kRight, Align::kLeft, Align::kRight, Align::kRight, Align::kLeft, Align::kLeft,
       Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft});
  for (const core::JobRecord& j : jobs)
    t.AddRow({std::to_string(j.id), std::string(core::ToString(j.state)),
              std::to_string(j.finished_items) + "/" + std::to_string(j.total_items),
              std::to_string(j.failed_items), j.plan.model_name, j.spec.label,
              j.node.empty() ? "-" : j.node, j.device.name.empty() ? "-" : j.device.name,
              j.submitted_by.empty() ? "-" : j.submitted_by, FormatUtc(j.created_ms)});
  return t.RenderText(0);
}

std::string RenderDevices(const std::vector<core::DeviceInfo>& devices) {
  if (devices.empty()) return "no devices\n";
  std::string out;
  for (const core::DeviceInfo& d : devices) {
    out += d.name + " (" + d.backend + (d.sm > 0 ? ", sm_" + std::to_string(d.sm) : "") +
           (d.sm_count > 0 ? ", " + std::to_string(d.sm_count) + " SMs" : "") +
           (d.memory_bytes > 0 ? ", " + FormatGib(d.memory_bytes) : "") + ")\n";
    // A device whose worker never started is known by its name only.
    if (d.unavailable) out += "  UNAVAILABLE: " + d.unavailable_reason + "\n";
    if (d.unavailable && d.recipes.empty()) continue;
    if (d.backend == "host-reference")
      out += "  host reference runner (CPU emulation), not a GPU measurement\n";
    out += "  driver " + d.driver_version + ", CUDA " + d.cuda_version + ", cuBLASLt " +
           d.cublaslt_version + ", gemmprof " + d.gemmprof_version + "\n";
    TextTable t({"recipe", "supported", "reason"}, {Align::kLeft, Align::kLeft, Align::kLeft});
    for (const core::RecipeSupport& r : d.recipes)
      t.AddRow({std::string(core::ToString(r.recipe)), r.supported ? "yes" : "no", r.reason});
    out += t.RenderText(2);
  }
  return out;
}

std::string RenderHistory(const std::vector<HistoryRow>& rows) {
  if (rows.empty()) return "no results match\n";
  TextTable t(
      {"measured", "job", "device", "pass", "op", "MxKxN", "recipe", "mode", "median ms", "TFLOP/s",
       "samples", "cached"},
      {Align::kLeft, Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft,
       Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
  for (const HistoryRow& r : rows) {
    const core::ItemRecord& i = r.item;
    const bool has = i.result.has_value();
    t.AddRow({FormatUtc(r.measured_ms), std::to_string(r.job_id), r.device.name,
              std::string(core::ToString(i.item.op.pass)), i.item.op.name,
              i.item.op.shape.ToString(), std::string(core::ToString(i.item.recipe)),
              std::string(core::ToString(i.item.mode)),
              has ? FormatMs(i.result->time.median_ms) : "-", has ? FormatTflops(TflopsOf(i)) : "-",
              has ? std::to_string(i.result->time.count) : "-", i.cached ? "yes" : "no"});
  }
  return t.RenderText(0);
}

}  // namespace gemmprof::client::render
