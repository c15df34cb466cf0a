#include "report/svg_report.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <map>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "report/html_text.h"

extern char** environ;

namespace autopar::report {
namespace {

// A double-quoted Graphviz string.
std::string dot_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string dot_nodes(const Graph& graph, const GraphView& view, double max_bytes) {
  std::string out;
  for (size_t g = 0; g < view.groups.size(); ++g) {
    const ViewGroup& group = view.groups[g];
    out += fmt::format("  subgraph cluster_{} {{ label={}; style=rounded; color=\"#5b6786\";\n", g,
                       dot_string(group.name));
    for (NodeId v : group.nodes) {
      size_t i = static_cast<size_t>(v);
      out += fmt::format("    n{} [label={}, fillcolor=\"{}\", tooltip={}];\n", v,
                         dot_string(graph.node(v).name), bytes_color(view.bytes[i], max_bytes),
                         dot_string(fmt::format("{} {} {}", node_op_name(graph.node(v)),
                                                view.placement[i], format_bytes(view.bytes[i]))));
    }
    out += "  }\n";
  }
  for (const ViewEdge& e : view.edges) {
    out += e.label.empty() ? fmt::format("  n{} -> n{};\n", e.from, e.to)
                           : fmt::format("  n{} -> n{} [color=\"#d6336c\", label={}];\n", e.from,
                                         e.to, dot_string(e.label));
  }
  return out;
}

std::string dot_groups(const GraphView& view) {
  std::string out;
  double max_bytes = 0;
  for (const ViewGroup& g : view.groups) max_bytes = std::max(max_bytes, g.max_node_bytes);
  for (size_t g = 0; g < view.groups.size(); ++g) {
    const ViewGroup& group = view.groups[g];
    std::string label = fmt::format("{}\\n{} nodes, outputs {}, largest {}", group.name,
                                    group.nodes.size(), format_bytes(group.activation_bytes),
                                    format_bytes(group.max_node_bytes));
    if (group.collectives > 0) {
      label += fmt::format("\\n{} collectives, {}", group.collectives, format_seconds(group.comm_s));
    }
    out += fmt::format("  g{} [label=\"{}\", fillcolor=\"{}\"];\n", g, label,
                       bytes_color(group.max_node_bytes, max_bytes));
  }
  struct Link { int count = 0; int comm = 0; double comm_s = 0; };
  std::map<std::pair<GroupIdx, GroupIdx>, Link> links;
  for (const ViewEdge& e : view.edges) {
    GroupIdx a = view.group_of[static_cast<size_t>(e.from)];
    GroupIdx b = view.group_of[static_cast<size_t>(e.to)];
    if (a == b) continue;
    Link& link = links[{a, b}];
    ++link.count;
    link.comm += e.label.empty() ? 0 : 1;
    link.comm_s += e.comm_s;
  }
  for (const auto& [key, link] : links) {
    out += link.comm == 0 ? fmt::format("  g{} -> g{};\n", key.first, key.second)
                          : fmt::format("  g{} -> g{} [color=\"#d6336c\", label=\"{}x {}\"];\n",
                                        key.first, key.second, link.comm,
                                        format_seconds(link.comm_s));
  }
  return out;
}

}  // namespace

std::string bytes_color(double bytes, double max_bytes) {
  static constexpr std::array<std::array<double, 3>, 5> kStops = {
      {{255, 247, 236}, {253, 212, 158}, {252, 141, 89}, {215, 48, 31}, {127, 0, 0}}};
  double t = bytes > 0 && max_bytes > 0 ? std::log1p(bytes) / std::log1p(max_bytes) : 0;
  double x = std::clamp(t, 0.0, 0.999) * (kStops.size() - 1);
  size_t i = static_cast<size_t>(x);
  double f = x - static_cast<double>(i);
  std::array<int, 3> c{};
  for (size_t k = 0; k < 3; ++k) {
    c[k] = static_cast<int>(std::lround(kStops[i][k] + (kStops[i + 1][k] - kStops[i][k]) * f));
  }
  return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]);
}

std::string graph_dot(const Graph& graph, const GraphView& view) {
  double max_bytes = 0;
  for (double b : view.bytes) max_bytes = std::max(max_bytes, b);
  std::string out = fmt::format(
      "digraph {} {{\n  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11];\n"
      "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#9aa3b5\", fontcolor=\"#b02a5b\"];\n",
      dot_string(graph.name));
  out += graph.size() <= kMaxDotNodes ? dot_nodes(graph, view, max_bytes) : dot_groups(view);
  return out + "}\n";
}

Status render_svg(std::string_view dot_text, const std::string& out_path,
                  const std::string& program) {
  int fds[2];
  if (pipe(fds) != 0) return make_error("cannot create a pipe for {}: {}", program, std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string format = "-Tsvg", o = "-o", path = out_path, prog = program;
  std::array<char*, 5> argv = {prog.data(), format.data(), o.data(), path.data(), nullptr};
  pid_t pid = 0;
  int spawn = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[0]);
  if (spawn != 0) {
    close(fds[1]);
    return make_error("cannot run Graphviz `{}` for --format svg: {}; install it (Debian: apt-get "
                      "install graphviz) or use --format html", program, std::strerror(spawn));
  }
  // dot may exit early on bad input; a closed pipe must be an error, not SIGPIPE.
  struct sigaction ignore{}, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  size_t written = 0;
  while (written < dot_text.size()) {
    ssize_t n = write(fds[1], dot_text.data() + written, dot_text.size() - written);
    if (n <= 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(fds[1]);
  sigaction(SIGPIPE, &old, nullptr);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return make_error("Graphviz `{} -Tsvg -o {}` failed (exit status {}) after reading {} of {} "
                      "bytes of the graph", program, out_path,
                      WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, written, dot_text.size());
  }
  return ok_status();
}

}  // namespace autopar::report
