// Explain one node's choice in a plan: why the solver picked this strategy.
//
// For every strategy of the node, its local cost given the neighbours' chosen
// strategies: compute time, the redistributions its operands need from their
// producers' chosen outputs (incoming), and those its output needs into its
// consumers' chosen inputs (outgoing; for a parameter, the gradient pairing
// too). The chosen strategy need not be the locally cheapest — the ILP trades
// against memory and the rest of the graph — so for other strategies the
// explanation can re-solve the whole plan with that strategy pinned (its
// output and every operand, the pins `autopar plan --pin` takes) and report
// the change in step time and peak memory. Re-solves are the expensive part:
// they are capped, cheapest local cost first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar::report {

struct PinnedOutcome {
  std::vector<std::string> pins;  // as for --pin, e.g. "embedding=RR"
  bool solved = false;            // false: not re-solved (over the cap)
  std::string error;              // the planner's error, when the pin is impossible
  bool fits = true;
  double step_time_s = 0;
  double peak_bytes = 0;
};

struct StrategyCost {
  StrategyIdx strategy = 0;
  std::string text;        // strategy_string: "inputs->outputs"
  double compute_s = 0;
  double incoming_s = 0;   // operands: producers' chosen outputs -> these inputs
  double outgoing_s = 0;   // this output -> consumers' chosen inputs
  double local_bytes = 0;  // per-device bytes of the outputs
  bool chosen = false;
  PinnedOutcome pinned;

  double local_s() const { return compute_s + incoming_s + outgoing_s; }
};

struct NodeExplanation {
  NodeId node = kNoNode;
  std::string name;
  std::string op;
  std::vector<StrategyCost> strategies;  // by local cost, ascending (ties: index)
  int32_t chosen = -1;                   // index into strategies
  // Local cost of the chosen strategy minus the cheapest other one (negative:
  // the chosen one is locally cheapest by that much).
  double margin_s = 0;
  double plan_step_time_s = 0;
  double plan_peak_bytes = 0;
  // Recomputation (memory/recompute.h): whether the node's value may be
  // recomputed, and whether the plan does; one line for the text.
  std::string recompute;
};

struct ExplainOptions {
  int32_t max_resolves = 5;  // < 0: every other strategy
  // Non-empty: re-solve only strategies whose output prints as this (e.g.
  // "RR"), to ask "what would forcing this output cost?".
  std::string only_output;
};

// Errors: an unknown node name (with close names), a plan without a choice.
// `options` are the options `plan` was made with; re-solves add pins to them.
Expected<NodeExplanation> explain_node(const Graph& graph, const Plan& plan,
                                       const PlanOptions& options, std::string_view node_name,
                                       const ExplainOptions& explain = {});

// Human-readable table of an explanation.
std::string explanation_to_text(const NodeExplanation& e);

}  // namespace autopar::report
