// Embedding, log-softmax and nll_loss (with their backward ops).
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
// weight "vh" (vocab v, hidden h). Sharding v is the masked lookup: each
// device looks up only the rows it holds and writes zeros elsewhere, so the
// output is Partial(sum) while indices stay replicated. Sharding h shards the
// output's last dim; sharding an index dim shards the same output dim.
Expected<OpRule> embedding_rule(const RuleCall& call) {
  std::string idx = letters(call.in(1).rank());
  Expected<OpRule> rule = rule_from_spec("vh," + idx + "->" + idx + "h", call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

// grad "...h", indices "..." -> [num_weights v, h]. Sharding an index dim
// leaves a Partial(sum) table gradient; sharding v (grad and indices
// replicated) has each device scatter only into the rows it holds.
Expected<OpRule> embedding_dense_backward_rule(const RuleCall& call) {
  std::string idx = letters(call.in(1).rank());
  Expected<OpRule> rule = rule_from_spec(idx + "h," + idx + "->vh", call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

// Any dim but the softmax dim.
Expected<OpRule> log_softmax_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  int64_t dim = normalize_dim(call.attrs.get_int("dim"), rank);
  if (dim < 0) return make_error("_log_softmax dim out of range for {}", to_string(call.in(0)));
  std::string l = letters(rank);
  Expected<OpRule> rule = rule_from_spec(l + "->" + l, call);
  if (rule) mark_replicate_only(*rule, l[static_cast<size_t>(dim)]);
  return rule;
}

// grad_input = grad - exp(output) * sum(grad, dim): linear in grad.
Expected<OpRule> log_softmax_backward_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  int64_t dim = normalize_dim(call.attrs.get_int("dim"), rank);
  if (dim < 0) return make_error("_log_softmax_backward_data dim out of range");
  std::string l = letters(rank);
  Expected<OpRule> rule = rule_from_spec(l + "," + l + "->" + l, call);
  if (!rule) return rule;
  mark_replicate_only(*rule, l[static_cast<size_t>(dim)]);
  add_linear(*rule, {0});
  return rule;
}

// self [n, c], target [n] -> (loss, total_weight). The class dim c is never
// sharded. Batch sharding is an extra option because the two outputs reduce
// differently: a mean loss is the average of per-shard means (P(avg)), the
// total weight (count of counted targets) is a sum (P).
Expected<OpRule> nll_loss_forward_rule(const RuleCall& call) {
  int64_t reduction = call.attrs.get_int("reduction");
  bool none = reduction == kReductionNone;
  Expected<OpRule> rule = rule_from_spec(none ? "nc,n->n," : "nc,n->,", call);
  if (!rule) return rule;
  mark_replicate_only(*rule, 'n');
  mark_replicate_only(*rule, 'c');
  std::string_view option = none ? "S(0)S(0)->S(0)P"
                            : reduction == kReductionMean ? "S(0)S(0)->P(avg)P"
                                                           : "S(0)S(0)->PP";
  if (Status s = add_extra(*rule, option); !s) return s.error();
  return rule;
}

// (grad_output, self [n, c], target [n], total_weight) -> grad_self [n, c].
// Batch-sharded with the scalars replicated; linear in grad_output.
Expected<OpRule> nll_loss_backward_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(std::string(call.in(0).rank() == 0 ? "" : "n") +
                                             ",nc,n,->nc",
                                         call);
  if (!rule) return rule;
  mark_replicate_only(*rule, 'c');
  add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
