// executor_overhead_bench: the local executor's per-op interpretation overhead.
//
// One training step of a built-in model's joint graph runs two ways on the
// same placeholder values, alternating, many times:
//   executor  execute_nodes (runtime/local_executor.h): the graph walk with
//             getitem, input checks, run_kernel's output checks and error
//             wrapping, live-storage accounting and freeing after last use;
//   direct    a tape recorded once from the graph: per kernel call its kernel
//             function (kernels::kernel_for) and the slots of its inputs,
//             replayed in a tight loop that only calls the kernels and drops
//             each value after its last read, as hand-written code would.
// Both make the same libtorch calls in the same order (the losses must be
// bit-identical; checked). Times are CPU time of the thread. overhead = (executor - direct) / direct, from the
// minimum and from the median per-step time; also per kernel call.
//
// With a hardware profile (a name or a file from `autopar calibrate`), it also
// times every tape call on its own (fastest of the repeats) and prints, per op,
// the measured time beside the cost model's roofline prediction for the same
// full shapes: where the prediction of a run's compute goes wrong.
//
//   executor_overhead_bench [MODEL] [REPEATS] [THREADS] [PROFILE]
//   (defaults: llama3-debugmodel, 200, 1 libtorch thread, no per-op table)
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include "cost/compute_cost.h"
#include "cost/hardware.h"
#include "models/registry.h"
#include "runtime/init.h"
#include "runtime/kernels/kernel_call.h"
#include "runtime/local_executor.h"

namespace autopar {
namespace {

using SlotIdx = int32_t;

// One kernel call of the tape: the node's kernel and where its values live.
struct TapeCall {
  kernels::KernelFn fn = nullptr;
  NodeId id = kNoNode;
  const Node* node = nullptr;
  std::vector<SlotIdx> inputs;
  SlotIdx first_output = 0;
  std::vector<SlotIdx> release_after;  // slots read for the last time here
};

struct Tape {
  std::vector<TapeCall> calls;
  std::vector<SlotIdx> placeholder_slot;  // per NodeId (-1: not a placeholder)
  SlotIdx loss_slot = -1;
  SlotIdx slots = 0;
};

// Slots: one per output of every non-getitem node; a getitem reads its
// producer's slot, so it costs nothing on the tape.
Tape record(const Graph& graph) {
  Tape tape;
  std::vector<SlotIdx> first(static_cast<size_t>(graph.size()), -1);
  auto slot_of = [&](NodeId v) {
    const Node& n = graph.node(v);
    if (n.op != OpId::kGetItem) return first[static_cast<size_t>(v)];
    return first[static_cast<size_t>(n.inputs[0])] + static_cast<SlotIdx>(n.attrs.get_int("index"));
  };
  tape.placeholder_slot.assign(static_cast<size_t>(graph.size()), -1);
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    if (n.op == OpId::kGetItem) continue;
    first[static_cast<size_t>(v)] = tape.slots;
    tape.slots += static_cast<SlotIdx>(n.outputs.size());
    if (n.is_placeholder()) {
      tape.placeholder_slot[static_cast<size_t>(v)] = first[static_cast<size_t>(v)];
      continue;
    }
    TapeCall call{kernels::kernel_for(n.op), v, &n, {}, first[static_cast<size_t>(v)], {}};
    for (NodeId in : n.inputs) call.inputs.push_back(slot_of(in));
    tape.calls.push_back(std::move(call));
  }
  // Last reading call per slot; graph outputs (loss, gradients) stay to the end.
  std::vector<int32_t> last(static_cast<size_t>(tape.slots), -1);
  for (size_t c = 0; c < tape.calls.size(); ++c) {
    for (SlotIdx s : tape.calls[c].inputs) last[static_cast<size_t>(s)] = static_cast<int32_t>(c);
  }
  for (const GraphOutput& out : graph.outputs()) {
    last[static_cast<size_t>(slot_of(out.node))] = static_cast<int32_t>(tape.calls.size());
    if (out.kind == OutputKind::kLoss) tape.loss_slot = slot_of(out.node);
  }
  for (SlotIdx s = 0; s < tape.slots; ++s) {
    int32_t c = last[static_cast<size_t>(s)];
    if (c >= 0 && c < static_cast<int32_t>(tape.calls.size()))
      tape.calls[static_cast<size_t>(c)].release_after.push_back(s);
  }
  return tape;
}

// This thread's CPU time: on a shared, loaded machine wall time mostly
// measures the scheduler; with one libtorch thread (the default) the CPU time
// of this thread is the work both ways do.
double cpu_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One step on the tape; returns the loss. Unused outputs are dropped at once.
at::Tensor replay(const Tape& tape, const std::vector<at::Tensor>& init) {
  std::vector<at::Tensor> slots(static_cast<size_t>(tape.slots));
  for (size_t v = 0; v < tape.placeholder_slot.size(); ++v) {
    if (tape.placeholder_slot[v] >= 0) slots[static_cast<size_t>(tape.placeholder_slot[v])] = init[v];
  }
  std::vector<at::Tensor> in;
  const KernelContext whole;
  for (const TapeCall& c : tape.calls) {
    in.clear();
    for (SlotIdx s : c.inputs) in.push_back(slots[static_cast<size_t>(s)]);
    kernels::KernelCall call{*c.node, in, c.node->outputs, whole};
    kernels::KernelResult out = c.fn(call);
    for (size_t o = 0; o < out->size(); ++o) {
      slots[static_cast<size_t>(c.first_output) + o] = std::move((*out)[o]);
    }
    for (SlotIdx s : c.release_after) slots[static_cast<size_t>(s)].reset();
  }
  return slots[static_cast<size_t>(tape.loss_slot)];
}

// Per tape call, its fastest time over `repeats` steps (calls timed one by one).
std::vector<double> time_each_call(const Tape& tape, const std::vector<at::Tensor>& init,
                                   int repeats) {
  std::vector<double> best(tape.calls.size(), std::numeric_limits<double>::infinity());
  for (int r = 0; r < repeats; ++r) {
    std::vector<at::Tensor> slots(static_cast<size_t>(tape.slots));
    for (size_t v = 0; v < tape.placeholder_slot.size(); ++v) {
      if (tape.placeholder_slot[v] >= 0) slots[static_cast<size_t>(tape.placeholder_slot[v])] = init[v];
    }
    std::vector<at::Tensor> in;
    const KernelContext whole;
    for (size_t k = 0; k < tape.calls.size(); ++k) {
      const TapeCall& c = tape.calls[k];
      in.clear();
      for (SlotIdx s : c.inputs) in.push_back(slots[static_cast<size_t>(s)]);
      kernels::KernelCall call{*c.node, in, c.node->outputs, whole};
      double start = cpu_now_s();
      kernels::KernelResult out = c.fn(call);
      best[k] = std::min(best[k], cpu_now_s() - start);
      for (size_t o = 0; o < out->size(); ++o) {
        slots[static_cast<size_t>(c.first_output) + o] = std::move((*out)[o]);
      }
      for (SlotIdx s : c.release_after) slots[static_cast<size_t>(s)].reset();
    }
  }
  return best;
}

// Per op: calls, measured (sum of each call's fastest time) and predicted.
void print_per_op(const Graph& graph, const Tape& tape, const std::vector<at::Tensor>& init,
                  int repeats, const HardwareProfile& hw) {
  std::vector<double> best = time_each_call(tape, init, repeats);
  struct Row {
    int calls = 0;
    double measured = 0, predicted = 0;
  };
  std::map<std::string, Row> rows;
  Row total;
  for (size_t k = 0; k < tape.calls.size(); ++k) {
    const Node& node = *tape.calls[k].node;
    double predicted = node_compute_time(graph, tape.calls[k].id, hw);
    Row& row = rows[std::string(op_name(node.op))];
    for (Row* r : {&row, &total}) {
      r->calls += 1;
      r->measured += best[k];
      r->predicted += predicted;
    }
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second.measured > b.second.measured; });
  fmt::print("per op (fastest of {} per call, summed; predicted: {} profile on the same shapes):\n",
             repeats, hw.name);
  fmt::print("  {:<58} {:>5} {:>11} {:>11} {:>8}\n", "op", "calls", "measured us", "predict us",
             "ratio");
  sorted.emplace_back("total", total);
  for (const auto& [op, r] : sorted) {
    fmt::print("  {:<58} {:>5} {:>11.1f} {:>11.1f} {:>8.2f}\n", op, r.calls, r.measured * 1e6,
               r.predicted * 1e6, r.predicted > 0 ? r.measured / r.predicted : 0.0);
  }
}

at::Tensor run_executor(const Graph& graph, const std::vector<at::Tensor>& init) {
  NodeValues values(static_cast<size_t>(graph.size()));
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (graph.node(v).is_placeholder()) values[static_cast<size_t>(v)] = {init[static_cast<size_t>(v)]};
  }
  Expected<ExecuteStats> stats = execute_nodes(graph, values);
  if (!stats) {
    fmt::print(stderr, "executor_overhead_bench: {}\n", stats.error().message);
    std::exit(1);
  }
  for (const GraphOutput& out : graph.outputs()) {
    if (out.kind == OutputKind::kLoss) return values[static_cast<size_t>(out.node)][0];
  }
  return {};
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

int run(const std::string& model, int repeats, int threads, const std::string& profile) {
  at::set_num_threads(threads);
  Expected<Graph> graph = build_model(ModelOptions{.name = model});
  if (!graph) {
    fmt::print(stderr, "executor_overhead_bench: {}\n", graph.error().message);
    return 1;
  }
  Expected<std::vector<at::Tensor>> init = init_placeholders(*graph, InitOptions{.seed = 0});
  if (!init) {
    fmt::print(stderr, "executor_overhead_bench: {}\n", init.error().message);
    return 1;
  }
  Tape tape = record(*graph);
  at::Tensor a = run_executor(*graph, *init);  // also warms up both paths
  at::Tensor b = replay(tape, *init);
  if (!at::equal(a, b)) {
    fmt::print(stderr, "executor_overhead_bench: losses differ: {} vs {}\n", a.item<double>(),
               b.item<double>());
    return 1;
  }
  std::vector<double> exec_s, direct_s;
  for (int r = 0; r < repeats; ++r) {
    // Alternate which goes first, so load spikes and cache state hit both.
    for (int k = 0; k < 2; ++k) {
      bool executor = (k == 0) == (r % 2 == 0);
      double start = cpu_now_s();
      if (executor) {
        run_executor(*graph, *init);
        exec_s.push_back(cpu_now_s() - start);
      } else {
        replay(tape, *init);
        direct_s.push_back(cpu_now_s() - start);
      }
    }
  }
  double e_min = *std::min_element(exec_s.begin(), exec_s.end());
  double d_min = *std::min_element(direct_s.begin(), direct_s.end());
  double e_med = median(exec_s), d_med = median(direct_s);
  size_t calls = tape.calls.size();
  fmt::print("{}: {} nodes, {} kernel calls, {} repeats, {} thread(s), loss {:.6f}, "
             "times are this thread's CPU time\n",
             model,
             graph->size(), calls, repeats, threads, a.item<double>());
  fmt::print("  executor  min {:9.3f} ms  median {:9.3f} ms\n", e_min * 1e3, e_med * 1e3);
  fmt::print("  direct    min {:9.3f} ms  median {:9.3f} ms\n", d_min * 1e3, d_med * 1e3);
  fmt::print("  overhead  min {:+.2f}%  median {:+.2f}%  ({:+.2f} us / {:+.2f} us per kernel call)\n",
             100 * (e_min - d_min) / d_min, 100 * (e_med - d_med) / d_med,
             1e6 * (e_min - d_min) / static_cast<double>(calls),
             1e6 * (e_med - d_med) / static_cast<double>(calls));
  if (profile.empty()) return 0;
  Expected<HardwareProfile> hw = load_hardware(profile);
  if (!hw) {
    fmt::print(stderr, "executor_overhead_bench: {}\n", hw.error().message);
    return 1;
  }
  print_per_op(*graph, tape, *init, repeats, *hw);
  return 0;
}

}  // namespace
}  // namespace autopar

int main(int argc, char** argv) {
  std::string model = argc > 1 ? argv[1] : "llama3-debugmodel";
  int repeats = argc > 2 ? std::atoi(argv[2]) : 200;
  int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  std::string profile = argc > 4 ? argv[4] : "";
  if (repeats < 1 || threads < 1) {
    std::fprintf(stderr, "usage: executor_overhead_bench [MODEL] [REPEATS>=1] [THREADS>=1] [PROFILE]\n");
    return 2;
  }
  return autopar::run(model, repeats, threads, profile);
}
