// Hand-made problems shared by the planner tests.
#pragma once

#include "planner/problem.h"

namespace autopar::planner::testing {

// Two strategies per node; moving between them across an edge costs `cost`.
inline std::vector<double> switch_cost(double cost) { return {0, cost, cost, 0}; }

// a -> b -> c, strategy 0 cheap for a and c, strategy 1 cheap for b:
//   a [1, 3]   b [5, 2]   c [4, 4], switching across an edge costs 10.
inline Problem chain3() {
  Problem p;
  NodeIdx a = p.add_node("a", {1, 3});
  NodeIdx b = p.add_node("b", {5, 2});
  NodeIdx c = p.add_node("c", {4, 4});
  p.add_edge(a, b, switch_cost(10));
  p.add_edge(b, c, switch_cost(10));
  return p;
}

// chain3 where strategy 0 is cheap everywhere but holds 100 bytes per node and
// strategy 1 holds 50: a [1, 3], b [1, 3], c [1, 3]; live points {a,b}, {b,c}.
inline Problem chain3_with_memory(double budget) {
  Problem p;
  for (const char* name : {"a", "b", "c"}) {
    NodeIdx v = p.add_node(name, {1, 3});
    p.nodes[static_cast<size_t>(v)].bytes = {100, 50};
  }
  p.add_edge(0, 1, switch_cost(10));
  p.add_edge(1, 2, switch_cost(10));
  p.live_points = {{0, 1}, {1, 2}};
  p.memory_budget = budget;
  return p;
}

}  // namespace autopar::planner::testing
