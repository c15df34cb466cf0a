// Golden files: the rule of every op and its strategies on a 2x2 mesh, each on
// the op's fixture (fixtures.cc). A changed rule shows as a one-line diff.
// Regenerate after an intended change:
//   AUTOPAR_UPDATE_GOLDEN=1 ./build/tests/sharding/test_sharding --gtest_filter='Golden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "fixtures.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

std::string signature(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string ins, outs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    ins += (i ? ", " : "") + to_string(input_meta(g, id, static_cast<int>(i)));
  }
  for (size_t o = 0; o < n.outputs.size(); ++o) outs += (o ? ", " : "") + to_string(n.outputs[o]);
  return fmt::format("{}({}) -> {}", node_op_name(n), ins, outs);
}

std::string render(bool with_strategies) {
  DeviceMesh mesh = testing::mesh_of({2, 2});
  std::string out = with_strategies
                        ? "# Valid strategies of every op on a 2x2 mesh (inputs->outputs).\n"
                        : "# Sharding rule of every op (src/sharding/rule.h syntax).\n";
  out += "# Fixtures: tests/sharding/fixtures.cc. Regenerate: AUTOPAR_UPDATE_GOLDEN=1.\n";
  for (const OpDef& def : all_ops()) {
    std::optional<testing::OpFixture> fx = testing::op_fixture(def.id);
    if (!fx) {
      out += fmt::format("\n{}: NO FIXTURE\n", def.name);
      continue;
    }
    out += "\n" + signature(fx->graph, fx->node) + "\n";
    Expected<OpRule> rule = node_rule(fx->graph, fx->node);
    if (!rule) {
      out += "  ERROR " + rule.error().message + "\n";
      continue;
    }
    if (!with_strategies) {
      out += "  " + to_string(*rule) + "\n";
      continue;
    }
    Expected<NodeStrategies> ns = node_strategies(fx->graph, fx->node, mesh, testing::round_device());
    for (StrategyIdx s = 0; s < ns->size(); ++s) out += "  " + strategy_string(*ns, s) + "\n";
  }
  return out;
}

void compare_with_golden(const std::string& name, const std::string& actual) {
  std::string path = std::string(AUTOPAR_SOURCE_DIR) + "/tests/sharding/golden/" + name;
  const char* update = std::getenv("AUTOPAR_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path << "; run with AUTOPAR_UPDATE_GOLDEN=1";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(expected.str(), actual) << "golden " << path
                                    << " differs; if intended, rerun with AUTOPAR_UPDATE_GOLDEN=1";
}

TEST(Golden, OpRulesMatchTheGoldenFile) {
  std::string actual = render(/*with_strategies=*/false);
  EXPECT_EQ(actual.find("NO FIXTURE"), std::string::npos) << "add a fixture in fixtures.cc";
  EXPECT_EQ(actual.find("ERROR"), std::string::npos) << actual;
  compare_with_golden("op_rules.txt", actual);
}

TEST(Golden, StrategiesOnA2x2MeshMatchTheGoldenFile) {
  compare_with_golden("strategies.txt", render(/*with_strategies=*/true));
}

}  // namespace
}  // namespace autopar
