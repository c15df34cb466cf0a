// Expert baselines as pin sets, evaluated by the same planner and cost model.
//
// A baseline fixes the placements that define it — every parameter, the graph
// inputs and the tangent, and for sequence parallelism the norm activations —
// and the solver fills in the rest, so each baseline is the best plan of its
// family under the same costs (the expert's layout, with the expert's best
// choice of collectives elsewhere). The data-parallel mesh dims are all but
// the last; the tensor-parallel dim is the last one.
//   ddp      parameters replicated; the batch split over every mesh dim
//   fsdp     ZeRO-3: parameters sharded on dim 0 over every mesh dim (another
//            dim, or replicated, when dim 0 does not divide); batch split
//   tp       Megatron tensor parallel on the last mesh dim (column-parallel
//            wq, wk, wv, w1, w3, output, embedding rows; row-parallel wo, w2;
//            MLPs alternate column/row); data parallel on the others
//   tp-sp    tp plus sequence parallel: norm activations split on the sequence
//            dim over the tensor-parallel dim
//   fsdp-tp  tp on the last mesh dim, FSDP on the others
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/pins.h"
#include "sharding/mesh.h"

namespace autopar {

std::vector<std::string> baseline_names();  // sorted
std::string baseline_names_text();          // "ddp, fsdp, fsdp-tp, tp, tp-sp"

Expected<std::vector<PinSpec>> baseline_pins(std::string_view name, const Graph& graph,
                                             const DeviceMesh& mesh);

}  // namespace autopar
