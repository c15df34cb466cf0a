// The graph the plan and pin fuzz targets read their inputs against: the
// built-in MLP (`autopar plan --model mlp`) on the cpu profile, built once.
#pragma once

#include <cstdlib>
#include <cstdio>

#include "cost/hardware.h"
#include "ir/graph.h"
#include "models/registry.h"

namespace autopar::fuzz {

struct MlpFixture {
  Graph graph;
  HardwareProfile hw;
};

inline const MlpFixture& mlp_fixture() {
  static const MlpFixture fixture = [] {
    ModelOptions options;
    options.name = "mlp";
    Expected<Graph> graph = build_model(options);
    Expected<HardwareProfile> hw = load_hardware("cpu");
    if (!graph || !hw) {
      std::fprintf(stderr, "fuzz fixture: cannot build the mlp on the cpu profile\n");
      std::abort();
    }
    return MlpFixture{std::move(*graph), std::move(*hw)};
  }();
  return fixture;
}

}  // namespace autopar::fuzz
