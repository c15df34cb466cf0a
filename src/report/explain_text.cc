// Text forms of explanations and memory timelines, for `autopar explain`.
#include <fmt/format.h>

#include "report/explain.h"
#include "report/memory_estimate.h"
#include "report/report_text.h"

namespace autopar::report {
namespace {

std::string ms(double s) { return fmt::format("{:.3f}", s * 1e3); }

std::string signed_ms(double s) { return fmt::format("{:+.3f} ms", s * 1e3); }

std::string outcome_text(const StrategyCost& c, const NodeExplanation& e) {
  const PinnedOutcome& p = c.pinned;
  if (c.chosen) return "chosen";
  if (!p.error.empty()) return "pin fails: " + p.error;
  if (!p.solved) return "not re-solved (--all)";
  std::string text = fmt::format("step {} ({}), peak {} ({})", signed_ms(p.step_time_s - e.plan_step_time_s),
                                 fmt::format("{:+.1f}%", 100 * (p.step_time_s / e.plan_step_time_s - 1)),
                                 format_mib_delta(p.peak_bytes - e.plan_peak_bytes), format_mib(p.peak_bytes));
  return p.fits ? text : text + ", does not fit";
}

}  // namespace

std::string format_mib(double bytes) { return fmt::format("{:.3f} MiB", bytes / (1024.0 * 1024.0)); }

std::string format_mib_delta(double bytes) { return fmt::format("{:+.3f} MiB", bytes / (1024.0 * 1024.0)); }

std::string explanation_to_text(const NodeExplanation& e) {
  std::string out = fmt::format("node {} ({}): {} strategies; plan step {} ms, peak {}\n", e.name, e.op,
                                e.strategies.size(), ms(e.plan_step_time_s), format_mib(e.plan_peak_bytes));
  if (!e.recompute.empty()) out += e.recompute + "\n";
  out += "local cost = compute + incoming redistributions (operands from their producers' chosen\n"
         "outputs) + outgoing (this output into its consumers' chosen inputs), times in ms\n";
  out += fmt::format("  {:<4} {:<40} {:>10} {:>10} {:>10} {:>10} {:>12}  {}\n", "#", "strategy (in->out)",
                     "compute", "incoming", "outgoing", "local", "out bytes", "if pinned (vs plan)");
  for (const StrategyCost& c : e.strategies) {
    out += fmt::format("  {:<4} {:<40} {:>10} {:>10} {:>10} {:>10} {:>12}  {}\n",
                       fmt::format("{}{}", c.chosen ? "*" : "", c.strategy), c.text, ms(c.compute_s),
                       ms(c.incoming_s), ms(c.outgoing_s), ms(c.local_s()), format_mib(c.local_bytes),
                       outcome_text(c, e));
  }
  if (e.chosen >= 0 && e.strategies.size() > 1) {
    out += e.margin_s <= 0
               ? fmt::format("chosen: locally cheapest, {} below the runner-up\n", signed_ms(e.margin_s))
               : fmt::format("chosen: {} above the locally cheapest; the whole plan is cheaper with it "
                             "(memory or other nodes' costs)\n",
                             signed_ms(e.margin_s));
  }
  for (const StrategyCost& c : e.strategies) {
    if (c.chosen || !c.pinned.solved) continue;
    std::string pins;
    for (const std::string& p : c.pinned.pins) pins += " --pin '" + p + "'";
    out += fmt::format("  strategy {}:{}\n", c.strategy, pins);
  }
  return out;
}

std::string memory_timeline_to_text(const MemoryTimeline& t, const Graph& graph, int32_t top) {
  if (t.positions.empty()) return "no memory estimate: the plan has no choice\n";
  const MemoryParts& p = t.peak;
  std::string out = fmt::format(
      "estimated peak per device: {} at position {} ({})\n"
      "  params {}, optimizer {}, inputs {}, grads {}, activations {}, comm buffers {}\n",
      format_mib(t.peak_bytes), t.peak_position, graph.node(t.peak_node).name, format_mib(p.params),
      format_mib(p.optimizer), format_mib(p.inputs), format_mib(p.grads), format_mib(p.activations),
      format_mib(p.comm_buffers));
  out += fmt::format("largest of the {} tensors held at the peak:\n", t.live_at_peak.size());
  for (size_t i = 0; i < t.live_at_peak.size() && static_cast<int32_t>(i) < top; ++i) {
    const LiveTensor& l = t.live_at_peak[i];
    out += fmt::format("  {:>14}  {:<11} {:<32} {:<16} {:<22} {}\n", format_mib(l.bytes), memory_kind_name(l.kind),
                       l.name, l.op, l.shape, l.placement);
  }
  return out;
}

}  // namespace autopar::report
