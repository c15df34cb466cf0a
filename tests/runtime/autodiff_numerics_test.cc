// Numerical checks of autodiff's gradient rules (src/autodiff) run with the
// runtime's kernels: every differentiable op in a small f64 graph, the graph's
// gradients against libtorch autograd through the same forward kernels; the
// MLP against central finite differences; a 1-layer Llama 3 against autograd.
//
// Tolerances (why): f64 graphs agree with autograd to ~1e-12 (same math,
// different summation order), checked at 1e-9 relative; attention's backward
// rebuilds the softmax from the f32 logsumexp output, so 1e-6; complex views
// are f32-only (there is no c128 in the IR), so 1e-5. Finite differences in f64
// with step 1e-6: truncation ~1e-12, rounding ~1e-16 / 1e-6 = 1e-10, checked
// at 1e-7. The f32 Llama: ~1e-7 rounding per op over a few hundred ops, 1e-3
// relative to each gradient's largest entry.
#include <cmath>
#include <functional>
#include <string>

#include <ATen/core/Tensor.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include "autodiff/autodiff.h"
#include "models/mlp.h"
#include "models/registry.h"
#include "runtime/init.h"
#include "runtime/kernels.h"
#include "runtime/local_executor.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;

// A forward graph under construction: params and index inputs first, then
// ops, then the scalar loss sum(out^2) (d loss / d out = 2 out: a different
// weight per output element).
struct Fwd {
  Graph g;
  std::vector<std::pair<NodeId, int64_t>> index_bounds;
  std::string error;

  NodeId param(Shape shape, DType dtype = DType::f64) {
    std::string name = g.fresh_name("p");
    return g.add_placeholder(name, PlaceholderKind::kParam, {std::move(shape), dtype}, name);
  }
  NodeId index(Shape shape, int64_t bound) {
    std::string name = g.fresh_name("idx");
    NodeId id =
        g.add_placeholder(name, PlaceholderKind::kInput, {std::move(shape), DType::i64}, name);
    index_bounds.emplace_back(id, bound);
    return id;
  }
  NodeId op(OpId op, std::vector<NodeId> inputs, Attrs attrs = {}) {
    if (!error.empty()) return kNoNode;
    Expected<NodeId> id = g.add(op, std::move(inputs), std::move(attrs));
    if (!id) error = id.error().message;
    return id ? *id : kNoNode;
  }
  NodeId loss(NodeId out) {
    NodeId sq = op(OpId::kPowTensorScalar, {out}, {{"exponent", 2.0}});
    if (sq == kNoNode) return kNoNode;
    V all;
    for (int64_t d = 0; d < g.node(sq).meta().rank(); ++d) all.push_back(d);
    return op(OpId::kSumDimIntList, {sq}, {{"dim", all}});
  }
};

using Builder = std::function<NodeId(Fwd&)>;  // returns the node to put the loss on

struct Run {
  Graph joint;
  std::vector<at::Tensor> params;  // by NodeId; defined for params
  NodeValues values;
};

// Placeholder values: params uniform in [-1, 1], index inputs uniform below
// their bound, the tangent 1.
Run prepare(const Fwd& f, NodeId loss, bool requires_grad) {
  Run run;
  run.joint = *build_joint_graph(f.g, {loss, {}});
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(11);
  run.values.resize(static_cast<size_t>(run.joint.size()));
  run.params.resize(static_cast<size_t>(run.joint.size()));
  for (NodeId id = 0; id < run.joint.size(); ++id) {
    const Node& n = run.joint.node(id);
    if (!n.is_placeholder()) continue;
    at::ScalarType type = to_scalar_type(n.meta().dtype);
    at::Tensor v;
    if (n.kind == PlaceholderKind::kParam) {
      v = at::rand(n.meta().shape, gen, at::kDouble).mul(2).sub(1).to(type);
      if (requires_grad) v.requires_grad_(true);
      run.params[static_cast<size_t>(id)] = v;
    } else if (n.kind == PlaceholderKind::kTangent) {
      v = at::ones(n.meta().shape, at::TensorOptions().dtype(type));
    } else {
      int64_t bound = 0;
      for (const auto& [node, b] : f.index_bounds) {
        if (f.g.node(node).name == n.name) bound = b;
      }
      v = at::randint(bound, n.meta().shape, gen, at::kLong);
    }
    run.values[static_cast<size_t>(id)] = {v};
  }
  return run;
}

double max_abs(const at::Tensor& t) { return t.abs().max().to(at::kDouble).item<double>(); }

void check_against_autograd(const std::string& what, const Builder& build, double rtol) {
  Fwd f;
  NodeId out = build(f);
  NodeId loss = f.loss(out);
  ASSERT_TRUE(f.error.empty()) << what << ": " << f.error;
  Run run = prepare(f, loss, /*requires_grad=*/true);
  Expected<ExecuteStats> stats = execute_nodes(run.joint, run.values);
  ASSERT_TRUE(stats) << what << ": " << stats.error().message;
  for (const GraphOutput& o : run.joint.outputs()) {
    if (o.kind == OutputKind::kLoss) run.values[static_cast<size_t>(o.node)][0].backward();
  }
  int checked = 0;
  for (const GraphOutput& o : run.joint.outputs()) {
    if (o.kind != OutputKind::kGradient) continue;
    at::Tensor mine = run.values[static_cast<size_t>(o.node)][0].detach();
    at::Tensor ref = run.params[static_cast<size_t>(o.param)].grad();
    ASSERT_TRUE(ref.defined()) << what << ": autograd gave no gradient";
    double scale = max_abs(ref);
    double diff = max_abs(mine.sub(ref));
    EXPECT_LE(diff, rtol * (scale + 1e-3)) << what << " grad of " << run.joint.node(o.param).name
                                           << ": max diff " << diff << ", largest entry " << scale;
    ++checked;
  }
  EXPECT_GT(checked, 0) << what;
}

constexpr double kF64 = 1e-9;
constexpr double kAttention = 1e-6;
constexpr double kF32 = 1e-5;

// One builder per differentiable op (rules in src/autodiff/rules/).
TEST(AutodiffNumerics, MatmulRulesMatchAutograd) {
  check_against_autograd(
      "addmm",
      [](Fwd& f) {
        NodeId b = f.param({4}), x = f.param({3, 5}), w = f.param({5, 4});
        return f.op(OpId::kAddmm, {b, x, w}, {{"beta", 0.5}, {"alpha", 2.0}});
      },
      kF64);
  check_against_autograd(
      "bmm",
      [](Fwd& f) {
        NodeId a = f.param({2, 3, 4}), b = f.param({2, 4, 5});
        return f.op(OpId::kBmm, {a, b});
      },
      kF64);
  check_against_autograd(
      "mm",
      [](Fwd& f) {
        NodeId a = f.param({3, 4}), b = f.param({4, 5});
        return f.op(OpId::kMm, {a, b});
      },
      kF64);
}

TEST(AutodiffNumerics, ViewAndLayoutRulesMatchAutograd) {
  check_against_autograd(
      "clone",
      [](Fwd& f) {
        return f.op(OpId::kClone, {f.param({3, 4})});
      },
      kF64);
  check_against_autograd(
      "expand",
      [](Fwd& f) {
        return f.op(OpId::kExpand, {f.param({1, 4})}, {{"size", V{3, 4}}});
      },
      kF64);
  check_against_autograd(
      "t",
      [](Fwd& f) {
        return f.op(OpId::kT, {f.param({3, 4})});
      },
      kF64);
  check_against_autograd(
      "transpose",
      [](Fwd& f) {
        return f.op(OpId::kTranspose, {f.param({2, 3, 4})},
                    {{"dim0", int64_t{0}}, {"dim1", int64_t{2}}});
      },
      kF64);
  check_against_autograd(
      "_unsafe_view",
      [](Fwd& f) {
        return f.op(OpId::kUnsafeView, {f.param({3, 4})}, {{"size", V{12}}});
      },
      kF64);
  check_against_autograd(
      "unsqueeze",
      [](Fwd& f) {
        return f.op(OpId::kUnsqueeze, {f.param({3, 4})}, {{"dim", int64_t{1}}});
      },
      kF64);
  check_against_autograd(
      "view",
      [](Fwd& f) {
        return f.op(OpId::kView, {f.param({3, 4})}, {{"size", V{2, 6}}});
      },
      kF64);
}

TEST(AutodiffNumerics, ComplexViewRulesMatchAutograd) {
  // RoPE's pattern: x * freqs, and its conjugate, through real views (f32 only).
  check_against_autograd(
      "view_as_complex * conj(view_as_complex) -> view_as_real",
      [](Fwd& f) {
        NodeId x = f.param({3, 4, 2}, DType::f32), r = f.param({3, 4, 2}, DType::f32);
        NodeId zx = f.op(OpId::kViewAsComplex, {x});
        NodeId zr = f.op(OpId::kConj, {f.op(OpId::kViewAsComplex, {r})});
        return f.op(OpId::kViewAsReal, {f.op(OpId::kMulTensor, {zx, zr})});
      },
      kF32);
}

TEST(AutodiffNumerics, PointwiseRulesMatchAutograd) {
  check_against_autograd(
      "add.Scalar",
      [](Fwd& f) {
        return f.op(OpId::kAddScalar, {f.param({3, 4})}, {{"other", 1.5}});
      },
      kF64);
  check_against_autograd(
      "add.Tensor (broadcast, alpha)",
      [](Fwd& f) {
        NodeId a = f.param({3, 4}), b = f.param({4});
        return f.op(OpId::kAddTensor, {a, b}, {{"alpha", 3.0}});
      },
      kF64);
  check_against_autograd(
      "div.Scalar",
      [](Fwd& f) {
        return f.op(OpId::kDivScalar, {f.param({3, 4})}, {{"other", 4.0}});
      },
      kF64);
  check_against_autograd(
      "mul.Scalar",
      [](Fwd& f) {
        return f.op(OpId::kMulScalar, {f.param({3, 4})}, {{"other", -2.0}});
      },
      kF64);
  check_against_autograd(
      "mul.Tensor (broadcast)",
      [](Fwd& f) {
        NodeId a = f.param({3, 4}), b = f.param({3, 1});
        return f.op(OpId::kMulTensor, {a, b});
      },
      kF64);
  check_against_autograd(
      "pow.Tensor_Scalar",
      [](Fwd& f) {
        return f.op(OpId::kPowTensorScalar, {f.param({3, 4})}, {{"exponent", 3.0}});
      },
      kF64);
  check_against_autograd(
      "relu",
      [](Fwd& f) {
        return f.op(OpId::kRelu, {f.param({3, 4})});
      },
      kF64);
  check_against_autograd(
      "rsqrt (of x^2 + 1)",
      [](Fwd& f) {
        NodeId sq = f.op(OpId::kPowTensorScalar, {f.param({3, 4})}, {{"exponent", 2.0}});
        return f.op(OpId::kRsqrt, {f.op(OpId::kAddScalar, {sq}, {{"other", 1.0}})});
      },
      kF64);
  check_against_autograd(
      "silu",
      [](Fwd& f) {
        return f.op(OpId::kSilu, {f.param({3, 4})});
      },
      kF64);
  check_against_autograd(
      "_to_copy f32 -> f64",
      [](Fwd& f) {
        return f.op(OpId::kToCopy, {f.param({3, 4}, DType::f32)}, {{"dtype", DType::f64}});
      },
      kF32);
}

TEST(AutodiffNumerics, ReductionRulesMatchAutograd) {
  check_against_autograd(
      "mean.dim keepdim",
      [](Fwd& f) {
        return f.op(OpId::kMeanDim, {f.param({3, 4})}, {{"dim", V{-1}}, {"keepdim", true}});
      },
      kF64);
  check_against_autograd(
      "sum.dim_IntList",
      [](Fwd& f) {
        return f.op(OpId::kSumDimIntList, {f.param({2, 3, 4})}, {{"dim", V{0, 2}}});
      },
      kF64);
}

TEST(AutodiffNumerics, NnRulesMatchAutograd) {
  check_against_autograd(
      "embedding (repeated indices)",
      [](Fwd& f) {
        NodeId w = f.param({6, 4});
        NodeId idx = f.index({2, 5}, 6);  // 10 draws from 6 rows: repeats
        return f.op(OpId::kEmbedding, {w, idx});
      },
      kF64);
  check_against_autograd(
      "_log_softmax",
      [](Fwd& f) {
        return f.op(OpId::kLogSoftmax, {f.param({3, 5})},
                    {{"dim", int64_t{1}}, {"half_to_float", false}});
      },
      kF64);
  for (int64_t reduction : {0, 1, 2}) {
    check_against_autograd(
        "nll_loss_forward reduction " + std::to_string(reduction),
        [=](Fwd& f) {
          NodeId x = f.param({4, 5});
          NodeId target = f.index({4}, 5);
          NodeId lsm =
              f.op(OpId::kLogSoftmax, {x}, {{"dim", int64_t{1}}, {"half_to_float", false}});
          NodeId nll = f.op(OpId::kNllLossForward, {lsm, target},
                            {{"reduction", reduction}, {"ignore_index", int64_t{-100}}});
          return f.op(OpId::kGetItem, {nll}, {{"index", int64_t{0}}});
        },
        kF64);
  }
}

TEST(AutodiffNumerics, AttentionRuleAndAnalyticBackwardMatchAutograd) {
  for (bool causal : {true, false}) {
    check_against_autograd(
        causal ? "sdpa causal" : "sdpa",
        [=](Fwd& f) {
          NodeId q = f.param({1, 2, 4, 3}), k = f.param({1, 2, 4, 3}), v = f.param({1, 2, 4, 3});
          NodeId a =
              f.op(OpId::kSdpaFlashCpu, {q, k, v}, {{"dropout_p", 0.0}, {"is_causal", causal}});
          return f.op(OpId::kGetItem, {a}, {{"index", int64_t{0}}});
        },
        kAttention);
  }
}

// Central differences on a few coordinates of every MLP param (f64).
TEST(AutodiffNumerics, MlpGradientsMatchCentralFiniteDifferences) {
  Expected<Graph> g = build_mlp({.batch = 4,
                                 .in_features = 5,
                                 .hidden = 6,
                                 .classes = 3,
                                 .hidden_layers = 1,
                                 .dtype = DType::f64});
  ASSERT_TRUE(g) << g.error().message;
  std::vector<at::Tensor> init = *init_placeholders(*g, {.seed = 3, .weight_std = 0.5});
  auto run = [&](NodeId param, int64_t index, double delta) {
    NodeValues values(static_cast<size_t>(g->size()));
    for (NodeId id = 0; id < g->size(); ++id) {
      if (!g->node(id).is_placeholder()) continue;
      at::Tensor v = init[static_cast<size_t>(id)];
      if (id == param) {
        v = v.clone();
        v.view({-1})[index].add_(delta);
      }
      values[static_cast<size_t>(id)] = {v};
    }
    EXPECT_TRUE(execute_nodes(*g, values));
    return values;
  };
  NodeValues base = run(kNoNode, 0, 0);
  NodeId loss = g->outputs().front().node;
  constexpr double kStep = 1e-6;
  int checked = 0;
  for (const GraphOutput& o : g->outputs()) {
    if (o.kind != OutputKind::kGradient) continue;
    at::Tensor grad = base[static_cast<size_t>(o.node)][0].reshape({-1});
    for (int64_t index : {int64_t{0}, grad.numel() / 2, grad.numel() - 1}) {
      double up = run(o.param, index, kStep)[static_cast<size_t>(loss)][0].item<double>();
      double down = run(o.param, index, -kStep)[static_cast<size_t>(loss)][0].item<double>();
      double fd = (up - down) / (2 * kStep);
      EXPECT_NEAR(grad[index].item<double>(), fd, 1e-7)
          << g->node(o.param).name << "[" << index << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 3);  // 2 layers x (weight, bias) x 3 coordinates
}

// The whole 1-layer debug model (RoPE, GQA attention, SwiGLU, RMSNorm, loss)
// in f32: every param gradient against autograd through the same kernels.
TEST(AutodiffNumerics, OneLayerLlamaGradientsMatchAutograd) {
  Expected<Graph> g = build_model({.name = "llama3-debugmodel", .batch = 1, .seq = 8, .layers = 1});
  ASSERT_TRUE(g) << g.error().message;
  std::vector<at::Tensor> init = *init_placeholders(*g, {.seed = 2});
  NodeValues values(static_cast<size_t>(g->size()));
  for (NodeId id = 0; id < g->size(); ++id) {
    if (!g->node(id).is_placeholder()) continue;
    if (g->node(id).kind == PlaceholderKind::kParam)
      init[static_cast<size_t>(id)].requires_grad_(true);
    values[static_cast<size_t>(id)] = {init[static_cast<size_t>(id)]};
  }
  ASSERT_TRUE(execute_nodes(*g, values));
  values[static_cast<size_t>(g->outputs().front().node)][0].backward();
  int checked = 0;
  for (const GraphOutput& o : g->outputs()) {
    if (o.kind != OutputKind::kGradient) continue;
    at::Tensor mine = values[static_cast<size_t>(o.node)][0].detach();
    at::Tensor ref = init[static_cast<size_t>(o.param)].grad();
    double scale = max_abs(ref);
    EXPECT_GT(scale, 0) << g->node(o.param).name;
    EXPECT_LE(max_abs(mine.sub(ref)), 1e-3 * scale) << g->node(o.param).name;
    ++checked;
  }
  EXPECT_EQ(checked, 12);  // embedding, 7 layer matrices, 2 layer norms, final norm, output
}

}  // namespace
}  // namespace autopar
