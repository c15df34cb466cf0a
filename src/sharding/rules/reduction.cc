// Reductions over a dim list: a sharded reduced dim leaves the result Partial
// (sum for sum, avg for mean: each device reduces its own shard). Both are
// linear, so a Partial(sum) input stays Partial(sum).
#include <algorithm>

#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

Expected<OpRule> reduce_rule(const RuleCall& call, ReduceOp op) {
  int64_t rank = call.in(0).rank();
  // none (and mean.default / sum.default): every dim
  const std::vector<int64_t> dims = call.attrs.get_ints_or("dim", {});
  bool keepdim = call.attrs.has("keepdim") && call.attrs.get_bool("keepdim");
  std::string in = letters(rank);
  std::string out;
  std::vector<char> reduced;
  for (int64_t d = 0; d < rank; ++d) {
    bool r = dims.empty() || std::any_of(dims.begin(), dims.end(), [&](int64_t x) {
               return normalize_dim(x, rank) == d;
             });
    if (r) reduced.push_back(in[static_cast<size_t>(d)]);
    if (!r) out += in[static_cast<size_t>(d)];
    else if (keepdim) out += '1';
  }
  Expected<OpRule> rule = rule_from_spec(in + "->" + out, call);
  if (!rule) return rule;
  for (char f : reduced) mark_reduce(*rule, f, op);
  add_linear(*rule, {0});
  return rule;
}

}  // namespace

Expected<OpRule> mean_rule(const RuleCall& call) { return reduce_rule(call, ReduceOp::kAvg); }
Expected<OpRule> sum_rule(const RuleCall& call) { return reduce_rule(call, ReduceOp::kSum); }

}  // namespace autopar::sharding_rules
