// `autopar strategies`: one node's valid sharding strategies on a mesh, with
// their compute time on local shapes and what bringing each input into the
// required sharding costs. Going from Replicate is always free (a local slice),
// so the reference is the producer's fastest strategy (least compute, then the
// smallest local output: the one a greedy plan would pick), next to the worst
// case over all of the producer's strategies.
#include <algorithm>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "cost/hardware.h"
#include "graph_options.h"
#include "sharding/edge_costs.h"
#include "sharding/mesh.h"
#include "sharding/op_rules.h"

namespace autopar {
namespace {

struct StrategiesOptions {
  GraphOptions graph;
  std::string mesh;
  std::string mesh_names;
  int intra_node_dims = -1;  // -1: innermost dims that fit a node
  std::string hardware = "h100";
  std::string node;
};

std::string format_time(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:.1f}us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f}ms", s * 1e3);
  return fmt::format("{:.2f}s", s);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string close_names(const Graph& graph, std::string_view name) {
  std::vector<std::pair<size_t, std::string_view>> scored;
  for (const Node& n : graph.nodes()) {
    bool contains = n.name.find(name) != std::string::npos;
    scored.emplace_back(contains ? 0 : edit_distance(name, n.name), n.name);
  }
  std::sort(scored.begin(), scored.end());
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(scored.size(), 8); ++i) {
    out += (i ? ", " : "") + std::string(scored[i].second);
  }
  return out;
}

Expected<DeviceMesh> build_mesh(const StrategiesOptions& options, const HardwareProfile& hw) {
  Expected<std::vector<int64_t>> shape = parse_mesh_shape(options.mesh);
  if (!shape) return shape.error();
  MeshOptions mesh_options;
  if (!options.mesh_names.empty()) {
    Expected<std::vector<std::string>> names = parse_mesh_names(options.mesh_names);
    if (!names) return names.error();
    mesh_options.names = *names;
  }
  if (options.intra_node_dims >= 0) mesh_options.intra_node_dims = options.intra_node_dims;
  return make_mesh(*shape, hw, mesh_options);
}

std::string describe_node(const Graph& graph, NodeId id) {
  const Node& n = graph.node(id);
  std::string ins, outs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    ins += fmt::format("{}{} {}", i ? ", " : "", graph.node(n.inputs[i]).name,
                       to_string(input_meta(graph, id, static_cast<int>(i))));
  }
  for (size_t o = 0; o < n.outputs.size(); ++o) outs += (o ? ", " : "") + to_string(n.outputs[o]);
  return fmt::format("{} = {}({}) -> {}", n.name, node_op_name(n), ins, outs);
}

// Strategies of the node and of each producer only: cheap even on big graphs.
Expected<StrategyGraph> local_strategies(const Graph& graph, NodeId id, const DeviceMesh& mesh,
                                         const HardwareProfile& hw) {
  StrategyGraph sg;
  sg.mesh = mesh;
  sg.nodes.resize(static_cast<size_t>(graph.size()));
  std::vector<NodeId> wanted = graph.node(id).inputs;
  wanted.push_back(id);
  for (NodeId n : wanted) {
    Expected<NodeStrategies> ns = node_strategies(graph, n, mesh, hw);
    if (!ns) return ns.error();
    sg.nodes[static_cast<size_t>(n)] = std::move(*ns);
  }
  return sg;
}

// The producer strategy a greedy plan would pick: least compute, then the
// smallest local output.
StrategyIdx reference_strategy(const Graph& graph, const EdgeCosts& e, const StrategyGraph& sg) {
  const NodeStrategies& ps = sg.nodes[static_cast<size_t>(e.producer)];
  const Shape& shape = graph.node(e.producer).outputs[static_cast<size_t>(e.output_index)].shape;
  auto local_numel = [&](StrategyIdx s) {
    int64_t n = 1;
    for (int64_t d : local_shape(shape, ps.output(s, e.output_index), sg.mesh)) n *= d;
    return n;
  };
  StrategyIdx best = 0;
  for (StrategyIdx s = 1; s < ps.size(); ++s) {
    double cs = ps.compute_s[static_cast<size_t>(s)], cb = ps.compute_s[static_cast<size_t>(best)];
    if (cs < cb || (cs == cb && local_numel(s) < local_numel(best))) best = s;
  }
  return best;
}

std::string render(const Graph& graph, NodeId id, const StrategyGraph& sg,
                   const HardwareProfile& hw) {
  const Node& node = graph.node(id);
  std::string out = describe_node(graph, id) + "\n";
  Expected<OpRule> rule = node_rule(graph, id);
  out += fmt::format("rule: {}\nmesh: {} ({} devices), hardware {}\n", to_string(*rule),
                     to_string(sg.mesh), sg.mesh.num_devices(), hw.name);
  const NodeStrategies& ns = sg.nodes[static_cast<size_t>(id)];
  RedistributionCache cache(sg.mesh);
  std::vector<EdgeCosts> edges;
  std::vector<StrategyIdx> refs;
  std::string header = fmt::format("{:>4}  {:<40} {:>10}", "#", "strategy (inputs->outputs)", "compute");
  out += "input costs: redistribution from the producer's fastest strategy / worst over all of them\n";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    edges.push_back(edge_costs(graph, sg, id, static_cast<int>(i), cache));
    refs.push_back(reference_strategy(graph, edges.back(), sg));
    const NodeStrategies& ps = sg.nodes[static_cast<size_t>(edges.back().producer)];
    out += fmt::format("  in{} {}: fastest strategy #{} outputs {} ({} strategies)\n", i,
                       graph.node(node.inputs[i]).name, refs.back(),
                       to_string(ps.output(refs.back(), edges.back().output_index)), ps.size());
    header += fmt::format("  {:>21}", fmt::format("in{} fastest/worst", i));
  }
  out += "\n" + header + "\n";
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    std::string line = fmt::format("{:>4}  {:<40} {:>10}", s, strategy_string(ns, s),
                                   format_time(ns.compute_s[static_cast<size_t>(s)]));
    for (size_t i = 0; i < edges.size(); ++i) {
      const EdgeCosts& e = edges[i];
      double worst = 0;
      for (StrategyIdx p = 0; p < e.rows; ++p) worst = std::max(worst, e.at(p, s));
      line += fmt::format("  {:>21}", format_time(e.at(refs[i], s)) + " / " + format_time(worst));
    }
    out += line + "\n";
  }
  return out;
}

int run_strategies(const StrategiesOptions& options) {
  Expected<Graph> graph = load_graph(options.graph);
  if (!graph) return report_error(graph.error());
  Expected<HardwareProfile> hw = load_hardware(options.hardware);
  if (!hw) return report_error(hw.error());
  Expected<DeviceMesh> mesh = build_mesh(options, *hw);
  if (!mesh) return report_error(mesh.error());
  std::optional<NodeId> id = graph->find(options.node);
  if (!id) {
    return report_error(ErrorKind::kInput, fmt::format("graph {} has no node \"{}\"; close names: {}", graph->name,
                                                       options.node, close_names(*graph, options.node)));
  }
  Expected<StrategyGraph> sg = local_strategies(*graph, *id, *mesh, *hw);
  if (!sg) return report_error(sg.error());
  fmt::print("{}", render(*graph, *id, *sg, *hw));
  return kExitOk;
}

}  // namespace

Command add_strategies_command(CLI::App& parent) {
  auto options = std::make_shared<StrategiesOptions>();
  CLI::App* app = parent.add_subcommand(
      "strategies", "List one node's valid sharding strategies on a mesh with compute and input "
                    "redistribution costs");
  add_graph_options(*app, options->graph);
  app->add_option("--mesh", options->mesh, "Mesh shape, e.g. 8, 2x4, 8x8x8")->required();
  app->add_option("--mesh-names", options->mesh_names,
                  "Comma-separated mesh dim names (default d0,d1,...)");
  app->add_option("--intra-node-dims", options->intra_node_dims,
                  "How many innermost mesh dims use intra-node links (default: those that fit a node)");
  app->add_option("--hardware", options->hardware, "Built-in profile name or profile JSON file")
      ->capture_default_str();
  app->add_option("--node", options->node, "Node name, e.g. mm_3")->required();
  return Command{app, [options] { return run_strategies(*options); }};
}

}  // namespace autopar
