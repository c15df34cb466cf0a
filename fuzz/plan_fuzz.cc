// Fuzzes the plan reader (runtime/plan_reader.h) against the graph a plan was
// made for: the header, then, when the header's mesh is small (at most 2-D, at
// most 4 devices, so one input stays cheap), the whole plan on that mesh and
// the built-in MLP, as `autopar run --model mlp --plan FILE` reads it.
#include <functional>
#include <numeric>

#include "fuzz_check.h"
#include "mlp_fixture.h"
#include "runtime/plan_reader.h"
#include "sharding/mesh.h"

using namespace autopar;

namespace {

bool small_mesh(const std::vector<int64_t>& shape) {
  if (shape.empty() || shape.size() > 2) return false;
  int64_t devices = 1;
  for (int64_t d : shape) {
    if (d < 1 || d > 4) return false;
    devices *= d;
  }
  return devices <= 4;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(fuzz::as_text(data, size));
  Expected<PlanFile> header = read_plan_header(text);
  if (!header || !small_mesh(header->mesh_shape)) return 0;
  const fuzz::MlpFixture& mlp = fuzz::mlp_fixture();
  Expected<DeviceMesh> mesh = make_mesh(header->mesh_shape, mlp.hw);
  if (!mesh) return 0;
  Expected<Plan> plan = read_plan(text, mlp.graph, *mesh, mlp.hw, mesh->num_devices());
  if (plan) {
    fuzz::require(plan->choice.size() == static_cast<size_t>(mlp.graph.size()),
                  "an accepted plan chooses for every node");
  }
  return 0;
}
