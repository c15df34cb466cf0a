#include "sharding/rule.h"

#include <algorithm>

#include <fmt/format.h>

namespace autopar {
namespace {

std::string tensor_string(const OpRule& rule, const TensorFactors& t) {
  std::string out;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    const std::vector<FactorId>& fs = t.dims[d];
    if (fs.empty()) {
      int64_t size = d < t.sizes.size() ? t.sizes[d] : 0;
      out += size < 10 ? fmt::format("{}", size) : fmt::format("[{}]", size);
    } else if (fs.size() == 1) {
      out += rule.factors[static_cast<size_t>(fs[0])].name;
    } else {
      out += '(';
      for (FactorId f : fs) out += rule.factors[static_cast<size_t>(f)].name;
      out += ')';
    }
  }
  return out;
}

std::string tensors_string(const OpRule& rule, const std::vector<TensorFactors>& ts) {
  std::string out;
  for (size_t i = 0; i < ts.size(); ++i) out += (i ? "," : "") + tensor_string(rule, ts[i]);
  return out;
}

std::string mask_string(uint32_t mask) {
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (mask & (1u << i)) out += fmt::format("{}{}", out.empty() ? "" : ",", i);
  }
  return "{" + out + "}";
}

// Where factor f sits in tensor t: the dim it leads, -2 if it is an inner
// factor of a merged dim, -1 if absent.
int factor_dim(const TensorFactors& t, FactorId f) {
  for (size_t d = 0; d < t.dims.size(); ++d) {
    const std::vector<FactorId>& fs = t.dims[d];
    auto it = std::find(fs.begin(), fs.end(), f);
    if (it == fs.begin() && it != fs.end()) return static_cast<int>(d);
    if (it != fs.end()) return -2;
  }
  return -1;
}

bool factor_option(const OpRule& rule, FactorId f, DimOption& option) {
  const Factor& factor = rule.factors[static_cast<size_t>(f)];
  option.placements.clear();
  for (size_t i = 0; i < rule.inputs.size(); ++i) {
    int d = factor_dim(rule.inputs[i], f);
    if (d == -2) return false;
    if (d >= 0) {
      option.placements.push_back(Placement::shard(d));
    } else if (factor.kind == FactorKind::kReduce && (rule.additive_inputs & (1u << i))) {
      option.placements.push_back(Placement::partial(factor.reduce));
    } else {
      option.placements.push_back(Placement::replicate());
    }
  }
  for (const TensorFactors& t : rule.outputs) {
    int d = factor_dim(t, f);
    if (d == -2) return false;
    if (d >= 0) {
      option.placements.push_back(Placement::shard(d));
    } else if (factor.kind == FactorKind::kReduce) {
      option.placements.push_back(Placement::partial(factor.reduce));
    } else {
      return false;  // an output that does not see a pass factor cannot follow it
    }
  }
  return true;
}

}  // namespace

std::string to_string(const DimOption& option, int num_inputs) {
  std::string out;
  for (size_t i = 0; i < option.placements.size(); ++i) {
    if (static_cast<int>(i) == num_inputs) out += "->";
    out += to_string(option.placements[i]);
  }
  if (static_cast<int>(option.placements.size()) == num_inputs) out += "->";
  return out;
}

std::string to_string(const OpRule& rule) {
  if (rule.placeholder) {
    return fmt::format("->{}  (graph input: S or R on each mesh dim, never P)",
                       tensors_string(rule, rule.outputs));
  }
  std::string out = tensors_string(rule, rule.inputs) + "->" + tensors_string(rule, rule.outputs);
  std::string reduce, replicate;
  for (const Factor& f : rule.factors) {
    if (f.kind == FactorKind::kReduce) {
      reduce += fmt::format("{}{}:{}", reduce.empty() ? "" : ",", f.name, reduce_op_name(f.reduce));
    } else if (f.kind == FactorKind::kReplicateOnly) {
      replicate += fmt::format("{}{}", replicate.empty() ? "" : ",", f.name);
    }
  }
  if (!reduce.empty()) out += " reduce={" + reduce + "}";
  if (!replicate.empty()) out += " replicate={" + replicate + "}";
  if (rule.additive_inputs != 0) out += " additive=" + mask_string(rule.additive_inputs);
  if (!rule.linear.empty()) {
    out += " linear=";
    for (uint32_t mask : rule.linear) out += mask_string(mask);
  }
  if (!rule.extra.empty()) {
    out += " extra=";
    for (const DimOption& o : rule.extra) {
      out += "{" + to_string(o, static_cast<int>(rule.inputs.size())) + (o.sync ? " sync" : "") + "}";
    }
  }
  return out;
}

std::vector<DimOption> single_dim_options(const OpRule& rule) {
  std::vector<DimOption> options;
  auto add = [&](const DimOption& o) {
    if (std::find(options.begin(), options.end(), o) == options.end()) options.push_back(o);
  };
  DimOption option;
  option.placements.assign(static_cast<size_t>(rule.num_tensors()), Placement::replicate());
  add(option);
  for (size_t f = 0; f < rule.factors.size(); ++f) {
    if (rule.factors[f].kind == FactorKind::kReplicateOnly) continue;
    if (factor_option(rule, static_cast<FactorId>(f), option)) add(option);
  }
  for (uint32_t mask : rule.linear) {
    option.placements.clear();
    for (size_t i = 0; i < rule.inputs.size(); ++i) {
      option.placements.push_back((mask & (1u << i)) ? Placement::partial() : Placement::replicate());
    }
    for (size_t o = 0; o < rule.outputs.size(); ++o) option.placements.push_back(Placement::partial());
    add(option);
  }
  for (const DimOption& o : rule.extra) add(o);
  return options;
}

Status check_rule(const OpRule& rule) {
  auto check = [&](const TensorFactors& t, std::string_view what, size_t i) -> Status {
    if (t.dims.size() != t.sizes.size()) {
      return make_error("{} {} has {} factor dims but shape {}", what, i, t.dims.size(),
                        shape_to_string(t.sizes));
    }
    for (const std::vector<FactorId>& fs : t.dims) {
      for (FactorId f : fs) {
        if (f < 0 || static_cast<size_t>(f) >= rule.factors.size()) {
          return make_error("{} {} names factor {} of {}", what, i, f, rule.factors.size());
        }
      }
    }
    return ok_status();
  };
  for (size_t i = 0; i < rule.inputs.size(); ++i) {
    if (Status s = check(rule.inputs[i], "input", i); !s) return s;
  }
  for (size_t i = 0; i < rule.outputs.size(); ++i) {
    if (Status s = check(rule.outputs[i], "output", i); !s) return s;
  }
  for (const DimOption& o : rule.extra) {
    if (static_cast<int>(o.placements.size()) != rule.num_tensors()) {
      return make_error("extra option {} has {} placements for {} tensors",
                        to_string(o, static_cast<int>(rule.inputs.size())), o.placements.size(),
                        rule.num_tensors());
    }
  }
  return ok_status();
}

}  // namespace autopar
