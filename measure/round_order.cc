#include "measure/round_order.h"

#include <algorithm>

namespace gemmprof::measure {

std::vector<int> RoundOrder(int units, int round) {
  if (units <= 0) return {};
  // Row 0 is 0, 1, n-1, 2, n-2, ...; row i adds i mod n. Even n: these n rows are
  // balanced for carry-over; odd n needs them reversed as well (2n rows).
  const int rows = units % 2 == 0 ? units : 2 * units;
  const int row = ((round % rows) + rows) % rows;
  std::vector<int> order(units);
  for (int p = 0; p < units; ++p) {
    const int base = p % 2 == 1 ? (p + 1) / 2 : (units - p / 2) % units;
    order[p] = (base + row) % units;
  }
  if (row >= units) std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace gemmprof::measure
