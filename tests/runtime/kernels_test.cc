// Kernels, placeholder init, shard slicing/assembly and the local executor,
// on hand-sized tensors with the arithmetic next to the expected values.
#include <cmath>

#include <ATen/core/Tensor.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/view_as_real.h>
#include <gtest/gtest.h>

#include "models/mlp.h"
#include "runtime/init.h"
#include "runtime/process_memory.h"
#include "runtime/kernels.h"
#include "runtime/local_executor.h"
#include "runtime/shard_tensor.h"
#include "sharding/mesh.h"

namespace autopar {
namespace {

at::Tensor f32(std::vector<float> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::TensorOptions().dtype(at::kFloat)).reshape(shape);
}
at::Tensor i64(std::vector<int64_t> values) { return at::tensor(values, at::kLong); }

Node node_of(OpId op, int inputs, Attrs attrs = {}) {
  Node node;
  node.name = "n";
  node.op = op;
  node.inputs.assign(static_cast<size_t>(inputs), 0);
  node.attrs = std::move(attrs);
  return node;
}

std::vector<float> values_of(const at::Tensor& t) {
  at::Tensor c = t.contiguous().to(at::kFloat);
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

TEST(Kernels, EveryOpButPlaceholderAndGetItemHasAKernel) {
  std::vector<std::string> missing;
  for (const OpDef& def : all_ops()) {
    bool structural = def.id == OpId::kPlaceholder || def.id == OpId::kGetItem;
    if (has_kernel(def.id) == structural) missing.emplace_back(def.name);
  }
  std::string list;
  for (const std::string& name : missing) list += name + " ";
  EXPECT_TRUE(missing.empty()) << "wrong kernel coverage: " << list;
}

TEST(Kernels, PlaceholderIsRejectedNamingTheNode) {
  Node node = node_of(OpId::kPlaceholder, 0);
  node.name = "tokens";
  Expected<std::vector<at::Tensor>> out = run_kernel(node, {}, {});
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("tokens"), std::string::npos) << out.error().message;
}

TEST(Kernels, MmMatchesHandArithmetic) {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]]
  std::vector<at::Tensor> in{f32({1, 2, 3, 4}, {2, 2}), f32({5, 6, 7, 8}, {2, 2})};
  TensorMeta out{{2, 2}, DType::f32};
  Expected<std::vector<at::Tensor>> r = run_kernel(node_of(OpId::kMm, 2), in, {&out, 1});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{19, 22, 43, 50}));
}

TEST(Kernels, OutputThatDisagreesWithItsMetaIsAnErrorNamingTheNode) {
  std::vector<at::Tensor> in{f32({1, 2, 3, 4}, {2, 2}), f32({5, 6, 7, 8}, {2, 2})};
  TensorMeta wrong{{2, 3}, DType::f32};
  Node node = node_of(OpId::kMm, 2);
  node.name = "mm_7";
  Expected<std::vector<at::Tensor>> r = run_kernel(node, in, {&wrong, 1});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("mm_7"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("f32[2, 3]"), std::string::npos) << r.error().message;
}

TEST(Kernels, ViewTakesItsShapeFromTheLocalOutputNotTheAttribute) {
  // The attribute says the full [4, 6]; this shard is [2, 6] -> local [12].
  Node node = node_of(OpId::kView, 1, {{"size", std::vector<int64_t>{24}}});
  TensorMeta out{{12}, DType::f32};
  std::vector<at::Tensor> in{at::arange(12, at::kFloat).reshape({2, 6})};
  Expected<std::vector<at::Tensor>> r = run_kernel(node, in, {&out, 1});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].sizes(), at::IntArrayRef({12}));
}

// runtime/process_memory.h: a freed tensor's block serves the next tensor of
// that size, so a step touches no fresh page after the first.
TEST(ProcessMemory, AFreedBlockServesTheNextTensorOfItsSize) {
  keep_freed_memory();
  const void* first = nullptr;
  {
    at::Tensor a = at::empty({1 << 16}, at::kFloat);
    first = a.data_ptr();
  }
  at::Tensor b = at::empty({1 << 16}, at::kFloat);
  EXPECT_EQ(b.data_ptr(), first);
  at::Tensor c = at::empty({1 << 16}, at::kFloat);  // b still holds its block
  EXPECT_NE(c.data_ptr(), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data_ptr()) % 64, 0u);
}

TEST(Kernels, ViewSlicesTheInnerDimsOfARegroupFromAReplicatedInput) {
  // [32, 16] -> [8, 8, 8] regroups both sides: output dim 1 may be sharded
  // while the input stays whole. This device holds block 1 of 2 of dim 1.
  Node node = node_of(OpId::kView, 1, {{"size", std::vector<int64_t>{8, 8, 8}}});
  node.outputs = {TensorMeta{{8, 8, 8}, DType::f32}};
  at::Tensor full = at::arange(512, at::kFloat).reshape({32, 16});
  KernelContext context;
  context.output_offsets = {{0, 4, 0}};
  TensorMeta out{{8, 4, 8}, DType::f32};
  Expected<std::vector<at::Tensor>> r = run_kernel(node, {&full, 1}, {&out, 1}, context);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(at::equal((*r)[0], full.reshape({8, 8, 8}).narrow(1, 4, 4)));
}

TEST(Kernels, EmbeddingOnARowShardLooksUpOnlyItsRowsAndZerosTheRest) {
  // Full table rows r = [r, 10 r]; this shard holds rows 2..3 (offset 2).
  at::Tensor shard = f32({2, 20, 3, 30}, {2, 2});
  std::vector<at::Tensor> in{shard, i64({0, 3, 2})};
  KernelContext context;
  context.input_offsets = {{2, 0}};
  context.input_full_shapes = {{4, 2}};
  TensorMeta out{{3, 2}, DType::f32};
  Expected<std::vector<at::Tensor>> r =
      run_kernel(node_of(OpId::kEmbedding, 2), in, {&out, 1}, context);
  ASSERT_TRUE(r) << r.error().message;
  // index 0 is another shard's row -> zeros; 3 -> local row 1; 2 -> local row 0.
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{0, 0, 3, 30, 2, 20}));
}

TEST(Kernels, EmbeddingDenseBackwardScattersOnlyIntoThisShardsRows) {
  // grads for indices [1, 3, 3]: rows [1, 1], [2, 2], [4, 4]; this shard holds rows 2..3.
  Node node = node_of(OpId::kEmbeddingDenseBackward, 2, {{"num_weights", int64_t{4}}});
  std::vector<at::Tensor> in{f32({1, 1, 2, 2, 4, 4}, {3, 2}), i64({1, 3, 3})};
  KernelContext context;
  context.output_offsets = {{2, 0}};
  TensorMeta out{{2, 2}, DType::f32};
  Expected<std::vector<at::Tensor>> r = run_kernel(node, in, {&out, 1}, context);
  ASSERT_TRUE(r) << r.error().message;
  // row 2: nothing; row 3: [2 + 4, 2 + 4]. Index 1 belongs to another shard.
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{0, 0, 6, 6}));
}

TEST(Kernels, NllLossMeanSkipsIgnoredTargets) {
  // log-probs rows [-1, -2, -3], [-4, -5, -6]; targets [1, ignored]:
  // loss = -(-2) / 1 counted target = 2, total_weight = 1.
  Node node = node_of(OpId::kNllLossForward, 2,
                      {{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}});
  std::vector<at::Tensor> in{f32({-1, -2, -3, -4, -5, -6}, {2, 3}), i64({1, -100})};
  std::vector<TensorMeta> out{{{}, DType::f32}, {{}, DType::f32}};
  Expected<std::vector<at::Tensor>> r = run_kernel(node, in, out);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FLOAT_EQ((*r)[0].item<float>(), 2.0f);
  EXPECT_FLOAT_EQ((*r)[1].item<float>(), 1.0f);
}

TEST(Kernels, CausalAttentionFirstQueryReadsOnlyTheFirstValue) {
  // B = H = 1, S = 2, E = 1: q = k = [1, 2], v = [10, 20]. Query 0 sees key 0
  // only -> 10. Query 1: scores 2*1, 2*2 (scale 1/sqrt(1)) -> softmax
  // [e^2, e^4] / (e^2 + e^4) -> 10 w0 + 20 w1; lse = log(e^2 + e^4).
  at::Tensor q = f32({1, 2}, {1, 1, 2, 1});
  std::vector<at::Tensor> in{q, q, f32({10, 20}, {1, 1, 2, 1})};
  std::vector<TensorMeta> out{{{1, 1, 2, 1}, DType::f32}, {{1, 1, 2}, DType::f32}};
  Expected<std::vector<at::Tensor>> r =
      run_kernel(node_of(OpId::kSdpaFlashCpu, 3, {{"is_causal", true}}), in, out);
  ASSERT_TRUE(r) << r.error().message;
  double w1 = std::exp(4.0) / (std::exp(2.0) + std::exp(4.0));
  std::vector<float> o = values_of((*r)[0]);
  EXPECT_NEAR(o[0], 10.0, 1e-5);
  EXPECT_NEAR(o[1], 10.0 * (1 - w1) + 20.0 * w1, 1e-4);
  EXPECT_NEAR(values_of((*r)[1])[1], std::log(std::exp(2.0) + std::exp(4.0)), 1e-5);
}

TEST(Kernels, ConjThenViewAsRealNegatesTheImaginaryParts) {
  // view_as_complex([[1, 2], [3, 4]]) = [1+2i, 3+4i]; conj -> [1-2i, 3-4i].
  std::vector<at::Tensor> in{f32({1, 2, 3, 4}, {2, 2})};
  TensorMeta c{{2}, DType::c64};
  Expected<std::vector<at::Tensor>> z = run_kernel(node_of(OpId::kViewAsComplex, 1), in, {&c, 1});
  ASSERT_TRUE(z) << z.error().message;
  Expected<std::vector<at::Tensor>> zc = run_kernel(node_of(OpId::kConj, 1), *z, {&c, 1});
  ASSERT_TRUE(zc) << zc.error().message;
  TensorMeta real{{2, 2}, DType::f32};
  Expected<std::vector<at::Tensor>> r = run_kernel(node_of(OpId::kViewAsReal, 1), *zc, {&real, 1});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{1, -2, 3, -4}));
}

TEST(Init, FreqsCisIsTorchtitansRotation) {
  // dim 4, theta 100: frequencies 100^(-0/4) = 1 and 100^(-2/4) = 0.1;
  // entry (t = 3, i = 1) = exp(1j * 3 * 0.1).
  at::Tensor f = precompute_freqs_cis(4, 5, 100.0);
  ASSERT_EQ(f.sizes(), at::IntArrayRef({5, 2}));
  at::Tensor e = at::view_as_real(f).to(at::kDouble);
  EXPECT_NEAR(e[3][1][0].item<double>(), std::cos(0.3), 1e-6);
  EXPECT_NEAR(e[3][1][1].item<double>(), std::sin(0.3), 1e-6);
}

TEST(Init, SameSeedGivesSameValuesAndLabelsStayBelowTheClassCount) {
  Expected<Graph> g =
      build_mlp({.batch = 64, .in_features = 4, .hidden = 8, .classes = 3, .hidden_layers = 1});
  ASSERT_TRUE(g) << g.error().message;
  Expected<std::vector<at::Tensor>> a = init_placeholders(*g, {.seed = 7});
  Expected<std::vector<at::Tensor>> b = init_placeholders(*g, {.seed = 7});
  Expected<std::vector<at::Tensor>> c = init_placeholders(*g, {.seed = 8});
  ASSERT_TRUE(a && b && c);
  NodeId w = *g->find("layers_0_weight");
  NodeId labels = *g->find("labels");
  EXPECT_TRUE((*a)[static_cast<size_t>(w)].equal((*b)[static_cast<size_t>(w)]));
  EXPECT_FALSE((*a)[static_cast<size_t>(w)].equal((*c)[static_cast<size_t>(w)]));
  const at::Tensor& l = (*a)[static_cast<size_t>(labels)];
  EXPECT_GE(l.min().item<int64_t>(), 0);
  EXPECT_EQ(l.max().item<int64_t>(), 2);  // 64 draws from {0, 1, 2} hit 2
}

DeviceMesh mesh_2x2() { return *make_mesh({2, 2}, *load_hardware("cpu")); }

TEST(ShardTensor, NestedShardingSplitsTheLowerMeshDimOutermost) {
  // [0..7] as S(0)S(0) on 2x2: device (i, j) holds chunk 2 i + j of 4.
  at::Tensor full = at::arange(8, at::kFloat);
  Sharding s = *parse_sharding("S(0)S(0)");
  Expected<at::Tensor> d01 = local_shard(full, s, mesh_2x2(), {0, 1});
  Expected<at::Tensor> d10 = local_shard(full, s, mesh_2x2(), {1, 0});
  ASSERT_TRUE(d01 && d10);
  EXPECT_EQ(values_of(*d01), (std::vector<float>{2, 3}));
  EXPECT_EQ(values_of(*d10), (std::vector<float>{4, 5}));
  EXPECT_EQ(shard_offsets({8}, s, mesh_2x2(), {1, 0}), (std::vector<int64_t>{4}));
}

TEST(ShardTensor, AssembleInvertsLocalShardForShardAndReplicate) {
  at::Tensor full = at::arange(24, at::kFloat).reshape({4, 6});
  for (const char* text : {"S(0)S(1)", "S(0)S(0)", "RS(0)", "S(1)R", "RR"}) {
    Sharding s = *parse_sharding(text);
    std::vector<at::Tensor> shards;
    for (int64_t d = 0; d < 4; ++d)
      shards.push_back(*local_shard(full, s, mesh_2x2(), mesh_coordinate(mesh_2x2(), d)));
    Expected<at::Tensor> back = assemble(shards, s, mesh_2x2());
    ASSERT_TRUE(back) << text << ": " << back.error().message;
    EXPECT_TRUE(back->equal(full)) << text;
  }
}

TEST(ShardTensor, AssembleSumsPartialAndRejectsDisagreeingReplicas) {
  // P on d0, R on d1: devices (0, *) hold 1, devices (1, *) hold 2 -> 3.
  std::vector<at::Tensor> shards{f32({1}, {1}), f32({1}, {1}), f32({2}, {1}), f32({2}, {1})};
  Expected<at::Tensor> sum = assemble(shards, *parse_sharding("PR"), mesh_2x2());
  ASSERT_TRUE(sum) << sum.error().message;
  EXPECT_FLOAT_EQ(sum->item<float>(), 3.0f);
  Expected<at::Tensor> avg = assemble(shards, *parse_sharding("P(avg)R"), mesh_2x2());
  ASSERT_TRUE(avg);
  EXPECT_FLOAT_EQ(avg->item<float>(), 1.5f);
  Expected<at::Tensor> bad = assemble(shards, *parse_sharding("RR"), mesh_2x2());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("mesh dim 0"), std::string::npos) << bad.error().message;
}

TEST(LocalExecutor, MlpStepGivesEveryParamGradientAndAnInitialLossNearLogClasses) {
  // Weights ~ N(0, 0.02): logits are near 0, so the loss is near ln(16) = 2.77.
  Expected<Graph> g =
      build_mlp({.batch = 8, .in_features = 16, .hidden = 32, .classes = 16, .hidden_layers = 2});
  ASSERT_TRUE(g) << g.error().message;
  Expected<LocalRunResult> r = run_local(*g, 1);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NEAR(r->loss.item<double>(), std::log(16.0), 0.05);
  ASSERT_EQ(r->grads.size(), 6u);  // 3 layers x (weight, bias)
  EXPECT_EQ(r->grad("output.bias").sizes(), at::IntArrayRef({16}));
  // The peak holds at least the params: 16*32 + 32 + 32*32 + 32 + 32*16 + 16 floats.
  EXPECT_GE(r->stats.peak_live_bytes, (16 * 32 + 32 + 32 * 32 + 32 + 32 * 16 + 16) * 4);
}

}  // namespace
}  // namespace autopar
