// Hand-sized fixtures for the sharding tests: a round-number device, meshes,
// and one small graph per op of the op table (for the golden files).
#pragma once

#include <optional>

#include "cost/hardware.h"
#include "ir/graph.h"
#include "sharding/mesh.h"

namespace autopar::testing {

// Intra-node: 100 GB/s, 1 us per step; inter-node: 10 GB/s, 10 us per step;
// 4 devices per node; f32 1 TFLOP/s, 100 GB/s HBM, efficiencies 1, no floor.
HardwareProfile round_device();
DeviceMesh mesh_of(std::vector<int64_t> shape, std::vector<std::string> names = {});

struct OpFixture {
  Graph graph;
  NodeId node = kNoNode;  // the node of the op under test
};

// A graph whose last interesting node runs `op` on small shapes; nullopt when
// the op has no fixture yet (a test lists those).
std::optional<OpFixture> op_fixture(OpId op);

// fixtures_cnn.cc: the CNN ops' fixtures (op_fixture forwards to it), and
// variants the soundness sweep also runs (depthwise, masked gradients, eval).
std::optional<OpFixture> cnn_op_fixture(OpId op);
std::vector<OpFixture> cnn_variant_fixtures();

// fixtures_zoo.cc: the model zoo's ops (op_fixture forwards to it), and
// variants the soundness sweep also runs (other attributes and inputs).
std::optional<OpFixture> zoo_op_fixture(OpId op);
std::vector<OpFixture> zoo_variant_fixtures();

}  // namespace autopar::testing
