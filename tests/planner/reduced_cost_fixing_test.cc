// Reduced-cost fixing and the restricted model, on a model small enough to
// work out by hand.
#include <gtest/gtest.h>

#include "planner/reduced_cost_fixing.h"

namespace autopar::planner {
namespace {

// min x0 + 2 x1 + 10 x2 subject to x0 + x1 + x2 = 1, binaries. The LP optimum
// is x0 = 1 (z = 1) with reduced costs 0, 1 and 9.
IlpModel pick_one() {
  IlpModel m;
  m.objective = {1, 2, 10};
  m.upper = {1, 1, 1};
  m.integer = {1, 1, 1};
  m.row_lower = {1};
  m.row_upper = {1};
  m.row_index = {0, 1, 2};
  m.row_value = {1, 1, 1};
  m.row_start = {0, 3};
  return m;
}

LpSolution pick_one_lp() { return LpSolution{{1, 0, 0}, {0, 1, 9}, 1}; }

TEST(ReducedCostFixing, DropsOnlyColumnsThatCannotBeatTheIncumbent) {
  IlpModel m = pick_one();
  // An incumbent of 5: x2 (1 + 9 > 5) cannot be in a better solution; x1 (1 + 1) can.
  EXPECT_EQ(columns_that_may_improve(m, pick_one_lp(), 5), (std::vector<char>{1, 1, 0}));
  // An incumbent of 1.5: only x0 is left.
  EXPECT_EQ(columns_that_may_improve(m, pick_one_lp(), 1.5), (std::vector<char>{1, 0, 0}));
  // An incumbent of 2: x1 ties it and stays (a solution as good is not dropped).
  EXPECT_EQ(columns_that_may_improve(m, pick_one_lp(), 2), (std::vector<char>{1, 1, 0}));
}

TEST(ReducedCostFixing, WrongSignedReducedCostsWeakenTheBound) {
  IlpModel m = pick_one();
  LpSolution lp = pick_one_lp();
  lp.reduced_costs[0] = -0.5;  // at its upper bound 1 this is right; at 0 it would not be
  EXPECT_EQ(columns_that_may_improve(m, lp, 2.6), (std::vector<char>{1, 1, 0}));
  lp.columns = {0, 0, 0};      // now x0 sits at 0 with d < 0: the bound drops by 0.5
  EXPECT_EQ(columns_that_may_improve(m, lp, 9.6), (std::vector<char>{1, 1, 1}));
  EXPECT_EQ(columns_that_may_improve(m, lp, 8.4), (std::vector<char>{1, 1, 0}));
}

TEST(ReducedCostFixing, TheRestrictedModelKeepsRowsAndMapsColumnsBack) {
  IlpModel m = pick_one();
  std::vector<int> kept;
  IlpModel r = restrict_columns(m, {1, 0, 1}, kept);
  EXPECT_EQ(kept, (std::vector<int>{0, 2}));
  EXPECT_EQ(r.objective, (std::vector<double>{1, 10}));
  EXPECT_EQ(r.rows(), 1);
  EXPECT_EQ(r.row_index, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.row_start, (std::vector<int>{0, 2}));
  EXPECT_EQ(expand_columns({0, 1}, kept, m.columns()), (std::vector<double>{0, 0, 1}));
}

}  // namespace
}  // namespace autopar::planner
