#include "fault_option.h"

namespace autopar {

void add_inject_fault_option(CLI::App& app, FaultInjection& faults) {
  app.add_option_function<std::string>("--inject-fault",
                                       [&faults](const std::string& spec) {
                                         Expected<PhaseFault> fault = parse_phase_fault(spec);
                                         // A hidden option has no name in CLI11's errors: the message has it.
                                         if (!fault) throw CLI::ValidationError(fault.error().message);
                                         faults.at_phase = *fault;
                                       })
      ->group("");
}

}  // namespace autopar
