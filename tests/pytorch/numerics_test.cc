// The unsplit imported graph, run by autopar's own kernels (local_executor.h)
// from PyTorch's values (torch_values.h), gives PyTorch's loss and gradients.
// The 4-rank version of this check is the torch_check_* CTest entries.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "ir/json_io.h"
#include "runtime/local_executor.h"
#include "runtime/torch_values.h"
#include "support/require.h"

namespace autopar {
namespace {

std::string out_dir() {
  return std::string(AUTOPAR_BINARY_DIR) + "/tests/pytorch/numerics-" + std::to_string(getpid());
}

// max |a - b| <= 1e-5 + 1e-3 max |b|: autopar run --check's tolerance.
void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  double err = (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>();
  double scale = want.to(at::kDouble).abs().max().item<double>();
  EXPECT_LE(err, 1e-5 + 1e-3 * scale) << what << ": max abs error " << err << ", max |ref| " << scale;
}

void run_against_torch(const std::string& model) {
  AUTOPAR_REQUIRE(std::system("/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null") == 0,
                  "/usr/bin/python3 cannot import torch (apt install python3-torch python3-torchvision)");
  std::string cmd = "/usr/bin/python3 " + std::string(AUTOPAR_SOURCE_DIR) +
                    "/tests/pytorch/export_models.py " + out_dir() + " " + model + " > " + out_dir() +
                    "-" + model + ".log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "export failed: see " << out_dir() << "-" << model << ".log";
  std::ifstream in(out_dir() + "/" + model + ".json");
  std::stringstream text;
  text << in.rdbuf();
  Expected<Graph> graph = read_graph_json(text.str());
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  Expected<TorchValues> torch = read_torch_values(out_dir() + "/" + model + ".values");
  ASSERT_TRUE(torch.ok()) << torch.error().message;
  Expected<std::vector<at::Tensor>> full = torch_placeholders(*graph, *torch);
  ASSERT_TRUE(full.ok()) << full.error().message;
  NodeValues values(static_cast<size_t>(graph->size()));
  for (NodeId v = 0; v < graph->size(); ++v) {
    if (graph->node(v).is_placeholder()) values[static_cast<size_t>(v)] = {(*full)[static_cast<size_t>(v)]};
  }
  Expected<ExecuteStats> run = execute_nodes(*graph, values);
  ASSERT_TRUE(run.ok()) << run.error().message;
  int grads = 0;
  for (const GraphOutput& o : graph->outputs()) {
    const at::Tensor& got = values[static_cast<size_t>(o.node)][0];
    if (o.kind == OutputKind::kLoss) {
      expect_close(got, torch->loss, "loss");
    } else {
      const std::string& name = graph->node(o.param).target;
      ASSERT_TRUE(torch->grads.count(name)) << name;
      expect_close(got, torch->grads.at(name), "gradient of " + name);
      ++grads;
    }
  }
  EXPECT_EQ(grads, static_cast<int>(torch->grads.size()));
  std::filesystem::remove_all(out_dir());
}

TEST(TorchNumerics, MlpLossAndGradientsMatchPyTorch) { run_against_torch("mlp"); }

TEST(TorchNumerics, TransformerLmLossAndGradientsMatchPyTorch) { run_against_torch("transformer_lm"); }

TEST(TorchNumerics, VitLossAndGradientsMatchPyTorch) { run_against_torch("vit_b_16"); }

}  // namespace
}  // namespace autopar
