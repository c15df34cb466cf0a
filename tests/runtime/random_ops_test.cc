// Random ops: the counter-based generator, and bernoulli drawing the same
// numbers whatever the sharding (the soundness sweep checks every 2x2 layout).
#include <ATen/ops/zeros.h>
#include <gtest/gtest.h>

#include "runtime/counter_rng.h"
#include "runtime/kernels.h"

namespace autopar {
namespace {

// Known-answer vectors of Philox4x32-10 from Random123's kat_vectors.
TEST(CounterRng, Philox4x32MatchesTheRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, 0),
            (PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, ~uint64_t{0}),
            (PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                       0x299f31d0a4093822ull),
            (PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(CounterRng, UniformDrawsAreInRangeAndDifferByStepAndNode) {
  double sum = 0;
  for (uint64_t i = 0; i < 10000; ++i) {
    float u = uniform_at(7, i);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);  // mean of U[0,1), sd of the mean ~0.003
  EXPECT_NE(step_random_key(0, 1), step_random_key(0, 2));
  EXPECT_NE(random_stream_key(1, "bernoulli"), random_stream_key(1, "bernoulli_1"));
}

Node bernoulli(double p) {
  Node node;
  node.name = "bernoulli";
  node.op = OpId::kBernoulliP;
  node.inputs = {0};
  node.attrs.set("p", p);
  node.outputs = {{{8, 6}, DType::f32}};
  return node;
}

TEST(RandomOps, BernoulliKeepsAboutPAndAShardDrawsWhatTheWholeTensorDraws) {
  Node node = bernoulli(0.8);
  KernelContext whole_ctx;
  whole_ctx.random_key = 42;
  at::Tensor x = at::zeros({8, 6});
  auto whole = run_kernel(node, {&x, 1}, node.outputs, whole_ctx);
  ASSERT_TRUE(whole) << whole.error().message;
  double kept = (*whole)[0].sum().item<double>() / 48;
  EXPECT_GT(kept, 0.6);  // 48 draws at p = 0.8: below 0.6 has probability < 1e-3
  // Rows 4..7, columns 3..5 of the same stream.
  at::Tensor part = at::zeros({4, 3});
  KernelContext shard_ctx = whole_ctx;
  shard_ctx.output_offsets = {{4, 3}};
  TensorMeta local{{4, 3}, DType::f32};
  auto shard = run_kernel(node, {&part, 1}, {&local, 1}, shard_ctx);
  ASSERT_TRUE(shard) << shard.error().message;
  EXPECT_TRUE((*shard)[0].equal((*whole)[0].slice(0, 4, 8).slice(1, 3, 6)));
  // Another step's key draws another mask.
  KernelContext next = whole_ctx;
  next.random_key = 43;
  auto other = run_kernel(node, {&x, 1}, node.outputs, next);
  ASSERT_TRUE(other);
  EXPECT_FALSE((*other)[0].equal((*whole)[0]));
}

}  // namespace
}  // namespace autopar
