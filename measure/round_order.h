// The order in which a round visits its units, so that clock and power drift on a
// power-capped GPU falls on every unit alike.
#pragma once

#include <vector>

namespace gemmprof::measure {

// Order of the units in round `round` of a balanced (Williams) design over `units`
// units: over 2*units rounds (units rounds when even) each unit takes each position
// equally often and follows each other unit equally often. Returns a permutation of
// 0..units-1; empty for units <= 0. Any round, negative ones too, maps into the cycle.
std::vector<int> RoundOrder(int units, int round);

}  // namespace gemmprof::measure
