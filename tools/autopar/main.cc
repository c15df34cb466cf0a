// The autopar command line: one CLI11 app, one subcommand per cmd_<name>.cc.
//
// Exit codes: 0 success, 1 a subcommand failed, 2 a usage error. Every error is
// printed as `autopar: error: <message>`; no exception leaves main.
#include <exception>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"

#ifndef AUTOPAR_VERSION
#define AUTOPAR_VERSION "unknown"
#endif

namespace autopar {
namespace {

std::vector<Command> add_commands(CLI::App& app) {
  return {
      // Sorted by name. Add new subcommands here (declared in commands.h).
      add_calibrate_command(app),
      add_compare_command(app),
      add_graph_command(app),
      add_plan_command(app),
      add_run_command(app),
      add_schedule_command(app),
      add_strategies_command(app),
  };
}

int run(int argc, char** argv) {
  CLI::App app{"autopar: plan and run how one training step is split across devices", "autopar"};
  app.set_version_flag("--version", AUTOPAR_VERSION);
  app.require_subcommand(0, 1);
  std::vector<Command> commands = add_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& success) {  // --help, --version
    return app.exit(success);
  } catch (const CLI::ParseError& error) {
    fmt::print(stderr, "autopar: error: {}\nRun with --help for usage.\n", error.what());
    return kExitUsage;
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  fmt::print(stderr, "{}autopar: error: no subcommand given\n", app.help());
  return kExitUsage;
}

}  // namespace
}  // namespace autopar

int main(int argc, char** argv) {
  try {
    return autopar::run(argc, argv);
  } catch (const std::exception& error) {
    return autopar::report_error(error.what());
  } catch (...) {
    return autopar::report_error("unexpected internal error (non-standard exception)");
  }
}
