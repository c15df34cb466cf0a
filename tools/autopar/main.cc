// The autopar command line: one CLI11 app, one subcommand per cmd_<name>.cc.
//
// Two executables are built from this file. Loading libtorch and Open MPI costs
// about 0.9 s per process start on the reference machine (bench/RESULTS.md),
// which is most of the 2 s planning budget, so `autopar` itself links only the
// planner side (no libtorch, no MPI). Subcommands that run tensors (run,
// calibrate, pipeline) live in the sibling executable `autopar-full`, which
// holds every subcommand; `autopar` exec()s it for those (same process, same
// arguments, so mpirun launches and exit codes are unchanged) and for the
// top-level help, which must list every subcommand. AUTOPAR_FULL selects the
// build.
//
// Exit codes: 0 success, 1 a subcommand failed, 2 a usage error. Every error is
// printed as `autopar: error: <message>`; no exception leaves main.
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"

#ifndef AUTOPAR_VERSION
#define AUTOPAR_VERSION "unknown"
#endif

namespace autopar {
namespace {

// Subcommands that need libtorch or MPI: only in autopar-full. Sorted.
constexpr std::string_view kFullOnlyCommands[] = {"calibrate", "pipeline", "run"};

std::vector<Command> add_commands(CLI::App& app) {
  return {
      // Sorted by name. Add new subcommands here (declared in commands.h); one
      // that needs libtorch/MPI goes in the AUTOPAR_FULL block, in
      // kFullOnlyCommands, and only in autopar-full's sources.
      add_compare_command(app),
      add_explain_command(app),
      add_graph_command(app),
      add_plan_command(app),
      add_report_command(app),
      add_schedule_command(app),
      add_strategies_command(app),
#ifdef AUTOPAR_FULL
      add_calibrate_command(app),
      add_pipeline_command(app),
      add_run_command(app),
#endif
  };
}

#ifndef AUTOPAR_FULL
// Whether this invocation must be handled by autopar-full: a full-only
// subcommand, or the top-level help (no subcommand) that lists them all.
bool needs_full_binary(int argc, char** argv) {
  if (argc < 2) return true;
  std::string_view first = argv[1];
  if (first == "-h" || first == "--help") return true;
  for (std::string_view name : kFullOnlyCommands) {
    if (first == name) return true;
  }
  return false;
}

// Replaces this process with autopar-full from the same directory; returns
// only on failure, with the exit code.
int exec_full_binary(char** argv) {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  std::filesystem::path full = error ? std::filesystem::path("autopar-full")
                                     : self.parent_path() / "autopar-full";
  execv(full.c_str(), argv);
  return report_error(ErrorKind::kRuntime,
                      fmt::format("this subcommand needs libtorch and MPI, which live in {} (not loaded by `autopar` "
                                  "to keep planning fast), and it could not be started: {}; build it with "
                                  "`cmake --build build --target autopar-full`",
                                  full.string(), std::strerror(errno)));
}
#endif

int run(int argc, char** argv) {
#ifndef AUTOPAR_FULL
  if (needs_full_binary(argc, argv)) return exec_full_binary(argv);
#endif
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
    return autopar::report_error(autopar::ErrorKind::kInternal, error.what());
  } catch (...) {
    return autopar::report_error(autopar::ErrorKind::kInternal, "unexpected internal error (non-standard exception)");
  }
}
