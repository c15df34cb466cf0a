// nll_loss2d: self [n, c, h, w], target [n, h, w], weight [c]?. The class dim
// c never shards. The pixel dims n, h and w shard alike (each pixel's loss
// needs only its own row of self), with the reductions of nll_loss (nn.cc):
//   none  the per-pixel loss shards with them; total_weight is 0: P
//   sum   loss and total_weight are per-shard sums: P, P
//   mean  the loss is the mean of per-shard means, P(avg), exact because
//         even shards hold equally many pixels, and only without a class
//         weight: weighted shards divide by different total weights. (As for
//         nll_loss, ignore_index targets spread unevenly over the shards
//         break the equal-count premise too.)
// The backward shards n, h, w with grad_output (a scalar unless reduction
// none) and total_weight replicated; it is linear in grad_output.
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
Expected<OpRule> nll_loss2d_forward_rule(const RuleCall& call) {
  int64_t reduction = call.attrs.get_int("reduction");
  bool none = reduction == kReductionNone;
  bool weight = call.num_inputs() == 3;
  Expected<OpRule> rule =
      rule_from_spec(std::string("nchw,nhw") + (weight ? ",c" : "") + (none ? "->nhw," : "->,"), call);
  if (!rule) return rule;
  for (char f : {'n', 'c', 'h', 'w'}) mark_replicate_only(*rule, f);
  if (reduction == kReductionMean && weight) return rule;
  std::string loss = none ? "" : reduction == kReductionMean ? "P(avg)" : "P";
  // (dim of self, dim of target) of n, h and w.
  for (auto [self_dim, target_dim] : {std::pair{0, 0}, std::pair{2, 1}, std::pair{3, 2}}) {
    std::string t = "S(" + std::to_string(target_dim) + ")";
    std::string option = "S(" + std::to_string(self_dim) + ")" + t + (weight ? "R" : "") + "->" +
                         (none ? t : loss) + "P";
    if (Status s = add_extra(*rule, option); !s) return s.error();
  }
  return rule;
}

// (grad_output, self, target, weight?, total_weight) -> grad_self.
Expected<OpRule> nll_loss2d_backward_rule(const RuleCall& call) {
  bool weight = call.num_inputs() == 5;
  std::string grad = call.in(0).rank() == 0 ? "" : "nhw";
  Expected<OpRule> rule =
      rule_from_spec(grad + ",nchw,nhw" + (weight ? ",c" : "") + ",->nchw", call);
  if (!rule) return rule;
  mark_replicate_only(*rule, 'c');
  add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
