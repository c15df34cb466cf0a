// The runtime's optimizer: a gradient handed over transposed (as the backward
// of a linear layer hands a weight's) updates the parameter exactly as its
// contiguous copy does.
#include <gtest/gtest.h>

#include <vector>

#include <ATen/ATen.h>

#include "runtime/optimizer.h"

namespace autopar {
namespace {

TEST(OptimizerState, ATransposedGradientUpdatesAsItsContiguousCopyDoes) {
  at::manual_seed(3);
  at::Tensor start = at::randn({16, 8});
  at::Tensor grad_t = at::randn({8, 16});  // stored [8, 16]; handed over as its [16, 8] transpose
  for (Optimizer kind : {Optimizer::kAdamW, Optimizer::kSgd}) {
    OptimizerConfig config;
    config.kind = kind;
    std::vector<at::Tensor> strided{start.clone()}, contiguous{start.clone()};
    OptimizerState a(config), b(config);
    for (int step = 0; step < 3; ++step) {
      a.step(strided, {grad_t.t()});
      b.step(contiguous, {grad_t.t().contiguous()});
    }
    EXPECT_FALSE(grad_t.t().is_contiguous());
    EXPECT_TRUE(at::equal(strided[0], contiguous[0]));
    EXPECT_FALSE(at::equal(strided[0], start));  // the update did happen
  }
}

}  // namespace
}  // namespace autopar
