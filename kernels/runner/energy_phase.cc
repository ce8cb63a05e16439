// CudaRunner::MeasureEnergy: `submit --energy`. After the rounds, each member's
// back-to-back graph (its GEMM's iterations in one launch, as the b2b figure) is replayed
// for an energy window read from the board's energy counter (kernels/timing/
// energy_window.h). Members are measured one after another, so each window holds one
// member's work alone.
#include "kernels/runner/cuda_runner.h"
#include "kernels/runner/member.h"
#include "kernels/timing/energy_window.h"

namespace gemmprof::kernels {

absl::Status CudaRunner::MeasureEnergy(const std::vector<Member*>& members,
                                       core::MeasureProgress* progress) {
  const cudaStream_t st = stream_.get();
  for (Member* m : members) {
    RETURN_IF_ERROR(core::EnterItem(progress, m->item.id));
    m->energy = {};
    if (nvml_ == nullptr) {
      m->energy.not_measured = nvml_note_.empty() ? "NVML is not available" : nvml_note_;
      continue;
    }
    // The back-to-back graph where the rounds sized one, else the isolated launch.
    const bool b2b = m->rounds.b2b_count > 0 && !m->rounds.b2b_rounds.empty();
    const CudaGraphExec& graph = b2b ? m->b2b : m->iso;
    const int64_t iterations = b2b ? m->rounds.b2b_count : 1;
    const std::vector<double>& per_iter = b2b ? m->rounds.b2b_rounds : m->rounds.iso_rounds;
    double ms = 0;
    for (double v : per_iter) ms += v;
    const double launch_ms = per_iter.empty() ? 1.0 : ms / per_iter.size() * iterations;
    absl::StatusOr<core::Energy> e = MeasureEnergyWindow(
        *nvml_, st, [&] { return graph.Launch(st); }, iterations, launch_ms, {});
    // No counter, or one that stopped moving: no figure, and the reason; the GEMM's own
    // measurement stands.
    if (absl::IsUnimplemented(e.status()) || absl::IsDeadlineExceeded(e.status())) {
      m->energy.not_measured = std::string(e.status().message());
      continue;
    }
    RETURN_IF_ERROR(e.status());
    m->energy = *std::move(e);
    m->energy.idle_power_w = idle_power_w_;
    core::StepDone(progress, 1e3 * m->energy.window_s);
  }
  return absl::OkStatus();
}

}  // namespace gemmprof::kernels
