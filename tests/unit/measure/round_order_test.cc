// The order of a round's units: a balanced (Williams) design.
#include "measure/round_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

namespace gemmprof::measure {
namespace {

int Rows(int units) { return units % 2 == 0 ? units : 2 * units; }

TEST(RoundOrderTest, EveryRowIsAPermutation) {
  for (int n = 1; n <= 9; ++n) {
    for (int round = 0; round < 3 * Rows(n); ++round) {
      std::vector<int> order = RoundOrder(n, round);
      ASSERT_EQ(order.size(), static_cast<size_t>(n));
      std::sort(order.begin(), order.end());
      std::vector<int> expected(n);
      std::iota(expected.begin(), expected.end(), 0);
      EXPECT_EQ(order, expected) << n << " units, round " << round;
    }
  }
}

TEST(RoundOrderTest, BalancedForPositionAndCarryOverOverACycle) {
  for (int n = 2; n <= 7; ++n) {
    const int rows = Rows(n);
    std::vector<std::vector<int>> position(n, std::vector<int>(n, 0));
    std::map<std::pair<int, int>, int> follows;
    for (int round = 0; round < rows; ++round) {
      const std::vector<int> order = RoundOrder(n, round);
      for (int p = 0; p < n; ++p) ++position[order[p]][p];
      for (int p = 0; p + 1 < n; ++p) ++follows[{order[p], order[p + 1]}];
    }
    for (int unit = 0; unit < n; ++unit) {
      for (int p = 0; p < n; ++p) {
        EXPECT_EQ(position[unit][p], rows / n) << n << " units: unit " << unit << " at " << p;
      }
    }
    EXPECT_EQ(follows.size(), static_cast<size_t>(n * (n - 1))) << n << " units";
    for (const auto& [pair, count] : follows) {
      EXPECT_EQ(count, rows / n) << n << " units: " << pair.second << " after " << pair.first;
    }
  }
}

TEST(RoundOrderTest, RepeatsWithItsCycleAndTakesAnyRound) {
  EXPECT_EQ(RoundOrder(4, 1), RoundOrder(4, 5));
  EXPECT_EQ(RoundOrder(3, 2), RoundOrder(3, 8));
  EXPECT_EQ(RoundOrder(3, -1), RoundOrder(3, 5));
  EXPECT_EQ(RoundOrder(1, 17), std::vector<int>{0});
  EXPECT_TRUE(RoundOrder(0, 3).empty());
  EXPECT_TRUE(RoundOrder(-2, 3).empty());
  EXPECT_EQ(RoundOrder(4, 0), (std::vector<int>{0, 1, 3, 2}));
}

}  // namespace
}  // namespace gemmprof::measure
