// Times building a built-in model's joint forward+backward graph.
//
//   graph_build_bench [MODEL] [REPEATS]      (defaults: llama3-8b 5)
//
// Prints one line per repeat, then the best and median times and the node count.
// The target for llama3-8b is under 1 s: every planner run starts with this
// build, so it must stay small next to the solve. Exit code 1 when a build
// fails; the timing itself never fails the run (machines differ), it is reported.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/graph.h"
#include "models/registry.h"

namespace {

constexpr double kTargetSeconds = 1.0;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string model = argc > 1 ? argv[1] : "llama3-8b";
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  if (repeats < 1) {
    fmt::print(stderr, "graph_build_bench: error: REPEATS must be a positive integer, got '{}'\n",
               argv[2]);
    return 2;
  }
  std::vector<double> seconds;
  int32_t nodes = 0;
  autopar::ModelOptions options;
  options.name = model;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    autopar::Expected<autopar::Graph> graph = autopar::build_model(options);
    const auto stop = std::chrono::steady_clock::now();
    if (!graph) {
      fmt::print(stderr, "graph_build_bench: error: {}\n", graph.error().message);
      return 1;
    }
    nodes = graph->size();
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
    fmt::print("repeat {}: {:.3f} s\n", i + 1, seconds.back());
  }
  const double best = *std::min_element(seconds.begin(), seconds.end());
  const double mid = median(seconds);
  fmt::print("model: {}\nnodes: {}\nrepeats: {}\nbest: {:.3f} s\nmedian: {:.3f} s\n", model,
             nodes, repeats, best, mid);
  fmt::print("target < {:.1f} s (median): {}\n", kTargetSeconds,
             mid < kTargetSeconds ? "met" : "MISSED");
  return 0;
}
