// Graph verifier: checks a graph is well formed and every node's recorded
// outputs agree with its op's shape rule. Errors name the node and the mismatch.
#pragma once

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

Status verify(const Graph& graph);

}  // namespace autopar
