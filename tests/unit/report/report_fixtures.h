// Fixed result sets for the report and client tests, built in code so every number is
// known:
//  (a) HopperReport: an H100 run, bf16 and fp8-* done; mxfp8/nvfp4 not supported.
//  (b) FailedItemReport: a running shape-list job with a failed, an incorrect and
//      pending items.
//  (c) BothModesReport: autocast and prequant for bf16, fp8-current, fp8-block.
#pragma once

#include "core/job.h"

namespace gemmprof::report::testing {

core::Report HopperReport();
core::Report FailedItemReport();
core::Report BothModesReport();
// An inference sweep (op names "...@m=<M>") at M = 1 and 16, bf16 and fp8-current.
core::Report SweepReport();
// A host-reference job, so the banner shows.
core::Report HostReferenceReport();
// HopperReport naming fp8-current and the variant "fp8-current+fast-accum:all" under the
// default --fast-accum (fprop fast): the variant's dgrad and wgrad are items of its own
// (copies of fp8-current's with fast accumulation on), each at half their time.
core::Report FastAccumVariantReport();

// A small dense model "tiny-llm": 2 layers, the 4 GEMMs of a layer (qkv, attn_out, mlp_up,
// mlp_down; M = 8192, hidden 4096, intermediate 16384) in each pass, plus an LM head
// once per model when asked.
core::Plan SmallModelPlan(bool with_lm_head);

// Kernel-only figures (`--timing kernels`: 0.97-0.99 of the events median, three samples,
// a quantization share of 0.05 ms, two kernel names) on the first measured item of
// `report`; returns that item's measurement. The report must have a measured item.
core::Measurement& AddKernelFigures(core::Report& report);

// Median time, in ms, the fixtures give `flops` at `tflops` throughput.
double MsAt(double flops, double tflops);

}  // namespace gemmprof::report::testing
