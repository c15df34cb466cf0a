// Views: dims move (t, transpose), appear (unsqueeze, expand) or regroup
// (view, _unsafe_view). A shard follows its dim; in a merged or split group
// only the outermost dim of each side can carry it. Views are linear: P -> P.
#include <algorithm>

#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

Expected<OpRule> linear_spec(const std::string& spec, const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

Expected<OpRule> swap_rule(const RuleCall& call, int64_t d0, int64_t d1) {
  int64_t rank = call.in(0).rank();
  d0 = normalize_dim(d0, rank);
  d1 = normalize_dim(d1, rank);
  if (d0 < 0 || d1 < 0) return make_error("transpose dims out of range for {}", to_string(call.in(0)));
  std::string in = letters(rank);
  std::string out = in;
  std::swap(out[static_cast<size_t>(d0)], out[static_cast<size_t>(d1)]);
  return linear_spec(in + "->" + out, call);
}

}  // namespace

Expected<OpRule> t_rule(const RuleCall& call) {
  if (call.in(0).rank() < 2) return linear_spec(letters(call.in(0).rank()) + "->" + letters(call.in(0).rank()), call);
  return swap_rule(call, 0, 1);
}

Expected<OpRule> transpose_rule(const RuleCall& call) {
  return swap_rule(call, call.attrs.get_int("dim0"), call.attrs.get_int("dim1"));
}

Expected<OpRule> unsqueeze_rule(const RuleCall& call) {
  std::string in = letters(call.in(0).rank());
  std::string out = in;
  int64_t dim = normalize_dim(call.attrs.get_int("dim"), call.in(0).rank() + 1);
  if (dim < 0) return make_error("unsqueeze dim out of range for {}", to_string(call.in(0)));
  out.insert(static_cast<size_t>(dim), "1");
  return linear_spec(in + "->" + out, call);
}

// New leading dims and size-1 dims grown by the expand are output-only
// factors: a replicated input may be sliced along them.
Expected<OpRule> expand_rule(const RuleCall& call) {
  const Shape& in = call.in(0).shape;
  const Shape& out = call.outputs[0].shape;
  std::string out_spec = letters(static_cast<int64_t>(out.size()));
  std::string in_spec;
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) {
    in_spec += (in[d] == 1 && out[lead + d] != 1) ? '1' : out_spec[lead + d];
  }
  return linear_spec(in_spec + "->" + out_spec, call);
}

Expected<OpRule> view_rule(const RuleCall& call) {
  return linear_spec(view_spec(call.in(0).shape, call.outputs[0].shape), call);
}

}  // namespace autopar::sharding_rules
