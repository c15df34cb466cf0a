// stack, squeeze, constant_pad_nd and roll. All are linear (they move
// elements), so Partial passes through; constant_pad_nd only when it pads
// with zeros (n Partial terms would each add the pad value).
//   stack            every dim; the new dim never shards (its index says
//                    which input)
//   squeeze          the view rule (views.cc): size-1 dims carry no shard
//   constant_pad_nd  every dim but the padded ones (the pad sits at the
//                    global ends of the dim)
//   roll             every dim but the rolled ones (elements cross shards);
//                    without dims the flattened tensor rolls: nothing shards
#include <algorithm>

#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

// `l` with dim `d` replaced by '_' (a dim no factor maps to: never sharded).
void blank(std::string& l, int64_t d) { l[static_cast<size_t>(d)] = '_'; }

}  // namespace

Expected<OpRule> stack_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  int64_t dim = normalize_dim(call.attrs.get_int_or("dim", 0), rank + 1);
  if (dim < 0) return make_error("stack dim out of range for rank {}", rank);
  std::string l = letters(rank);
  std::string out = l;
  out.insert(static_cast<size_t>(dim), "_");
  std::string spec;
  for (int i = 0; i < call.num_inputs(); ++i) spec += (i ? "," : "") + l;
  Expected<OpRule> rule = rule_from_spec(spec + "->" + out, call);
  if (rule) rule->linear.push_back((1u << call.num_inputs()) - 1);
  return rule;
}

Expected<OpRule> constant_pad_nd_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  const std::vector<int64_t>& pad = call.attrs.get_ints("pad");
  std::string l = letters(rank);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    if (pad[2 * i] != 0 || pad[2 * i + 1] != 0) blank(l, rank - 1 - static_cast<int64_t>(i));
  }
  Expected<OpRule> rule = rule_from_spec(l + "->" + l, call);
  bool zeros = !call.attrs.has("value") || call.attrs.get_scalar("value") == 0.0;
  if (rule && zeros) add_linear(*rule, {0});
  return rule;
}

Expected<OpRule> roll_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  std::vector<int64_t> dims = call.attrs.get_ints_or("dims", {});
  std::string l = letters(rank);
  if (dims.empty()) l = std::string(static_cast<size_t>(rank), '_');
  for (int64_t d : dims) {
    int64_t n = normalize_dim(d, rank);
    if (n < 0) return make_error("roll dim {} out of range for rank {}", d, rank);
    blank(l, n);
  }
  Expected<OpRule> rule = rule_from_spec(l + "->" + l, call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
