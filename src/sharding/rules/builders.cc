// Spec parsing and the shared spec builders (pointwise broadcasting, views).
#include "sharding/rules/builders.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace autopar::sharding_rules {
namespace {

// An empty text is no tensor, or one scalar when one is expected.
std::vector<std::string_view> split_tensors(std::string_view text, size_t expected) {
  std::vector<std::string_view> out;
  if (text.empty() && expected != 1) return out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

FactorId factor_of(OpRule& rule, char name) {
  for (size_t i = 0; i < rule.factors.size(); ++i) {
    if (rule.factors[i].name == name) return static_cast<FactorId>(i);
  }
  rule.factors.push_back(Factor{name, FactorKind::kPass, ReduceOp::kSum});
  return static_cast<FactorId>(rule.factors.size() - 1);
}

Expected<TensorFactors> parse_tensor(OpRule& rule, std::string_view text, const Shape& shape) {
  TensorFactors t;
  t.sizes = shape;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    std::vector<FactorId> dim;
    if (c == '(') {
      size_t close = text.find(')', i);
      if (close == std::string_view::npos) return make_error("unclosed '(' in \"{}\"", text);
      for (size_t j = i + 1; j < close; ++j) dim.push_back(factor_of(rule, text[j]));
      i = close;
    } else if (std::islower(static_cast<unsigned char>(c))) {
      dim.push_back(factor_of(rule, c));
    } else if (!std::isdigit(static_cast<unsigned char>(c)) && c != '_') {
      return make_error("bad character '{}' in tensor spec \"{}\"", c, text);
    }
    t.dims.push_back(std::move(dim));
  }
  if (t.dims.size() != shape.size()) {
    return make_error("tensor spec \"{}\" has {} dims but the tensor is {}", text, t.dims.size(),
                      shape_to_string(shape));
  }
  return t;
}

}  // namespace

Expected<OpRule> rule_from_spec(std::string_view spec, std::span<const Shape> inputs,
                                std::span<const Shape> outputs) {
  size_t arrow = spec.find("->");
  if (arrow == std::string_view::npos) return make_error("rule spec \"{}\" has no \"->\"", spec);
  std::vector<std::string_view> ins = split_tensors(spec.substr(0, arrow), inputs.size());
  std::vector<std::string_view> outs = split_tensors(spec.substr(arrow + 2), outputs.size());
  if (ins.size() != inputs.size() || outs.size() != outputs.size()) {
    return make_error("rule spec \"{}\" has {} inputs and {} outputs; the call has {} and {}", spec,
                      ins.size(), outs.size(), inputs.size(), outputs.size());
  }
  OpRule rule;
  for (size_t i = 0; i < ins.size(); ++i) {
    Expected<TensorFactors> t = parse_tensor(rule, ins[i], inputs[i]);
    if (!t) return make_error_like(t.error(), "rule spec \"{}\": {}", spec, t.error().message);
    rule.inputs.push_back(std::move(*t));
  }
  std::vector<bool> in_output(rule.factors.size() + 26, false);
  for (size_t i = 0; i < outs.size(); ++i) {
    Expected<TensorFactors> t = parse_tensor(rule, outs[i], outputs[i]);
    if (!t) return make_error_like(t.error(), "rule spec \"{}\": {}", spec, t.error().message);
    for (const auto& dim : t->dims) {
      for (FactorId f : dim) in_output[static_cast<size_t>(f)] = true;
    }
    rule.outputs.push_back(std::move(*t));
  }
  for (size_t f = 0; f < rule.factors.size(); ++f) {
    if (!in_output[f]) rule.factors[f].kind = FactorKind::kReduce;
  }
  return rule;
}

Expected<OpRule> rule_from_spec(std::string_view spec, const RuleCall& call) {
  std::vector<Shape> ins, outs;
  for (int i = 0; i < call.num_inputs(); ++i) ins.push_back(call.in(i).shape);
  for (const TensorMeta& m : call.outputs) outs.push_back(m.shape);
  return rule_from_spec(spec, ins, outs);
}

std::string letters(int64_t n, char first) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) out += static_cast<char>(first + i);
  return out;
}

std::string pointwise_spec(const RuleCall& call) {
  const Shape& out = call.outputs[0].shape;
  std::string out_spec = letters(static_cast<int64_t>(out.size()));
  std::string spec;
  for (int i = 0; i < call.num_inputs(); ++i) {
    const Shape& in = call.in(i).shape;
    size_t lead = out.size() - in.size();
    if (i > 0) spec += ',';
    for (size_t d = 0; d < in.size(); ++d) {
      bool broadcast = in[d] == 1 && out[lead + d] != 1;
      spec += broadcast ? '1' : out_spec[lead + d];
    }
  }
  return spec + "->" + out_spec;
}

std::string view_spec(const Shape& in, const Shape& out) {
  // Walk both shapes, closing a group when the element counts agree. Within a
  // group only the outermost dims of each side line up (a shard of the first
  // dim is a contiguous chunk of the group on both sides).
  std::string in_spec, out_spec;
  char next = 'a';
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    if (i < in.size() && in[i] == 1) { in_spec += '1'; ++i; continue; }
    if (j < out.size() && out[j] == 1) { out_spec += '1'; ++j; continue; }
    if (i >= in.size() || j >= out.size()) break;  // shapes disagree; the shape rule reports it
    std::vector<size_t> gi{i++}, go{j++};
    int64_t pi = in[gi[0]], po = out[go[0]];
    while (pi != po && (i < in.size() || j < out.size())) {
      if (pi < po && i < in.size()) { pi *= in[i]; gi.push_back(i++); }
      else if (j < out.size()) { po *= out[j]; go.push_back(j++); }
      else break;
    }
    char lead = next++;
    if (gi.size() == 1 || go.size() == 1) {
      // A split or a merge: one factor per dim of the many side.
      bool split = gi.size() == 1;
      std::string group(1, lead);
      for (size_t k = 1; k < (split ? go.size() : gi.size()); ++k) group += next++;
      std::string merged = group.size() == 1 ? group : "(" + group + ")";
      for (size_t k = 0; k < gi.size(); ++k) in_spec += split ? merged : std::string(1, group[k]);
      for (size_t k = 0; k < go.size(); ++k) out_spec += split ? std::string(1, group[k]) : merged;
    } else {
      // Both sides regroup: only the leading dims correspond; the output's other
      // dims may still be sliced from a replicated input.
      in_spec += lead;
      in_spec += std::string(gi.size() - 1, '_');
      out_spec += lead;
      for (size_t k = 1; k < go.size(); ++k) out_spec += next++;
    }
  }
  return in_spec + "->" + out_spec;
}

void mark_replicate_only(OpRule& rule, char factor) {
  for (Factor& f : rule.factors) {
    if (f.name == factor) f.kind = FactorKind::kReplicateOnly;
  }
}

void mark_reduce(OpRule& rule, char factor, ReduceOp op) {
  for (Factor& f : rule.factors) {
    if (f.name == factor) f.reduce = op;
  }
}

void add_linear(OpRule& rule, std::initializer_list<int> inputs) {
  uint32_t mask = 0;
  for (int i : inputs) mask |= 1u << i;
  rule.linear.push_back(mask);
}

Status add_extra(OpRule& rule, std::string_view option, bool sync) {
  size_t arrow = option.find("->");
  DimOption o;
  o.sync = sync;
  for (std::string_view part : {option.substr(0, arrow), option.substr(arrow + 2)}) {
    if (part.empty()) continue;
    Expected<Sharding> s = parse_sharding(part);
    if (!s) return make_error_like(s.error(), "extra option \"{}\": {}", option, s.error().message);
    for (int k = 0; k < s->ndim; ++k) o.placements.push_back((*s)[k]);
  }
  rule.extra.push_back(std::move(o));
  return check_rule(rule);
}

bool is_masked(const TensorMeta& out) { return out.shape == Shape{0}; }

Expected<OpRule> identity_rule(const RuleCall& call, bool linear) {
  std::string l = letters(call.in(0).rank());
  Expected<OpRule> rule = rule_from_spec(l + "->" + l, call);
  if (rule && linear) add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
