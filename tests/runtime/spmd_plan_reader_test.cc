// The plan reader gives back the planner's choice from its JSON, and refuses
// plans that do not fit the launch or the graph, saying why.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/registry.h"
#include "planner/baselines.h"
#include "planner/plan_output.h"
#include "runtime/plan_reader.h"

namespace autopar {
namespace {

struct Fixture {
  Graph graph;
  HardwareProfile hw;
  DeviceMesh mesh;
  Plan plan;
  std::string json;
};

Fixture planned_mlp(const std::string& baseline) {
  Fixture f;
  ModelOptions m;
  m.name = "mlp";
  f.graph = *build_model(m);
  f.hw = *load_hardware("cpu");
  PlanOptions o;
  o.mesh_shape = {2, 2};
  o.hardware = f.hw;
  if (!baseline.empty()) o.pins = *baseline_pins(baseline, f.graph, *make_mesh({2, 2}, f.hw));
  f.mesh = *make_mesh({2, 2}, f.hw);
  f.plan = *make_plan(f.graph, o);
  f.json = plan_to_json(f.graph, f.plan, /*timings=*/false);
  return f;
}

std::string edited(const std::string& json, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = nlohmann::json::parse(json);
  edit(j);
  return j.dump();
}

TEST(SpmdPlanReader, ReadsBackThePlannersChoiceForEveryNode) {
  for (const std::string& baseline : {std::string(""), std::string("fsdp"), std::string("tp")}) {
    Fixture f = planned_mlp(baseline);
    Expected<Plan> read = read_plan(f.json, f.graph, f.mesh, f.hw, /*ranks=*/4);
    ASSERT_TRUE(read) << read.error().message;
    for (NodeId v = 0; v < f.graph.size(); ++v) {
      const NodeStrategies& ns = f.plan.strategies.nodes[static_cast<size_t>(v)];
      // Same placements, every output's included.
      EXPECT_EQ(strategy_string(ns, f.plan.choice[static_cast<size_t>(v)]),
                strategy_string(ns, read->choice[static_cast<size_t>(v)]))
          << baseline << " " << f.graph.node(v).name;
    }
    EXPECT_EQ(read->redistributions.size(), f.plan.redistributions.size());
  }
}

TEST(SpmdPlanReader, WritesEveryOutputsPlacementOfAMultiOutputNode) {
  Fixture f = planned_mlp("");
  nlohmann::json j = nlohmann::json::parse(f.json);
  int multi = 0;
  for (const nlohmann::json& n : j["nodes"]) {
    const Node& node = f.graph.node(*f.graph.find(n["name"].get<std::string>()));
    if (node.outputs.size() < 2) {
      EXPECT_FALSE(n.contains("output_placements")) << node.name;
      continue;
    }
    ++multi;
    // mlp: nll_loss_forward gives (loss, total_weight), 2 outputs on a 2-dim mesh.
    ASSERT_EQ(n["output_placements"].size(), node.outputs.size()) << node.name;
    EXPECT_EQ(n["output_placements"][0], n["placement"]) << node.name;
    for (const nlohmann::json& p : n["output_placements"]) EXPECT_EQ(p.size(), 2u) << node.name;
  }
  EXPECT_GE(multi, 1);
}

// With today's rules output 0 and the inputs already pin a multi-output
// node's strategy, so the reader's use of the later outputs shows as a
// refusal: a later output no strategy gives is not matched on output 0 alone.
TEST(SpmdPlanReader, MatchesEveryOutputNotOnlyOutputZero) {
  Fixture f = planned_mlp("");
  std::string multi;
  std::string json = edited(f.json, [&](nlohmann::json& j) {
    for (nlohmann::json& n : j["nodes"]) {
      if (!n.contains("output_placements") || !multi.empty()) continue;
      multi = n["name"].get<std::string>();
      n["output_placements"][1] = nlohmann::json::array({"S(7)", "S(7)"});
    }
  });
  ASSERT_FALSE(multi.empty());
  Expected<Plan> read = read_plan(json, f.graph, f.mesh, f.hw, 4);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("node " + multi + ": no strategy has the plan's placements"),
            std::string::npos)
      << read.error().message;
}

TEST(SpmdPlanReader, ReadsAPlanWithoutOutputPlacementsByOutputZero) {
  Fixture f = planned_mlp("fsdp");
  std::string json = edited(f.json, [](nlohmann::json& j) {
    for (nlohmann::json& n : j["nodes"]) n.erase("output_placements");
  });
  Expected<Plan> read = read_plan(json, f.graph, f.mesh, f.hw, 4);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->redistributions.size(), f.plan.redistributions.size());
}

TEST(SpmdPlanReader, RefusesOutputPlacementsOfAnotherCountThanTheNodesOutputs) {
  Fixture f = planned_mlp("");
  std::string json = edited(f.json, [](nlohmann::json& j) {
    for (nlohmann::json& n : j["nodes"]) {
      if (n.contains("output_placements")) n["output_placements"].erase(1);
    }
  });
  Expected<Plan> read = read_plan(json, f.graph, f.mesh, f.hw, 4);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("1 output_placements in the plan"), std::string::npos)
      << read.error().message;
}

TEST(SpmdPlanReader, RefusesAMeshOfOtherSizeThanTheJob) {
  Fixture f = planned_mlp("");
  Expected<Plan> read = read_plan(f.json, f.graph, f.mesh, f.hw, /*ranks=*/2);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("4 devices but the job has 2 ranks"), std::string::npos)
      << read.error().message;
}

// Found by fuzz/plan_fuzz.cc: a field of the wrong type, or an input without
// its placement, threw from nlohmann (or failed its assertion) instead.
TEST(SpmdPlanReader, FieldsOfTheWrongTypeAreErrorsNamingTheField) {
  Fixture f = planned_mlp("fsdp");
  auto read_edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    Expected<Plan> read = read_plan(edited(f.json, edit), f.graph, f.mesh, f.hw, 4);
    return read ? std::string("ok") : read.error().message;
  };
  EXPECT_EQ(read_edited([](nlohmann::json& j) { j["label"] = 5; }),
            "the plan's \"label\" must be a string, got 5");
  EXPECT_EQ(read_edited([](nlohmann::json& j) { j["nodes"] = "all"; }),
            "the plan's \"nodes\" must be a list, got \"all\"");
  EXPECT_EQ(read_edited([](nlohmann::json& j) { j["nodes"][0]["shape"] = "256x64"; }),
            "the plan's node layers_0_weight: \"shape\" must be a list of integers, got \"256x64\"");
  std::string message = read_edited([](nlohmann::json& j) {
    for (nlohmann::json& n : j["nodes"]) {
      if (!n["inputs"].empty()) {
        n["inputs"][0].erase("placement");
        break;
      }
    }
  });
  EXPECT_NE(message.find("input placement is missing"), std::string::npos) << message;
  Expected<PlanFile> header = read_plan_header(edited(f.json, [](nlohmann::json& j) { j["mesh"]["shape"] = {2, "x"}; }));
  ASSERT_FALSE(header);
  EXPECT_EQ(header.error().message, "the plan's mesh \"shape\" must be a list of integers, got [2,\"x\"]");
}

TEST(SpmdPlanReader, RefusesANodeTheGraphDoesNotHave) {
  Fixture f = planned_mlp("");
  std::string json = edited(f.json, [](nlohmann::json& j) { j["nodes"][1]["name"] = "ghost"; });
  Expected<Plan> read = read_plan(json, f.graph, f.mesh, f.hw, 4);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("node ghost which the graph does not have"), std::string::npos)
      << read.error().message;
}

TEST(SpmdPlanReader, RefusesAGraphWhoseShapesChangedSincePlanning) {
  Fixture f = planned_mlp("");
  std::string name = f.graph.node(0).name;
  std::string json = edited(f.json, [](nlohmann::json& j) { j["nodes"][0]["shape"][0] = 12345; });
  Expected<Plan> read = read_plan(json, f.graph, f.mesh, f.hw, 4);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("node " + name), std::string::npos) << read.error().message;
  EXPECT_NE(read.error().message.find("changed since planning"), std::string::npos);
}

TEST(SpmdPlanReader, RefusesPlacementsNoStrategyHas) {
  Fixture f = planned_mlp("");
  std::string json = edited(f.json, [](nlohmann::json& j) {
    j["nodes"][0]["placement"] = nlohmann::json::array({"S(7)", "S(7)"});
  });
  Expected<Plan> read = read_plan(json, f.graph, f.mesh, f.hw, 4);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("no strategy has the plan's placements"), std::string::npos)
      << read.error().message;
}

}  // namespace
}  // namespace autopar
