// Models exported from PyTorch (python/autopar_export.py, tiny configs):
// import, plan on 1-D and 2-D meshes, and the DTensor view of the plan. Skips
// when /usr/bin/python3 cannot import torch (CI installs python3-torch).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ir/json_io.h"
#include "planner/auto_plan.h"
#include "planner/plan_dtensor.h"
#include "support/require.h"

namespace autopar {
namespace {

// This process's export folder (CTest runs each test in its own process, maybe in parallel).
std::string out_dir() {
  return std::string(AUTOPAR_BINARY_DIR) + "/tests/pytorch/exported-" + std::to_string(getpid());
}

// Exports each model a test needs once per process (torch's start-up dominates:
// keep the models tiny). Skips when torch is missing.
class Exported : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    if (std::system("/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null") != 0) {
      skip_reason_ = "/usr/bin/python3 cannot import torch and torchvision (apt install python3-torch python3-torchvision)";
    }
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(out_dir()); }
  void SetUp() override {
    AUTOPAR_REQUIRE(skip_reason_.empty(), skip_reason_);
  }
  static Graph load(const std::string& model) {
    std::string json = out_dir() + "/" + model + ".json";
    if (!std::filesystem::exists(json)) {
      std::string cmd = "/usr/bin/python3 " + std::string(AUTOPAR_SOURCE_DIR) +
                        "/tests/pytorch/export_models.py " + out_dir() + " " + model + " > " +
                        out_dir() + "-" + model + ".log 2>&1";
      std::filesystem::create_directories(out_dir());
      EXPECT_EQ(std::system(cmd.c_str()), 0) << "export failed: see " << out_dir() << "-" << model << ".log";
    }
    std::ifstream in(json);
    std::stringstream text;
    text << in.rdbuf();
    Expected<Graph> g = read_graph_json(text.str());
    EXPECT_TRUE(g.ok()) << model << ": " << (g.ok() ? "" : g.error().message);
    return g.ok() ? std::move(*g) : Graph{};
  }
  static inline std::string skip_reason_;
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

TEST_F(Exported, MlpImportsWithOneGradientPerParamAndPlansOnEveryMesh) {
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

TEST_F(Exported, Resnet18ImportsAndPlansOnEveryMesh) {
  // conv1 + bn1 (3), layer1: 2 blocks x (2 convs + 2 bns: 6) = 12, layer2..4: 12 + downsample
  // conv + bn (3) = 15 each, fc w+b (2): 3 + 12 + 45 + 2 = 62.
  Graph g = load("resnet18");
  EXPECT_EQ(count_params(g), 62);
  plan_on_meshes("resnet18");
}

TEST_F(Exported, MobilenetV2ImportsAndPlansOnEveryMesh) {
  // stem conv+bn (3), first block dw + project (6), 16 blocks expand + dw + project (9 each:
  // 144), last 1x1 conv+bn (3), classifier linear w+b (2): 3 + 6 + 144 + 3 + 2 = 158.
  Graph g = load("mobilenet_v2");
  EXPECT_EQ(count_params(g), 158);
  plan_on_meshes("mobilenet_v2");
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

// Three nodes with two ops neither the table nor libtorch has: one error names
// both, with counts and first positions (nodes[2] and nodes[3]).
TEST(Import, UnknownAtenOpsAreOneErrorListingEachOpWithItsCount) {
  std::string text = R"({"format": "autopar.graph", "version": 1, "nodes": [
    {"name": "x", "op": "placeholder", "kind": "input", "outputs": [{"shape": [4], "dtype": "f32"}]},
    {"name": "w", "op": "placeholder", "kind": "param", "outputs": [{"shape": [4], "dtype": "f32"}]},
    {"name": "a", "op": "aten.my_erf.default", "inputs": ["x"], "outputs": [{"shape": [4], "dtype": "f32"}]},
    {"name": "b", "op": "aten.my_tanh.default", "inputs": ["a"], "outputs": [{"shape": [4], "dtype": "f32"}]},
    {"name": "c", "op": "aten.my_erf.default", "inputs": ["b"], "outputs": [{"shape": [4], "dtype": "f32"}]}],
    "outputs": []})";
  Expected<Graph> g = read_graph_json(text);
  ASSERT_FALSE(g.ok());
  const std::string& m = g.error().message;
  EXPECT_NE(m.find("unsupported ops: 3 nodes use 2 ops"), std::string::npos) << m;
  EXPECT_NE(m.find("aten.my_erf.default x2 (first at nodes[2])"), std::string::npos) << m;
  EXPECT_NE(m.find("aten.my_tanh.default x1 (first at nodes[3])"), std::string::npos) << m;
}

}  // namespace
}  // namespace autopar
