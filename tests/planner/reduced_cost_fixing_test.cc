// Reduced-cost fixing and the restricted model, on a model small enough to
// work out by hand.
#include <gtest/gtest.h>

#include "planner/ilp_model.h"
#include "planner/local_search.h"
#include "planner/presolve.h"
#include "planner/reduced_cost_fixing.h"
#include "planner/relaxation_search.h"

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

// An incumbent is compared with the LP in the model's units: a choice's
// model objective is what the ILP charges its columns, though a node of one
// strategy (its cost a constant the ILP leaves out) costs something.
TEST(ReducedCostFixing, AChoicesModelObjectiveIsWhatTheIlpChargesItsColumns) {
  Problem p;
  NodeIdx fixed = p.add_node("fixed", {5});
  NodeIdx a = p.add_node("a", {1, 3});
  NodeIdx b = p.add_node("b", {2, 1});
  p.add_edge(fixed, a, {0, 1});
  p.add_edge(a, b, {0, 4, 4, 0});
  ReducedProblem r = presolve(p);
  IlpModel m = build_ilp(r, IlpObjective::kCost);
  ASSERT_GT(m.integers(), 0);
  double one_strategy_cost = 0;
  for (size_t g = 0; g < r.nodes.size(); ++g)
    if (m.first_column[g] < 0) one_strategy_cost += r.nodes[g].costs[0];
  ASSERT_GT(one_strategy_cost, 0) << "the test needs a node of one strategy that costs something";
  for (int32_t ka = 0; ka < 2; ++ka)
    for (int32_t kb = 0; kb < 2; ++kb) {
      std::vector<int32_t> choice(r.nodes.size(), 0);
      choice[static_cast<size_t>(r.group_of[static_cast<size_t>(a)])] = ka;
      choice[static_cast<size_t>(r.group_of[static_cast<size_t>(b)])] = kb;
      double charged = 0;  // the s columns and, per edge, the pair column both ends pick
      for (size_t g = 0; g < r.nodes.size(); ++g)
        if (m.first_column[g] >= 0) charged += m.objective[static_cast<size_t>(m.first_column[g] + choice[g])];
      for (size_t k = 0; k < r.edges.size(); ++k) {
        const ReducedEdge& e = r.edges[k];
        int32_t u = e.u_class[static_cast<size_t>(choice[static_cast<size_t>(e.u)])];
        int32_t v = e.v_class[static_cast<size_t>(choice[static_cast<size_t>(e.v)])];
        charged += m.objective[static_cast<size_t>(m.edge_columns[k][static_cast<size_t>(u * e.v_classes + v)])];
      }
      EXPECT_NEAR(model_objective(r, m, choice, choice_cost(r, choice)), charged, 1e-9 * m.objective_scale)
          << "a " << ka << ", b " << kb;
    }
}

}  // namespace
}  // namespace autopar::planner
