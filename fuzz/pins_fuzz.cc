// Fuzzes pin expressions (planner/pins.h): a constraints file (--pins FILE,
// one PATTERN=SHARDING per line), each line also as a lone --pin, then the
// pins resolved against the built-in MLP's strategies on a 2x2 mesh.
#include <string>

#include "fuzz_check.h"
#include "mlp_fixture.h"
#include "planner/pins.h"
#include "sharding/mesh.h"

using namespace autopar;

namespace {

const StrategyGraph& mlp_strategies() {
  static const StrategyGraph strategies = [] {
    const fuzz::MlpFixture& mlp = fuzz::mlp_fixture();
    Expected<DeviceMesh> mesh = make_mesh({2, 2}, mlp.hw);
    fuzz::require(mesh.ok(), "fuzz fixture: a 2x2 mesh on the cpu profile");
    Expected<StrategyGraph> sg = build_strategy_graph(mlp.graph, *mesh, mlp.hw);
    fuzz::require(sg.ok(), "fuzz fixture: the mlp's strategies on a 2x2 mesh");
    return std::move(*sg);
  }();
  return strategies;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  (void)parse_pin(text, /*mesh_ndim=*/2);
  Expected<std::vector<PinSpec>> pins = parse_pin_file(text, /*mesh_ndim=*/2, "fuzz.pins");
  if (!pins) return 0;
  (void)resolve_pins(fuzz::mlp_fixture().graph, mlp_strategies(), *pins);
  return 0;
}
