// Small planning fixtures shared by the auto-plan tests.
#pragma once

#include <gtest/gtest.h>

#include "models/registry.h"
#include "planner/auto_plan.h"

namespace autopar::testing {

inline Graph model(const std::string& name, int64_t layers, int64_t batch, int64_t seq) {
  ModelOptions o;
  o.name = name;
  if (layers > 0) o.layers = layers;
  if (batch > 0) o.batch = batch;
  if (seq > 0) o.seq = seq;
  Expected<Graph> g = build_model(o);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(*g);
}

inline PlanOptions options(std::vector<int64_t> mesh, const std::string& hw = "h100") {
  PlanOptions o;
  o.mesh_shape = std::move(mesh);
  o.hardware = *load_hardware(hw);
  o.solver.time_limit_s = 120;
  return o;
}

inline Plan plan_or_die(const Graph& g, const PlanOptions& o) {
  Expected<Plan> p = make_plan(g, o);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return std::move(*p);
}

}  // namespace autopar::testing
