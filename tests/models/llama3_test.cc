#include "models/llama3.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <regex>

#include "model_checks.h"

namespace autopar {
namespace {

using namespace autopar::testing;

TEST(Llama3, EightBillionHasTorchtitansParamCount) {
  auto start = std::chrono::steady_clock::now();
  Graph g = build_or_fail({.name = "llama3-8b"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Printed for the record; timing is not asserted (it depends on the build type).
  std::cout << "llama3-8b joint graph: " << g.size() << " nodes in " << seconds << " s\n";
  // hidden = 1024 * ceil(int(1.3 * int(8 * 4096 / 3)) / 1024) = 1024 * ceil(14198 / 1024) = 14336
  // per layer: wq, wo 4096*4096; wk, wv 1024*4096; w1, w2, w3 4096*14336; 2 norms 4096
  //   = 33554432 + 8388608 + 176160768 + 8192 = 218112000; x 32 = 6979584000
  // tok_embeddings + output 2 * 128256*4096 = 1050673152; norm 4096
  EXPECT_EQ(param_count(g), 8'030'261'248);
}

TEST(Llama3, SeventyBillionHasTorchtitansParamCount) {
  Graph g = build_or_fail({.name = "llama3-70b"});
  // hidden = 4096 * ceil(int(1.3 * 21845) / 4096) = 4096 * ceil(28398 / 4096) = 28672
  // per layer: 2 * 8192^2 + 2 * 1024*8192 + 3 * 8192*28672 + 2 * 8192 = 855654400; x 80
  // + 2 * 128256*8192 + 8192 = 68452352000 + 2101346304 + 8192
  EXPECT_EQ(param_count(g), 70'553'706'496);
}

TEST(Llama3, FourHundredFiveBillionForwardHasTorchtitansParamCount) {
  Expected<ForwardGraph> f = build_llama3_forward(*llama3_config("llama3-405b"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  // hidden 53248, head_dim 16384 / 128 = 128, kv dim 8 * 128 = 1024
  // per layer: 2 * 16384^2 + 2 * 1024*16384 + 3 * 16384*53248 + 2 * 16384 = 3187703808; x 126
  // + 2 * 128256*16384 + 16384 = 401650679808 + 4202692608 + 16384
  EXPECT_EQ(param_count(f->graph), 405'853'388'800);
}

TEST(Llama3, DebugModelParamCount) {
  Graph g = build_or_fail({.name = "llama3-debugmodel"});
  // head_dim 256/16 = 16, kv dim 8*16 = 128, hidden 256 * ceil(682 / 256) = 768
  // per layer: wq, wo 65536 each; wk, wv 32768 each; w1, w2, w3 196608 each; norms 512
  //   = 786944; x 6 = 4721664; + 2 * 2000*256 + 256 = 5745920
  EXPECT_EQ(param_count(g), 5'745'920);
}

TEST(Llama3, HiddenDimFollowsTorchtitansRounding) {
  EXPECT_EQ(llama3_config("llama3-8b")->ffn_hidden_dim(), 14336);
  EXPECT_EQ(llama3_config("llama3-70b")->ffn_hidden_dim(), 28672);
  // 4096 * ceil(int(1.2 * 43690) / 4096) = 4096 * ceil(52428 / 4096) = 4096 * 13
  EXPECT_EQ(llama3_config("llama3-405b")->ffn_hidden_dim(), 53248);
  EXPECT_EQ(llama3_config("llama3-debugmodel")->ffn_hidden_dim(), 768);
}

TEST(Llama3, ForwardNodeCountIsSeventyFivePerLayerPlusSeventeen) {
  Llama3Config c = *llama3_config("llama3-debugmodel");
  c.n_layers = 2;
  Expected<ForwardGraph> f = build_llama3_forward(c);
  ASSERT_TRUE(f.ok()) << f.error().message;
  // Per layer: 2 RMSNorms of 6; attention 47 (3 linears of 4 + 3 head views,
  // RoPE 11, 2 repeat_kv of 4, 3 transposes, sdpa + 2 getitems, transpose,
  // clone, view, wo of 4); SwiGLU 14; 2 residual adds. Outside the layers:
  // embedding 1, norm 6, output 4, loss 6 (2 views, log_softmax, nll, 2 getitems).
  int compute = 0;
  for (const Node& node : f->graph.nodes()) compute += node.is_placeholder() ? 0 : 1;
  EXPECT_EQ(compute, 75 * 2 + 17);
  // In bf16 each RMSNorm adds 2 casts, RoPE 4 and the loss 1: 8 per layer, 3 outside.
  c.dtype = DType::bf16;
  f = build_llama3_forward(c);
  ASSERT_TRUE(f.ok()) << f.error().message;
  compute = 0;
  for (const Node& node : f->graph.nodes()) compute += node.is_placeholder() ? 0 : 1;
  EXPECT_EQ(compute, 83 * 2 + 20);
}

TEST(Llama3, EveryParamGetsOneGradientOfItsOwnMeta) {
  expect_one_matching_grad_per_param(build_or_fail({.name = "llama3-debugmodel"}));
  expect_one_matching_grad_per_param(
      build_or_fail({.name = "llama3-8b", .batch = 1, .seq = 64, .layers = 2}));
}

TEST(Llama3, PlaceholdersAreParamsThenFreqsCisThenTokensAndLabelsThenTheTangent) {
  Graph g = build_or_fail({.name = "llama3-debugmodel", .layers = 1});
  // 9 params in the layer + tok_embeddings, norm, output = 12
  EXPECT_EQ(g.node(0).name, "tok_embeddings_weight");
  EXPECT_EQ(g.node(1).name, "layers_0_attention_wq_weight");
  EXPECT_EQ(g.node(1).target, "layers.0.attention.wq.weight");
  EXPECT_EQ(g.node(1).scope, "layers.0.attention");
  EXPECT_EQ(g.node(11).target, "output.weight");
  EXPECT_EQ(g.node(12).name, "freqs_cis");
  EXPECT_EQ(g.node(12).kind, PlaceholderKind::kBuffer);
  EXPECT_EQ(to_string(g.node(12).meta()), "c64[32, 8]");  // [seq, head_dim / 2]
  EXPECT_EQ(to_string(g.node(13).meta()), "i64[8, 32]");  // tokens [batch, seq]
  EXPECT_EQ(g.node(14).name, "labels");
  EXPECT_EQ(g.node(15).name, "tangents_1");
  EXPECT_EQ(to_string(g.node(15).meta()), "f32[]");
  EXPECT_FALSE(g.node(16).is_placeholder());
}

TEST(Llama3, RotaryEmbeddingsGoThroughComplex64) {
  Graph g = build_or_fail({.name = "llama3-debugmodel", .layers = 2});
  // Forward: q and k each view_as_complex then view_as_real; backward swaps them.
  EXPECT_EQ(count_op(g, OpId::kViewAsComplex), 4 * 2);
  EXPECT_EQ(count_op(g, OpId::kViewAsReal), 4 * 2);
  EXPECT_EQ(count_op(g, OpId::kConj), 2 * 2);  // grad * conj(freqs) for q and k
  for (const Node& node : g.nodes()) {
    if (node.op == OpId::kViewAsComplex) {
      EXPECT_EQ(node.meta().dtype, DType::c64) << node.name;
      EXPECT_EQ(node.meta().shape.back(), 8) << node.name;  // head_dim 16 / 2
    }
  }
}

TEST(Llama3, Bf16KeepsRmsNormRopeAndLossInF32) {
  Graph g = build_or_fail({.name = "llama3-debugmodel", .layers = 1, .dtype = DType::bf16});
  EXPECT_EQ(g.node(*g.find("layers_0_attention_wq_weight")).meta().dtype, DType::bf16);
  EXPECT_EQ(g.node(*g.find("pow")).meta().dtype, DType::f32);  // the first RMSNorm's x^2
  EXPECT_EQ(g.node(*g.find("embedding")).meta().dtype, DType::bf16);
  EXPECT_EQ(g.node(*g.find("_scaled_dot_product_flash_attention_for_cpu")).meta().dtype,
            DType::bf16);
  EXPECT_EQ(g.node(*g.find("_log_softmax")).meta().dtype, DType::f32);
  EXPECT_EQ(g.node(g.outputs()[0].node).meta(), (TensorMeta{{}, DType::f32}));
  expect_one_matching_grad_per_param(g);
}

TEST(Llama3, EveryNodeIsScopedToATorchtitanModule) {
  Graph g = build_or_fail({.name = "llama3-debugmodel", .layers = 2});
  std::regex module(
      "tok_embeddings|norm|output|loss|"
      "layers\\.[01](\\.(attention_norm|attention|ffn_norm|feed_forward))?");
  for (const Node& node : g.nodes()) {
    if (node.is_placeholder() && node.kind != PlaceholderKind::kParam) {
      EXPECT_EQ(node.scope, "") << node.name;
    } else {
      EXPECT_TRUE(std::regex_match(node.scope, module))
          << node.name << " in '" << node.scope << "'";
    }
  }
}

TEST(Llama3, OverridesSetBatchSeqLayersAndDtype) {
  Graph g = build_or_fail(
      {.name = "llama3-debugmodel", .batch = 4, .seq = 16, .layers = 2, .dtype = DType::bf16});
  EXPECT_EQ(to_string(g.node(*g.find("tokens")).meta()), "i64[4, 16]");
  EXPECT_EQ(to_string(g.node(*g.find("freqs_cis")).meta()), "c64[16, 8]");
  // 2 layers of 786944 + 2 * 512000 + 256
  EXPECT_EQ(param_count(g), 2 * 786944 + 1024256);
  EXPECT_EQ(g.node(*g.find("norm_weight")).meta().dtype, DType::bf16);
}

TEST(Llama3, ValidateNamesTheFieldThatIsWrong) {
  Llama3Config c = *llama3_config("llama3-debugmodel");
  c.dim = 250;
  EXPECT_EQ(validate(c).error().message, "llama3-debugmodel: n_heads 16 does not divide dim 250");
  c = *llama3_config("llama3-debugmodel");
  c.n_kv_heads = 3;
  EXPECT_EQ(validate(c).error().message,
            "llama3-debugmodel: n_kv_heads 3 does not divide n_heads 16");
  c = *llama3_config("llama3-debugmodel");
  c.n_heads = 128;  // head_dim 2 is fine; 256 heads would give head_dim 1
  c.n_kv_heads = 8;
  EXPECT_TRUE(validate(c).ok());
  c.n_heads = 256;
  EXPECT_EQ(validate(c).error().message,
            "llama3-debugmodel: head_dim 1 (dim 256 / n_heads 256) must be even for rotary "
            "embeddings");
}

}  // namespace
}  // namespace autopar
