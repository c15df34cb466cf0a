#include "planner/problem.h"

#include <gtest/gtest.h>

#include "fixtures.h"
#include "planner/presolve.h"

namespace autopar::planner {
namespace {

using testing::chain3;

TEST(Problem, EvaluateAddsNodeAndEdgeCosts) {
  Evaluation e = evaluate(chain3(), {0, 1, 1});
  EXPECT_DOUBLE_EQ(e.cost, 1 + 2 + 4 + 10);  // one switch, a -> b
  EXPECT_TRUE(e.satisfies_constraints);
}

TEST(Problem, EvaluateFlagsBrokenPinsAndFollows) {
  Problem p = chain3();
  p.add_equal(0, 2);
  EXPECT_FALSE(evaluate(p, {0, 0, 1}).satisfies_constraints);
  EXPECT_TRUE(evaluate(p, {1, 0, 1}).satisfies_constraints);
  p.pins.push_back(Pin{1, {1}});
  EXPECT_FALSE(evaluate(p, {1, 0, 1}).satisfies_constraints);
}

TEST(Problem, ValidateRejectsFollowCycles) {
  Problem p = chain3();
  p.add_equal(0, 1);
  p.add_equal(1, 0);
  Status s = validate(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cycle"), std::string::npos) << s.error().message;
}

TEST(Problem, ValidateRejectsTwoLeaders) {
  Problem p = chain3();
  p.add_equal(0, 2);
  p.add_equal(1, 2);
  Status s = validate(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("'c' follows two leaders"), std::string::npos)
      << s.error().message;
}

TEST(Problem, ValidateRejectsNegativeBytes) {
  Problem p = chain3();
  p.nodes[1].bytes = {1, -1};
  EXPECT_FALSE(validate(p).ok());
}

TEST(Presolve, FollowChainCollapsesIntoOneGroupWithComposedMaps) {
  Problem p;
  p.add_node("a", {1, 2, 3});
  p.add_node("b", {10, 20, 30});
  p.add_node("c", {100, 200});
  p.follows.push_back(Follow{0, 1, {2, 1, 0}});           // b = reverse of a
  p.follows.push_back(Follow{1, 2, {kNoStrategy, 0, 1}});  // c: b=0 forbidden
  ReducedProblem r = presolve(p, {.drop_dominated = false});  // 122 < 231 would drop 0
  ASSERT_EQ(r.nodes.size(), 1u);
  // a=0 -> b=2 -> c=1; a=1 -> b=1 -> c=0; a=2 -> b=0 -> forbidden.
  EXPECT_EQ(r.nodes[0].alive, (std::vector<StrategyIdx>{0, 1}));
  EXPECT_EQ(r.nodes[0].costs, (std::vector<double>{1 + 30 + 200, 2 + 20 + 100}));
  EXPECT_EQ(expand(r, {1}), (Assignment{1, 1, 0}));
}

TEST(Presolve, ParallelEdgesBetweenGroupsAreSummed) {
  Problem p = chain3();
  p.add_edge(2, 1, testing::switch_cost(5));  // c -> b, same pair as b -> c
  ReducedProblem r = presolve(p);
  ASSERT_EQ(r.edges.size(), 2u);
  EXPECT_EQ(r.edges[1].costs, (std::vector<double>{0, 15, 15, 0}));
}

TEST(Presolve, MemoryRowMovesEachMinimumIntoTheConstant) {
  Problem p = testing::chain3_with_memory(160);
  ReducedProblem r = presolve(p);
  ASSERT_EQ(r.memory_rows.size(), 2u);
  EXPECT_DOUBLE_EQ(r.memory_rows[0].constant, 50 + 50);
  ASSERT_EQ(r.memory_rows[0].terms.size(), 2u);
  EXPECT_EQ(r.memory_rows[0].terms[0].coef(), (std::vector<double>{50, 0}));
}

}  // namespace
}  // namespace autopar::planner
