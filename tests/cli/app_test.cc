// End-to-end tests of the top-level app: help, version, usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.h"

namespace autopar {
namespace {

using testing::run_autopar;

// Subcommand names from the "Subcommands:" section of CLI11's help text.
std::vector<std::string> subcommands_in_help(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream lines(help.substr(help.find("Subcommands:")));
  std::string line;
  std::getline(lines, line);  // the heading
  while (std::getline(lines, line) && line.starts_with("  ")) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

TEST(App, NoSubcommandPrintsHelpAndFailsAsAUsageError) {
  testing::CliResult result = run_autopar("");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("Usage:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("autopar: error:"), std::string::npos) << result.err;
}

TEST(App, VersionPrintsTheProjectVersion) {
  testing::CliResult result = run_autopar("--version");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, std::string(AUTOPAR_VERSION) + "\n");
}

TEST(App, UnknownSubcommandIsAUsageError) {
  testing::CliResult result = run_autopar("no-such-command");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("autopar: error:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("no-such-command"), std::string::npos) << result.err;
}

TEST(App, EverySubcommandPrintsItsHelpAndSucceeds) {
  testing::CliResult top = run_autopar("--help");
  ASSERT_EQ(top.exit_code, 0) << top.err;
  std::vector<std::string> names = subcommands_in_help(top.out);
  ASSERT_FALSE(names.empty()) << top.out;
  EXPECT_NE(std::find(names.begin(), names.end(), "graph"), names.end()) << top.out;
  for (const std::string& name : names) {
    testing::CliResult help = run_autopar(name + " --help");
    EXPECT_EQ(help.exit_code, 0) << name << ": " << help.err;
    EXPECT_NE(help.out.find("Usage: autopar " + name), std::string::npos) << name << ":\n"
                                                                         << help.out;
  }
}

}  // namespace
}  // namespace autopar
