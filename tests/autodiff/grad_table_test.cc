#include <gtest/gtest.h>

#include <algorithm>

#include "autodiff/grad_rules.h"

namespace autopar {
namespace {

bool listed(OpId id) {
  std::span<const OpId> list = non_differentiable_ops();
  return std::find(list.begin(), list.end(), id) != list.end() || is_imported_only(id);
}

TEST(GradTable, EveryOpHasARuleOrIsListedAsNotDifferentiable) {
  for (const OpDef& def : all_ops()) {
    EXPECT_NE(grad_rule(def.id) != nullptr, listed(def.id))
        << def.name << ": needs exactly one of a gradient rule or a place in the "
        << "not-differentiable list";
  }
}

TEST(GradTable, BackwardOnlyOpsAreNotDifferentiable) {
  for (const OpDef& def : all_ops()) {
    if (def.has(kBackward)) {
      EXPECT_FALSE(is_differentiable(def.id)) << def.name;
    }
  }
}

TEST(GradTable, ForwardComputeOpsAreDifferentiable) {
  // Every op a model can emit in its forward pass: all ops except placeholder and
  // the backward-only ones.
  for (const OpDef& def : all_ops()) {
    if (!def.has(kBackward) && def.id != OpId::kPlaceholder && !is_imported_only(def.id)) {
      EXPECT_TRUE(is_differentiable(def.id)) << def.name;
    }
  }
}

TEST(GradTable, ImportedOnlyOpsHaveNoRuleAndAreNotInTheNotDifferentiableList) {
  std::span<const OpId> not_diff = non_differentiable_ops();
  ASSERT_FALSE(imported_only_ops().empty());
  for (OpId op : imported_only_ops()) {
    EXPECT_EQ(grad_rule(op), nullptr) << op_name(op);
    EXPECT_EQ(std::find(not_diff.begin(), not_diff.end(), op), not_diff.end()) << op_name(op);
  }
}

}  // namespace
}  // namespace autopar
