#include "planner/pins.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>

#include <string>

#include <fmt/format.h>

namespace autopar {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_grad_output(const Graph& graph, NodeId node) {
  for (const GraphOutput& out : graph.outputs()) {
    if (out.node == node && out.kind == OutputKind::kGradient) return true;
  }
  return false;
}

bool selector_matches(std::string_view selector, const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (selector == "@grad") return is_grad_output(graph, id);
  if (selector == "@loss") {
    for (const GraphOutput& out : graph.outputs()) {
      if (out.node == id && out.kind == OutputKind::kLoss) return true;
    }
    return false;
  }
  std::optional<PlaceholderKind> kind = parse_placeholder_kind(selector.substr(1));
  return kind && node.is_placeholder() && node.kind == *kind;
}

bool glob(const std::string& pattern, const std::string& text) {
  return !text.empty() && fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

}  // namespace

Expected<PinSpec> parse_pin(std::string_view text, int mesh_ndim) {
  PinSpec pin;
  pin.text = std::string(trim(text));
  size_t eq = pin.text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == pin.text.size()) {
    return make_error("pin '{}' must look like NODE=SHARDING or NODE.in<K>=SHARDING, e.g. embedding=S(0)R",
                      pin.text);
  }
  std::string_view target = trim(std::string_view(pin.text).substr(0, eq));
  std::string_view sharding = trim(std::string_view(pin.text).substr(eq + 1));
  if (size_t dot = target.rfind(".in"); dot != std::string_view::npos &&
                                        dot + 3 < target.size() &&
                                        target.find_first_not_of("0123456789", dot + 3) ==
                                            std::string_view::npos) {
    std::string_view digits = target.substr(dot + 3);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pin.input);
    if (ec != std::errc() || end != digits.data() + digits.size()) {
      return make_error("pin '{}': input index {} is too large (K in NODE.in<K> counts a node's "
                        "inputs from 0)", pin.text, digits);
    }
    target = target.substr(0, dot);
  }
  if (target.starts_with("@")) {
    static constexpr std::string_view kSelectors[] = {"@buffer", "@grad", "@input",
                                                      "@loss", "@param", "@tangent"};
    bool known = false;
    for (std::string_view s : kSelectors) known = known || s == target;
    if (!known) {
      return make_error("pin '{}': unknown selector '{}' (known: @buffer, @grad, @input, @loss, "
                        "@param, @tangent)", pin.text, target);
    }
  }
  pin.pattern = std::string(target);
  Expected<Sharding> parsed = parse_sharding(sharding, mesh_ndim);
  if (!parsed) return make_error_like(parsed.error(), "pin '{}': {}", pin.text, parsed.error().message);
  pin.sharding = *parsed;
  return pin;
}

Expected<std::vector<PinSpec>> parse_pin_file(std::string_view contents, int mesh_ndim,
                                              std::string_view file_name) {
  std::vector<PinSpec> pins;
  int line_no = 0;
  while (!contents.empty()) {
    size_t nl = contents.find('\n');
    std::string_view line = contents.substr(0, nl);
    contents = nl == std::string_view::npos ? std::string_view() : contents.substr(nl + 1);
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    Expected<PinSpec> pin = parse_pin(line, mesh_ndim);
    if (!pin) return make_error_like(pin.error(), "{}:{}: {}", file_name, line_no, pin.error().message);
    pins.push_back(std::move(*pin));
  }
  return pins;
}

bool pin_matches(const PinSpec& pin, const Graph& graph, NodeId id) {
  if (pin.pattern.starts_with("@")) return selector_matches(pin.pattern, graph, id);
  const Node& node = graph.node(id);
  return glob(pin.pattern, node.name) || glob(pin.pattern, node.target);
}

Expected<std::vector<std::vector<StrategyIdx>>> resolve_pins(const Graph& graph,
                                                            const StrategyGraph& strategies,
                                                            const std::vector<PinSpec>& pins) {
  std::vector<std::vector<StrategyIdx>> allowed(static_cast<size_t>(graph.size()));
  for (const PinSpec& pin : pins) {
    bool matched = false;
    for (NodeId id = 0; id < graph.size(); ++id) {
      if (!pin_matches(pin, graph, id)) continue;
      const Node& node = graph.node(id);
      if (pin.input >= static_cast<int32_t>(node.inputs.size())) {
        return make_error("pin '{}': node '{}' has {} inputs", pin.text, node.name,
                          node.inputs.size());
      }
      matched = true;
      const NodeStrategies& ns = strategies.nodes[static_cast<size_t>(id)];
      std::vector<StrategyIdx>& list = allowed[static_cast<size_t>(id)];
      std::vector<StrategyIdx> keep;
      std::string valid;
      for (StrategyIdx s = 0; s < ns.size(); ++s) {
        const Sharding& sh = pin.input < 0 ? ns.output(s, 0) : ns.input(s, pin.input);
        std::string text = to_string(sh);
        if (valid.find(text) == std::string::npos) valid += (valid.empty() ? "" : " ") + text;
        bool previously = list.empty() || std::find(list.begin(), list.end(), s) != list.end();
        if (sh == pin.sharding && previously) keep.push_back(s);
      }
      if (keep.empty()) {
        return make_error("pin '{}': node '{}' ({}) cannot take {}; its valid shardings there "
                          "are: {}", pin.text, node.name, to_string(node.meta()),
                          to_string(pin.sharding), valid);
      }
      list = std::move(keep);
    }
    if (!matched) {
      return make_error("pin '{}' matches no node of graph {} (patterns match node names and "
                        "param names; `autopar graph --format text` lists them)", pin.text,
                        graph.name);
    }
  }
  return allowed;
}

}  // namespace autopar
