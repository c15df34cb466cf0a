// Op-call calibration: the time of every local op call the planner may choose
// for one graph on one mesh, measured as the SPMD runtime runs it (libtorch
// dispatch, output allocation, the kernel) on one thread. The planner then
// costs those calls by measurement instead of the roofline (cost/compute_cost.h),
// as FlexFlow's simulator and Alpa's profiler do: on a CPU the roofline misses
// per-call overheads, transcendental pointwise ops, the blocked attention
// kernel's per-head loops and scatter-style backwards by factors of 3 to 60
// (bench/RESULTS.md, "Step time: measured against predicted"). Each
// parameter's optimizer update is timed the same way on each of its local
// shapes (keys from cost/compute_cost.h update_key).
//
// Conditions as in a step: every rank of the calibration job (the mesh's
// rank count, one per core) runs the same call at the same time, so ranks
// share the memory bandwidth and caches as they do in a step; and the calls
// go round robin, each once per round, rather than one call repeated, so no
// call finds its code warm from its own previous run. A call's time is the
// median over the rounds of the slowest rank.
//
// Where its inputs are: a step whose tensors fit the cache a core can use
// reads every operand from that cache, and one that does not reads most of
// them from memory; on this project's VMs the two differ by 1.7x for the same
// matmul (bench/RESULTS.md). So the caller says which (OpInputs, chosen from
// the step's measured footprint against the measured cache): warm inputs are
// touched by an untimed call just before the timed one, then pushed out of the
// core's private caches (twice the L2 is written) and the activations read
// again: a step's activations come from the ops just before, its weights were
// last read a microbatch or a layer ago and wait in the last-level cache
// (timed straight after their own untimed call, every operand near the core,
// calls ran about 20% faster than in a pipeline step; with every operand in
// the last-level cache, about 20% slower; bench/RESULTS.md);
// cold inputs are made before the rounds, and by their turn the other calls
// have pushed them out.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "ir/expected.h"
#include "ir/graph.h"
#include "runtime/mpi_comm.h"
#include "sharding/mesh.h"

namespace autopar {

struct OpCallTimes {
  std::unordered_map<std::string, double> seconds;  // op_call_key -> seconds per call
  // The fastest round's time per call (slowest rank): what a call costs with
  // no neighbour in the way, for differences against another best figure.
  std::unordered_map<std::string, double> best_seconds;
  int32_t failed = 0;  // calls libtorch refused on made-up inputs (they keep the roofline)
  std::string first_failure;
};

// Every distinct (op, local metas, attributes) over every node's strategies on
// `mesh`, timed on every rank of `comm` together (all ranks must call it).
// Inputs are made up: normal floats, zeros for integers and booleans (valid
// indices and targets for any gather, embedding or loss). Progress on stderr
// (rank 0). quick: 3 to 9 rounds, a tenth of a second (tests).
enum class OpInputs { kCold, kWarm };
Expected<OpCallTimes> measure_op_calls(const Graph& graph, const DeviceMesh& mesh, const Communicator& comm,
                                       OpInputs inputs, bool quick);

}  // namespace autopar
