// PyTorch import: transformer ops (cat, layer norm, permute, select, slice and
// their backward ops). gelu and softmax reuse the pointwise and log-softmax
// rules (registry.cc).
#include <algorithm>

#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

Expected<int64_t> dim_of(const RuleCall& call, int64_t rank, std::string_view what) {
  int64_t dim = normalize_dim(call.attrs.get_int_or("dim", 0), rank);
  if (dim < 0) {
    return make_error("{} dim {} out of range for rank {}", what, call.attrs.get_int_or("dim", 0), rank);
  }
  return dim;
}

// `l` with dim `d` replaced by '_' (a dim no factor maps to: never sharded).
std::string blank(std::string l, int64_t d) {
  l[static_cast<size_t>(d)] = '_';
  return l;
}

Expected<OpRule> linear_in(const std::string& spec, const RuleCall& call, uint32_t mask = 1) {
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (rule) rule->linear.push_back(mask);
  return rule;
}

}  // namespace

// Every dim but the cat dim; linear in all inputs together (a cat of partial
// sums is the partial sum of the cats).
Expected<OpRule> cat_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  Expected<int64_t> dim = dim_of(call, rank, "cat");
  if (!dim) return dim.error();
  std::string l = blank(letters(rank), *dim);
  std::string spec;
  for (int i = 0; i < call.num_inputs(); ++i) spec += (i ? "," : "") + l;
  return linear_in(spec + "->" + l, call, (1u << call.num_inputs()) - 1);
}

// x [batch..., norm...], weight/bias [norm...] -> (out, mean, rstd); the
// normalized dims are never sharded, the batch dims shard every output.
Expected<OpRule> native_layer_norm_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  int64_t k = static_cast<int64_t>(call.attrs.get_ints("normalized_shape").size());
  std::string l = letters(rank);
  std::string norm = l.substr(static_cast<size_t>(rank - k));
  std::string stats = l.substr(0, static_cast<size_t>(rank - k)) + std::string(static_cast<size_t>(k), '1');
  std::string spec = l;
  for (int i = 1; i < call.num_inputs(); ++i) spec += "," + norm;
  Expected<OpRule> rule = rule_from_spec(spec + "->" + l + "," + stats + "," + stats, call);
  if (!rule) return rule;
  for (char c : norm) mark_replicate_only(*rule, c);
  return rule;
}

// (grad_out, x, mean, rstd[, w[, b]]) -> (grad_x, grad_w, grad_b). A batch
// dim shards grad_x but leaves grad_w/grad_b as partial sums, which a factor
// cannot say: the batch shardings are extra options, one per batch dim.
// Linear in grad_out.
Expected<OpRule> native_layer_norm_backward_rule(const RuleCall& call) {
  int64_t rank = call.in(1).rank();
  int64_t k = static_cast<int64_t>(call.attrs.get_ints("normalized_shape").size());
  std::string l = letters(rank);
  std::string norm = l.substr(static_cast<size_t>(rank - k));
  std::string stats = l.substr(0, static_cast<size_t>(rank - k)) + std::string(static_cast<size_t>(k), '1');
  std::string spec = l + "," + l + "," + stats + "," + stats;
  for (int i = 4; i < call.num_inputs(); ++i) spec += "," + norm;
  Expected<OpRule> rule = rule_from_spec(spec + "->" + l + "," + norm + "," + norm, call);
  if (!rule) return rule;
  for (char c : l) mark_replicate_only(*rule, c);
  add_linear(*rule, {0});
  for (int64_t d = 0; d < rank - k; ++d) {
    std::string s = "S(" + std::to_string(d) + ")";
    std::string option = s + s + s + s + std::string(static_cast<size_t>(call.num_inputs() - 4), 'R');
    if (Status st = add_extra(*rule, option + "->" + s + "PP"); !st) return st.error();
  }
  return rule;
}

Expected<OpRule> permute_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  std::string in = letters(rank);
  std::string out;
  for (int64_t d : call.attrs.get_ints("dims")) {
    int64_t n = normalize_dim(d, rank);
    if (n < 0) return make_error("permute dim {} out of range for rank {}", d, rank);
    out += in[static_cast<size_t>(n)];
  }
  return linear_in(in + "->" + out, call);
}

// The selected dim is never sharded (the index is global).
Expected<OpRule> select_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  Expected<int64_t> dim = dim_of(call, rank, "select");
  if (!dim) return dim.error();
  std::string l = letters(rank);
  std::string out = l;
  out.erase(static_cast<size_t>(*dim), 1);
  return linear_in(blank(l, *dim) + "->" + out, call);
}

Expected<OpRule> select_backward_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank() + 1;
  Expected<int64_t> dim = dim_of(call, rank, "select_backward");
  if (!dim) return dim.error();
  std::string l = letters(rank);
  std::string in = l;
  in.erase(static_cast<size_t>(*dim), 1);
  return linear_in(in + "->" + blank(l, *dim), call);
}

// The sliced dim is never sharded (start/end are global).
Expected<OpRule> slice_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  int64_t dim = normalize_dim(call.attrs.has("dim") ? call.attrs.get_int("dim") : 0, rank);
  if (dim < 0) return make_error("slice dim out of range for rank {}", rank);
  std::string l = blank(letters(rank), dim);
  return linear_in(l + "->" + l, call);
}

Expected<OpRule> slice_backward_rule(const RuleCall& call) {
  int64_t rank = call.in(0).rank();
  Expected<int64_t> dim = dim_of(call, rank, "slice_backward");
  if (!dim) return dim.error();
  std::string l = blank(letters(rank), *dim);
  return linear_in(l + "->" + l, call);
}

}  // namespace autopar::sharding_rules
