// The per-op rule registry: every op of the op table (ir/op_def.h) maps to one
// rule function in src/sharding/rules/<family>.cc. Rules depend on the call's
// shapes and attributes (which dim a softmax runs over, how a view regroups
// dims), so they are built per node; their printed form is stable and
// golden-tested (tests/sharding/golden/op_rules.txt).
#pragma once

#include <span>
#include <vector>

#include "ir/attr.h"
#include "ir/op_def.h"
#include "sharding/rule.h"

namespace autopar {

// What a rule sees: the input tensors (for getitem, the selected output of its
// input), the attributes and the inferred outputs.
struct RuleCall {
  std::span<const TensorMeta* const> inputs;
  const Attrs& attrs;
  std::span<const TensorMeta> outputs;

  int num_inputs() const { return static_cast<int>(inputs.size()); }
  const TensorMeta& in(int i) const { return *inputs[static_cast<size_t>(i)]; }
};

using RuleFn = Expected<OpRule> (*)(const RuleCall& call);

// The op's rule for this call; an op without a rule is an error naming it.
Expected<OpRule> op_rule(OpId op, const RuleCall& call);
bool has_rule(OpId op);
// Every op of the table without a rule (a coverage test keeps this empty).
std::vector<OpId> ops_without_rule();

}  // namespace autopar
