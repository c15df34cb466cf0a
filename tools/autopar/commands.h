// Subcommands of the autopar CLI. Each lives in its own cmd_<name>.cc and
// registers itself on the top-level app; main() runs the one that was parsed.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace autopar {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;  // returns the process exit code
};

Command add_graph_command(CLI::App& parent);
Command add_plan_command(CLI::App& parent);
Command add_calibrate_command(CLI::App& parent);
Command add_compare_command(CLI::App& parent);
Command add_explain_command(CLI::App& parent);
Command add_pipeline_command(CLI::App& parent);
Command add_report_command(CLI::App& parent);
Command add_run_command(CLI::App& parent);
Command add_schedule_command(CLI::App& parent);
Command add_strategies_command(CLI::App& parent);

}  // namespace autopar
