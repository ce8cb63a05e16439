// The CUTLASS forms an item's GEMM can run as (member.h's CutlassForms), each made over
// the member's operands, scales and output: the CudaRunner times them against cuBLASLt
// (or, for the serving recipes, against each other).
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cutlass/cutlass_gemm.h"
#include "kernels/runner/measure_parts.h"
#include "kernels/runner/member.h"

namespace gemmprof::kernels {

using core::Recipe;

namespace {

// The FP8 format of a quantized operand (the CUTLASS specs name it; E4M3 unless E5M2).
core::quant::Fp8Format Fp8FormatOf(const OperandQuantizer& q) {
  return q.data_type() == CUDA_R_8F_E5M2 ? core::quant::Fp8Format::kE5M2
                                         : core::quant::Fp8Format::kE4M3;
}

// The item's groups as a CUTLASS launch sees them: each group's operands and output at
// its offset, its scales `a_scale_floats` and `bt_scale_floats` on from the first
// group's. A group's rows are its tokens for the grouped forms (they follow the counts
// in either layout), the capacity for the batched forms in the masked layout, its tokens
// otherwise (the batched forms then refuse uneven experts).
std::vector<BlockGemmGroup> CutlassGroups(const core::WorkItem& item, const Operands& o,
                                          bool grouped_form, const float* a_scales,
                                          int64_t a_scale_floats, const float* bt_scales,
                                          int64_t bt_scale_floats) {
  const core::GemmOp& op = item.op;
  const core::GemmShape& s = op.shape;
  const bool own_rows =
      RunsPerExpertRows(op) && (grouped_form || op.layout != core::MoeLayout::kMasked);
  std::vector<BlockGemmGroup> groups;
  for (int64_t g = 0; g < op.groups; ++g) {
    BlockGemmGroup one;
    one.m = own_rows ? op.group_tokens[g] : s.m;
    one.n = s.n;
    one.k = s.k;
    one.a = static_cast<const uint8_t*>(o.a.data()) + g * s.m * s.k;
    one.bt = static_cast<const uint8_t*>(o.bt.data()) + g * s.n * s.k;
    one.c = o.c + g * s.m * s.n;
    one.a_scales = a_scales + g * a_scale_floats;
    one.bt_scales = bt_scales + g * bt_scale_floats;
    groups.push_back(one);
  }
  return groups;
}

}  // namespace

absl::StatusOr<CutlassGemm> CreateBlockGemm(const core::WorkItem& item, const Operands& o,
                                            BlockGemmSchedule schedule, int device, int sm) {
  BlockGemmSpec spec;
  spec.a_format = Fp8FormatOf(o.a);
  spec.bt_format = Fp8FormatOf(o.bt);
  spec.bt_128x128 = o.bt.config().weight;
  spec.groups = CutlassGroups(item, o, schedule == BlockGemmSchedule::kGrouped, o.a.block_scales(),
                              o.a.block_scale_group_floats(), o.bt.block_scales(),
                              o.bt.block_scale_group_floats());
  return CutlassGemm::Create(spec, schedule, device, sm);
}

absl::StatusOr<CutlassGemm> CreateRowwiseGemm(const core::WorkItem& item, const Operands& o,
                                              bool fast_accum, RowwiseGemmSchedule schedule,
                                              int device, int sm) {
  RowwiseGemmSpec spec;
  spec.a_format = Fp8FormatOf(o.a);
  spec.bt_format = Fp8FormatOf(o.bt);
  spec.fast_accum = fast_accum;
  // One scale per row of each group: m and n floats apart.
  spec.groups = CutlassGroups(item, o, schedule == RowwiseGemmSchedule::kGrouped,
                              static_cast<const float*>(o.a.gemm_scale()), item.op.shape.m,
                              static_cast<const float*>(o.bt.gemm_scale()), item.op.shape.n);
  return CutlassGemm::CreateRowwise(spec, schedule, device, sm);
}

namespace {

absl::StatusOr<CutlassGemm> CreateInt8RowwiseGemm(const core::WorkItem& item, const Operands& o,
                                                  Int8RowwiseSchedule schedule, int device,
                                                  int sm) {
  RowwiseGemmSpec spec;
  spec.groups =
      CutlassGroups(item, o, false, static_cast<const float*>(o.a.gemm_scale()), item.op.shape.m,
                    static_cast<const float*>(o.bt.gemm_scale()), item.op.shape.n);
  return CutlassGemm::CreateInt8Rowwise(spec, schedule, device, sm);
}

// The weight-only spec of the item's operands; w4a16's weight reordered into the kernels'
// layout once, on `stream`, for every form made from it.
absl::StatusOr<WeightOnlyGemmSpec> WeightOnlySpec(const core::WorkItem& item, const Operands& o,
                                                  int64_t w4_group, int device, int sm,
                                                  cudaStream_t stream) {
  if (item.op.groups != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        std::string(core::ToString(item.recipe)),
        ": the CUTLASS mixed-input GEMM takes one group; this item has ", item.op.groups));
  }
  WeightOnlyGemmSpec spec;
  spec.int4 = item.recipe == Recipe::kW4a16;
  spec.m = item.op.shape.m;
  spec.n = item.op.shape.n;
  spec.k = item.op.shape.k;
  spec.a = static_cast<const __nv_bfloat16*>(o.a.data());
  spec.w = o.bt.data();
  spec.scales = static_cast<const __nv_bfloat16*>(o.bt.gemm_scale());
  spec.group = w4_group;
  spec.c = o.c;
  if (spec.int4) {
    ASSIGN_OR_RETURN(spec.w4_reordered, CutlassGemm::ReorderW4(spec, device, sm, stream));
  }
  return spec;
}

}  // namespace

std::vector<std::pair<std::string, absl::StatusOr<CutlassGemm>>> CutlassForms(const Member& m,
                                                                              int64_t w4_group,
                                                                              int device, int sm,
                                                                              cudaStream_t stream) {
  std::vector<std::pair<std::string, absl::StatusOr<CutlassGemm>>> forms;
  auto add = [&forms](const char* name, absl::StatusOr<CutlassGemm> g) {
    forms.emplace_back(absl::StrCat("CUTLASS ", name), std::move(g));
  };
  switch (m.item.recipe) {
    case Recipe::kFp8Block:
      for (BlockGemmSchedule f : kBlockGemmSchedules) {
        add(BlockGemmScheduleName(f), CreateBlockGemm(m.item, m.o, f, device, sm));
      }
      break;
    case Recipe::kInt8Rowwise:
      for (Int8RowwiseSchedule f : kInt8RowwiseSchedules) {
        add(Int8RowwiseScheduleName(f), CreateInt8RowwiseGemm(m.item, m.o, f, device, sm));
      }
      break;
    case Recipe::kW8a16:
    case Recipe::kW4a16: {
      // A spec the item cannot have refuses every form with its reason.
      const absl::StatusOr<WeightOnlyGemmSpec> spec =
          WeightOnlySpec(m.item, m.o, w4_group, device, sm, stream);
      for (WeightOnlySchedule f : kWeightOnlySchedules) {
        absl::StatusOr<CutlassGemm> g =
            spec.ok() ? CutlassGemm::CreateWeightOnly(*spec, f, device, sm, stream)
                      : absl::StatusOr<CutlassGemm>(spec.status());
        if (IsCutlassSchedule(f)) {
          add(WeightOnlyScheduleName(f), std::move(g));
        } else {
          forms.emplace_back(absl::StrCat("gemmprof ", WeightOnlyScheduleName(f)), std::move(g));
        }
      }
      break;
    }
    default:  // fp8-rowwise
      for (RowwiseGemmSchedule f : kRowwiseGemmSchedules) {
        add(RowwiseGemmScheduleName(f),
            CreateRowwiseGemm(m.item, m.o, m.fast_accum, f, device, sm));
      }
      break;
  }
  return forms;
}

}  // namespace gemmprof::kernels
