// Models exported from PyTorch (python/autopar_export.py, tiny configs):
// import, plan on 1-D and 2-D meshes, and the DTensor view of the plan. Skips
// when /usr/bin/python3 cannot import torch (CI installs python3-torch).
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ir/json_io.h"
#include "planner/auto_plan.h"
#include "planner/plan_dtensor.h"

namespace autopar {
namespace {

const std::string kOut = std::string(AUTOPAR_BINARY_DIR) + "/tests/pytorch/exported";

// Exports every model once for the whole suite; "" when torch is missing.
class Exported : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null") != 0) {
      skip_reason_ = "/usr/bin/python3 cannot import torch and torchvision (apt install python3-torch python3-torchvision)";
      return;
    }
    std::string cmd = "/usr/bin/python3 " + std::string(AUTOPAR_SOURCE_DIR) +
                      "/tests/pytorch/export_models.py " + kOut + " > " + kOut + ".log 2>&1";
    if (std::system(cmd.c_str()) != 0) export_failed_ = "export failed: see " + kOut + ".log";
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(export_failed_.empty()) << export_failed_;
  }
  static Graph load(const std::string& model) {
    std::ifstream in(kOut + "/" + model + ".json");
    std::stringstream text;
    text << in.rdbuf();
    Expected<Graph> g = read_graph_json(text.str());
    EXPECT_TRUE(g.ok()) << model << ": " << (g.ok() ? "" : g.error().message);
    return g.ok() ? std::move(*g) : Graph{};
  }
  static inline std::string skip_reason_;
  static inline std::string export_failed_;
};

PlanOptions options(std::vector<int64_t> mesh) {
  PlanOptions o;
  o.mesh_shape = std::move(mesh);
  o.hardware = *load_hardware("h100");
  o.solver.time_limit_s = 60;
  return o;
}

int count_params(const Graph& g) {
  int n = 0;
  for (NodeId v = 0; v < g.size(); ++v) {
    n += g.node(v).is_placeholder() && g.node(v).kind == PlaceholderKind::kParam;
  }
  return n;
}

// Every parameter by its PyTorch name, with one placement per mesh dim.
void expect_dtensor_plan_names_every_param(const Graph& g, const Plan& plan, size_t mesh_ndim) {
  nlohmann::json doc = nlohmann::json::parse(plan_to_dtensor_json(g, plan));
  EXPECT_EQ(doc["format"], "autopar.dtensor_plan");
  EXPECT_EQ(doc["mesh"]["shape"].size(), mesh_ndim);
  EXPECT_EQ(static_cast<int>(doc["params"].size()), count_params(g));
  for (NodeId v = 0; v < g.size(); ++v) {
    const Node& n = g.node(v);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kParam) continue;
    ASSERT_TRUE(doc["params"].contains(n.target)) << n.target << " (as named_parameters() spells it)";
    EXPECT_EQ(doc["params"][n.target]["placements"].size(), mesh_ndim) << n.target;
  }
}

void plan_on_meshes(const std::string& model) {
  Graph g = Exported::load(model);
  ASSERT_GT(g.size(), 0);
  for (std::vector<int64_t> mesh : {std::vector<int64_t>{8}, {2, 4}, {8, 8}}) {
    Expected<Plan> plan = make_plan(g, options(mesh));
    ASSERT_TRUE(plan.ok()) << model << " on " << mesh.size() << "-D mesh: " << plan.error().message;
    EXPECT_TRUE(plan->summary.fits) << model;
    expect_dtensor_plan_names_every_param(g, *plan, mesh.size());
  }
}

TEST_F(Exported, MlpImportsWithFourGradientsAndPlansOnEveryMesh) {
  // nn.Sequential(Linear(16, 32), ReLU, Linear(32, 32), ReLU, Linear(32, 8)): 3 weights + 3 biases.
  Graph g = load("mlp");
  EXPECT_EQ(count_params(g), 6);
  EXPECT_EQ(g.outputs().size(), 1u + 6u);  // loss + one gradient per param
  plan_on_meshes("mlp");
}

TEST_F(Exported, TransformerLmImportsAndPlansOnEveryMesh) {
  // embed, pos, 2 x (in_proj w+b, out_proj w+b, linear1 w+b, linear2 w+b, norm1 w+b, norm2 w+b),
  // final norm w+b, head w+b: 2 + 2*12 + 2 + 2 = 30.
  Graph g = load("transformer_lm");
  EXPECT_EQ(count_params(g), 30);
  plan_on_meshes("transformer_lm");
}

TEST_F(Exported, VitImportsAndPlansOnEveryMesh) {
  // conv_proj w+b, class_token, pos_embedding, 1 x (ln_1, self_attention in/out proj, ln_2,
  // mlp 0/3) w+b = 12, final ln w+b, heads.head w+b: 4 + 12 + 4 = 20.
  Graph g = load("vit_b_16");
  EXPECT_EQ(count_params(g), 20);
  plan_on_meshes("vit_b_16");
}

TEST_F(Exported, DtensorPlanListsModuleBoundariesOfTheLm) {
  Graph g = load("transformer_lm");
  Expected<Plan> plan = make_plan(g, options({2, 4}));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  nlohmann::json doc = nlohmann::json::parse(plan_to_dtensor_json(g, *plan));
  ASSERT_TRUE(doc["modules"].contains("layers.0")) << doc["modules"].dump();
  // A layer takes the residual stream [batch 4, seq 8, dim 16] and gives one back.
  const nlohmann::json& layer = doc["modules"]["layers.0"];
  ASSERT_FALSE(layer["inputs"].empty());
  ASSERT_FALSE(layer["outputs"].empty());
  EXPECT_EQ(layer["inputs"][0]["shape"], nlohmann::json({4, 8, 16}));
  EXPECT_EQ(layer["inputs"][0]["placements"].size(), 2u);
}

}  // namespace
}  // namespace autopar
