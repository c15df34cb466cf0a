// The exit codes: docs/cli.md's table is the code's, every kind of error
// exits with its own code, and context added on the way up keeps the kind.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <array>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "cli_output.h"
#include "ir/expected.h"
#include "run_cli.h"

namespace autopar {
namespace {

using testing::run_autopar;

constexpr std::array kKinds = {ErrorKind::kInput, ErrorKind::kUsage, ErrorKind::kInfeasible, ErrorKind::kRuntime,
                               ErrorKind::kInternal};

// "| 3 | infeasible | ..." rows of docs/cli.md: kind name -> code.
std::map<std::string, int> documented_codes() {
  std::ifstream in(std::string(AUTOPAR_SOURCE_DIR) + "/docs/cli.md");
  std::stringstream text;
  text << in.rdbuf();
  std::map<std::string, int> codes;
  std::regex row(R"(^\s*\| (\d+) \| ([a-z]+) \|)");
  std::string line;
  while (std::getline(text, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) codes[m[2].str()] = std::stoi(m[1].str());
  }
  return codes;
}

TEST(ExitCodes, TheDocumentedTableIsTheCodesOneCodePerKind) {
  std::map<std::string, int> documented = documented_codes();
  ASSERT_EQ(documented.count("ok"), 1u) << "docs/cli.md has no exit-code table";
  EXPECT_EQ(documented["ok"], kExitOk);
  std::set<int> codes = {kExitOk};
  for (ErrorKind kind : kKinds) {
    const std::string name = error_kind_name(kind);
    ASSERT_EQ(documented.count(name), 1u) << "docs/cli.md's table has no row for " << name;
    EXPECT_EQ(documented[name], exit_code(kind)) << name;
    EXPECT_TRUE(codes.insert(exit_code(kind)).second) << name << " shares its code";
  }
  EXPECT_EQ(documented.size(), kKinds.size() + 1) << "docs/cli.md lists a kind the code does not have";
}

TEST(ExitCodes, ContextAddedToAnErrorKeepsItsKind) {
  for (ErrorKind kind : kKinds) {
    Error cause = make_error_of(kind, "rank {} died", 3);
    Error wrapped = make_error_like(cause, "node {}: {}", "mm", cause.message);
    EXPECT_EQ(wrapped.kind, kind);
    EXPECT_EQ(wrapped.message, "node mm: rank 3 died");
  }
  EXPECT_EQ(make_error("bad {}", "file").kind, ErrorKind::kInput);
}

TEST(ExitCodes, ReportReturnsTheKindsCode) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(report_error(make_error_of(ErrorKind::kInternal, "an invariant broke")), kExitInternal);
  EXPECT_EQ(report_error(make_error_of(ErrorKind::kRuntime, "rank 1 failed")), kExitRuntime);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("autopar: error: an invariant broke\n"), std::string::npos) << err;
}

// One command per kind, end to end.

TEST(ExitCodes, AMalformedGraphFileIsAnInputError) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/graph.json";
  testing::write_file(path, "{\"nodes\": [");
  testing::CliResult result = run_autopar("plan --quiet --graph '" + path + "' --mesh 2");
  EXPECT_EQ(result.exit_code, kExitInput) << result.err;
  EXPECT_NE(result.err.find(path), std::string::npos) << result.err;
}

TEST(ExitCodes, AValueOutOfRangeIsAUsageError) {
  testing::CliResult result = run_autopar("plan --quiet --model mlp --mesh 2 --memory-gb -1");
  EXPECT_EQ(result.exit_code, kExitUsage) << result.err;
  EXPECT_NE(result.err.find("--memory-gb"), std::string::npos) << result.err;
}

TEST(ExitCodes, ABudgetNoPlanMeetsIsInfeasible) {
  testing::CliResult result = run_autopar("plan --quiet --model mlp --mesh 2 --memory-gb 0.000001");
  EXPECT_EQ(result.exit_code, kExitInfeasible) << result.err;
  EXPECT_NE(result.err.find("no plan fits"), std::string::npos) << result.err;
}

TEST(ExitCodes, AnOutputThatCannotBeWrittenIsARuntimeError) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/no-such-dir/plan.json";
  testing::CliResult result = run_autopar("plan --quiet --model mlp --mesh 2 --out '" + path + "'");
  EXPECT_EQ(result.exit_code, kExitRuntime) << result.err;
  EXPECT_NE(result.err.find(path), std::string::npos) << result.err;
}

}  // namespace
}  // namespace autopar
