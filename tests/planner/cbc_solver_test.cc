#include "planner/cbc_solver.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <coin/Cbc_C_Interface.h>
#include <gtest/gtest.h>

#include "planner/brute_force.h"
#include "planner/ilp_model.h"
#include "planner/presolve.h"
#include "fixtures.h"

namespace autopar::planner {
namespace {

using testing::chain3;
using testing::switch_cost;

Solution solve(const Problem& p) {
  Expected<Solution> s = solve_with_cbc(p);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Solution{};
}

TEST(CbcSolver, ChainPaysMoreAtOneNodeToAvoidResharding) {
  Solution s = solve(chain3());
  ASSERT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(s.objective, 3 + 2 + 4);  // all strategy 1; all 0 would be 1+5+4 = 10
  EXPECT_EQ(s.assignment, (Assignment{1, 1, 1}));
  EXPECT_NEAR(s.best_bound, 9, 1e-6);
}

TEST(CbcSolver, FiveNodeChainMatchesHandArithmetic) {
  // Three strategies, switching costs 2 per edge. Best: n1 s0, n2 s0, then s1.
  Problem p;
  p.add_node("n1", {13, 15, 20});
  p.add_node("n2", {21, 22, 30});
  p.add_node("n3", {35, 32, 33});
  p.add_node("n4", {42, 41, 40});
  p.add_node("n5", {51, 50, 52});
  std::vector<double> two = {0, 2, 2, 2, 0, 2, 2, 2, 0};
  for (NodeIdx v = 0; v < 4; ++v) p.add_edge(v, v + 1, two);
  Solution s = solve(p);
  ASSERT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(s.objective, 13 + 21 + 2 + 32 + 41 + 50);  // = 159
  EXPECT_EQ(s.assignment, (Assignment{0, 0, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(solve_brute_force(p)->objective, s.objective);
}

TEST(CbcSolver, PinForcesTheWorseChoice) {
  Problem p = chain3();
  p.pins.push_back(Pin{0, {0}});
  Solution s = solve(p);
  ASSERT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(s.objective, 1 + 5 + 4);  // a pinned to 0; b at 2 would add 10+10
  EXPECT_EQ(s.assignment, (Assignment{0, 0, 0}));
}

TEST(CbcSolver, FollowerTakesItsLeadersMappedStrategy) {
  Problem p = chain3();
  NodeIdx d = p.add_node("d", {1, 6});  // d alone would take 0: 9 + 1 = 10
  p.add_equal(/*leader=*/1, d);
  Solution s = solve(p);
  ASSERT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(s.objective, 1 + 5 + 4 + 1);  // all 0 = 11 beats all 1 = 3+2+4+6 = 15
  EXPECT_EQ(s.assignment, (Assignment{0, 0, 0, 0}));
}

TEST(CbcSolver, SwappedFollowMapIsRespected) {
  Problem p = chain3();
  NodeIdx d = p.add_node("d", {1, 6});
  p.follows.push_back(Follow{/*leader=*/1, d, /*map=*/{1, 0}});
  Solution s = solve(p);
  EXPECT_DOUBLE_EQ(s.objective, 3 + 2 + 4 + 1);  // b takes 1 so d takes 0
  EXPECT_EQ(s.assignment, (Assignment{1, 1, 1, 0}));
}

TEST(CbcSolver, ForbiddenPairForcesAnotherPairing) {
  Problem p = chain3();
  p.edges[0].costs = {0, kInfiniteCost, 10, kInfiniteCost};  // b may never take 1
  Solution s = solve(p);
  EXPECT_DOUBLE_EQ(s.objective, 1 + 5 + 4);
  EXPECT_EQ(s.assignment, (Assignment{0, 0, 0}));
  // b has one strategy left; then a's and c's strategy 1 costs more on the
  // node (3 > 1, 4 = 4) and against b (10 > 0): dominated, nothing is left.
  EXPECT_EQ(s.stats.reduced_nodes, 0);
  EXPECT_EQ(s.stats.reduced_edges, 0);
}

TEST(CbcSolver, ContradictoryPinsAreInfeasibleWithAReason) {
  Problem p = chain3();
  p.pins.push_back(Pin{1, {0}});
  p.pins.push_back(Pin{1, {1}});
  Solution s = solve(p);
  EXPECT_EQ(s.status, SolveStatus::kInfeasible);
  EXPECT_NE(s.message.find("'b'"), std::string::npos) << s.message;
  EXPECT_FALSE(s.shortfall.has_value());
}

TEST(CbcSolver, EdgeToSingleStrategyNodeFoldsIntoCost) {
  Problem p;
  NodeIdx x = p.add_node("x", {7});
  NodeIdx y = p.add_node("y", {1, 2});
  p.add_edge(x, y, {5, 0});  // y at 0 pays 5 to reshard x's output
  Solution s = solve(p);
  EXPECT_DOUBLE_EQ(s.objective, 7 + 2);  // not 7 + 1 + 5
  EXPECT_EQ(s.stats.reduced_edges, 0);
}

TEST(CbcSolver, RejectsMalformedProblemNamingTheEdge) {
  Problem p = chain3();
  p.edges[1].costs.pop_back();
  Expected<Solution> s = solve_with_cbc(p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("edge 1 'b' -> 'c' has 3 costs"), std::string::npos)
      << s.error().message;
}

TEST(CbcSolver, DumpWritesAnLpFileWithNamedColumns) {
  std::string path = ::testing::TempDir() + "/planner_dump_test.lp";
  ASSERT_TRUE(dump_ilp(chain3(), path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("s0_1"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("e1_0_1"), std::string::npos) << text.str();
  std::remove(path.c_str());
}

TEST(CbcSolver, DumpWritesMpsByDefault) {
  std::string path = ::testing::TempDir() + "/planner_dump_test.mps";
  ASSERT_TRUE(dump_ilp(chain3(), path).ok());
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_NE(first.find("NAME"), std::string::npos) << first;
  std::remove(path.c_str());
}

// What the dump is for: the ILP goes to CBC's own reader (or another solver)
// outside autopar, and solves there to the optimum autopar found.
TEST(CbcSolver, CbcReadsBothDumpFormatsAndFindsTheSameOptimum) {
  Problem p = chain3();
  Solution s = solve(p);
  // The ILP's objective is scaled and leaves out what presolve settled.
  ReducedProblem r = presolve(p);
  IlpModel m = build_ilp(r, IlpObjective::kCost);
  for (const char* extension : {".mps", ".lp"}) {
    std::string path = ::testing::TempDir() + "/planner_dump_readback" + extension;
    ASSERT_TRUE(dump_ilp(p, path).ok());
    Cbc_Model* cbc = Cbc_newModel();
    Cbc_setLogLevel(cbc, 0);
    int read = std::string(extension) == ".lp" ? Cbc_readLp(cbc, path.c_str()) : Cbc_readMps(cbc, path.c_str());
    ASSERT_EQ(read, 0) << "CBC could not read " << path;
    ASSERT_EQ(Cbc_solve(cbc), 0) << path;
    EXPECT_EQ(Cbc_isProvenOptimal(cbc), 1) << path;
    EXPECT_NEAR(Cbc_getObjValue(cbc), m.objective_scale * (s.objective - r.constant_cost), 1e-6) << path;
    EXPECT_GT(Cbc_getNumCols(cbc), 0) << path;
    Cbc_deleteModel(cbc);
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace autopar::planner
