#include <gtest/gtest.h>

#include <algorithm>

#include "ir/verifier.h"
#include "model_checks.h"

namespace autopar {
namespace {

using namespace autopar::testing;

TEST(ModelRegistry, NamesAreSortedAndEachBuildsAVerifiedJointGraph) {
  std::vector<std::string> names = model_names();
  EXPECT_EQ(names, (std::vector<std::string>{"llama3-405b", "llama3-70b", "llama3-8b",
                                             "llama3-debugmodel", "mlp"}));
  for (const std::string& name : names) {
    Graph g = build_or_fail({.name = name, .batch = 1, .layers = 1});
    EXPECT_EQ(g.name, name);
    EXPECT_GT(g.size(), 0) << name;
    Status verified = verify(g);
    EXPECT_TRUE(verified.ok()) << name << ": " << (verified.ok() ? "" : verified.error().message);
  }
}

TEST(ModelRegistry, UnknownModelErrorListsTheKnownOnes) {
  Expected<Graph> g = build_model({.name = "gpt2"});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message,
            "unknown model 'gpt2'; known models: llama3-405b, llama3-70b, llama3-8b, "
            "llama3-debugmodel, mlp");
}

TEST(ModelRegistry, NonPositiveOverridesAreErrorsNamingOptionAndValue) {
  struct Case {
    ModelOptions options;
    std::string message;
  };
  std::vector<Case> cases = {
      {{.name = "llama3-8b", .batch = 0},
       "invalid --batch 0 for model llama3-8b: must be a positive integer"},
      {{.name = "llama3-debugmodel", .seq = -4},
       "invalid --seq -4 for model llama3-debugmodel: must be a positive integer"},
      {{.name = "mlp", .layers = 0},
       "invalid --layers 0 for model mlp: must be a positive integer"},
      {{.name = "mlp", .dtype = DType::i64},
       "invalid --dtype i64 for model mlp: use f32, bf16 or f16"},
      {{.name = "mlp", .seq = 8},
       "invalid --seq 8 for model mlp: its samples have no sequence dimension"},
  };
  for (const Case& c : cases) {
    Expected<Graph> g = build_model(c.options);
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_EQ(g.error().message, c.message);
  }
}

TEST(ModelRegistry, BigModelsDefaultToBf16AtBatchTwoSeq8192) {
  Graph g = build_or_fail({.name = "llama3-70b", .layers = 1});
  EXPECT_EQ(to_string(g.node(*g.find("tokens")).meta()), "i64[2, 8192]");
  EXPECT_EQ(g.node(*g.find("output_weight")).meta().dtype, DType::bf16);
  Graph debug = build_or_fail({.name = "llama3-debugmodel", .layers = 1});
  EXPECT_EQ(debug.node(*debug.find("output_weight")).meta().dtype, DType::f32);
}

}  // namespace
}  // namespace autopar
