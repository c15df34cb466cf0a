// Small plans for the report tests: llama3-debugmodel with a few layers on a
// 2-device mesh plans in well under a second.
#pragma once

#include <gtest/gtest.h>

#include "models/registry.h"
#include "planner/auto_plan.h"

namespace autopar::testing {

inline Graph debug_model(int64_t layers, int64_t batch = 2, int64_t seq = 16) {
  ModelOptions o;
  o.name = "llama3-debugmodel";
  o.layers = layers;
  o.batch = batch;
  o.seq = seq;
  Expected<Graph> g = build_model(o);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(*g);
}

inline Plan plan_on(const Graph& g, std::vector<int64_t> mesh) {
  PlanOptions o;
  o.mesh_shape = std::move(mesh);
  o.hardware = *load_hardware("h100");
  o.solver.time_limit_s = 60;
  Expected<Plan> p = make_plan(g, o);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return std::move(*p);
}

}  // namespace autopar::testing
