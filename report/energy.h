// Energy figures of a report (`submit --energy`; docs/measurement.md "Energy"): per item,
// summed per layer and over the full model as the times are, and ratios between recipes
// with 95% intervals. Every figure comes from the items' own energy windows; none is
// derived from a time. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"
#include "report/analysis.h"

namespace gemmprof::report {

// True when any item of the report asked for energy (measured, or said why not).
bool HasEnergy(const core::Report& report);

// An item's joules per iteration as an Estimate (its _ms fields hold joules), for the
// interval arithmetic of core/stats. Absent when not measured.
core::Estimate EnergyEstimate(const core::Energy& energy);

// Joules of one recipe and mode summed over `scope` (the terms of its time totals,
// weighted alike: per layer or full model, the passes chosen) with its interval; nullopt
// when the total is incomplete or an item has no energy figure. scope.figure is ignored.
std::optional<core::stats::Interval> EnergySum(const Analysis& a, RecipeMode key,
                                               const Scope& scope);

// Energy ratio x / y over `scope` (> 1: x uses more energy), the terms' intervals
// combined as independent (each item's window is its own); invalid with center 0 when
// either sum is missing.
core::stats::Interval EnergyRatio(const Analysis& a, RecipeMode x, RecipeMode y,
                                  const Scope& scope);

// The energy a recipe's quantization costs over `scope`: autocast joules - prequant joules
// of the same GEMMs (the autocast window runs the quantization with the GEMM, the
// prequant window the GEMM alone), with the interval of the difference of independent
// windows; invalid with center 0 unless both modes are complete with energy figures.
core::stats::Interval QuantizationEnergy(const Analysis& a, const core::RecipeVariant& recipe,
                                         const Scope& scope);

// Per recipe against bf16, per layer: where the energy ratio and the time ratio disagree
// beyond their intervals (the recipe saves more, or less, energy than time), one line.
std::vector<std::string> EnergyFindings(const Analysis& a);

// Full-model forward joules at sweep point `m` (joules x layers over its ops), when every
// item of that recipe, mode and M has an energy figure.
std::optional<double> SweepModelJoules(const Analysis& a, int64_t m, RecipeMode key);

}  // namespace gemmprof::report
