// End-to-end tests of `autopar graph`: run the built binary, check exit codes,
// stdout, stderr and written files.
#include <gtest/gtest.h>

#include <cstdint>
#include <regex>
#include <sstream>
#include <string>

#include "run_cli.h"

namespace autopar {
namespace {

using testing::read_file;
using testing::run_autopar;
using testing::write_file;

// The integer after "label" in a summary line such as "parameters:  1,234 (1234)".
int64_t summary_value(const std::string& summary, const std::string& label) {
  std::smatch match;
  const std::regex line(label + R"(\s+[0-9,]+ \(([0-9]+))");
  if (!std::regex_search(summary, match, line)) {
    ADD_FAILURE() << "no '" << label << "' line in:\n" << summary;
    return -1;
  }
  return std::stoll(match[1]);
}

TEST(GraphCommand, Llama3_8bSummaryCountsExactlyItsParameters) {
  testing::CliResult result = run_autopar("graph --model llama3-8b");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // embeddings + output: 2 * 128256 * 4096 = 1,050,673,152
  // per layer: wq,wo 2*4096*4096 + wk,wv 2*4096*1024 + w1,w2,w3 3*4096*14336 + 2 norms 2*4096
  //   = 33,554,432 + 8,388,608 + 176,160,768 + 8,192 = 218,112,000; * 32 = 6,979,584,000
  // final norm 4096. Total 1,050,673,152 + 6,979,584,000 + 4,096 = 8,030,261,248.
  EXPECT_NE(result.out.find("8,030,261,248"), std::string::npos) << result.out;
  EXPECT_EQ(summary_value(result.out, "parameters:"), 8030261248);
}

TEST(GraphCommand, Llama3_70bSummaryCountsExactlyItsParameters) {
  testing::CliResult result = run_autopar("graph --model llama3-70b");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // embeddings + output: 2 * 128256 * 8192 = 2,101,346,304
  // per layer: 2*8192*8192 + 2*8192*1024 + 3*8192*28672 + 2*8192
  //   = 134,217,728 + 16,777,216 + 704,643,072 + 16,384 = 855,654,400; * 80 = 68,452,352,000
  // final norm 8192. Total 2,101,346,304 + 68,452,352,000 + 8,192 = 70,553,706,496.
  EXPECT_EQ(summary_value(result.out, "parameters:"), 70553706496);
}

TEST(GraphCommand, SummaryNodeCountMatchesTheLinesOfTheTextForm) {
  testing::CliResult summary = run_autopar("graph --model llama3-debugmodel");
  testing::CliResult text = run_autopar("graph --model llama3-debugmodel --format text");
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  ASSERT_EQ(text.exit_code, 0) << text.err;
  int64_t node_lines = 0;
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) node_lines += line.starts_with("%") ? 1 : 0;
  EXPECT_GT(node_lines, 0);
  EXPECT_EQ(summary_value(summary.out, "nodes:"), node_lines);
}

TEST(GraphCommand, EachExtraLayerAddsTheSameNumberOfParameters) {
  int64_t params[3] = {};
  for (int layers = 1; layers <= 3; ++layers) {
    testing::CliResult result =
        run_autopar("graph --model llama3-debugmodel --layers " + std::to_string(layers));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    params[layers - 1] = summary_value(result.out, "parameters:");
  }
  EXPECT_GT(params[1], params[0]);
  EXPECT_EQ(params[2] - params[1], params[1] - params[0]);
}

TEST(GraphCommand, JsonWrittenReadBackAndWrittenAgainIsByteIdentical) {
  const testing::TempDir temp;
  const std::string& dir = temp.path();
  testing::CliResult first =
      run_autopar("graph --model llama3-debugmodel --format json --out '" + dir + "/a.json'");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "") << "--out must keep stdout empty";
  testing::CliResult second =
      run_autopar("graph --graph '" + dir + "/a.json' --format json --out '" + dir + "/b.json'");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const std::string a = read_file(dir + "/a.json");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, read_file(dir + "/b.json"));
}

TEST(GraphCommand, UnknownModelFailsAndListsTheKnownModels) {
  testing::CliResult result = run_autopar("graph --model no-such-model");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("autopar: error:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("no-such-model"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("llama3-8b"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("llama3-debugmodel"), std::string::npos) << result.err;
}

TEST(GraphCommand, MalformedJsonFileFailsNamingTheFile) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/broken.json";
  write_file(path, "{\"nodes\": [ this is not json");
  testing::CliResult result = run_autopar("graph --graph '" + path + "'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("autopar: error:"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(path), std::string::npos) << result.err;
}

TEST(GraphCommand, MissingJsonFileFailsNamingThePath) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/absent.json";
  testing::CliResult result = run_autopar("graph --graph '" + path + "'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find(path), std::string::npos) << result.err;
}

TEST(GraphCommand, ModelOverrideWithAGraphFileIsAUsageError) {
  testing::CliResult result = run_autopar("graph --graph x.json --layers 2");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--layers"), std::string::npos) << result.err;
}

TEST(GraphCommand, ModelAndGraphFileTogetherIsAUsageError) {
  testing::CliResult result = run_autopar("graph --model llama3-8b --graph x.json");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("autopar: error:"), std::string::npos) << result.err;
}

TEST(GraphCommand, NoGraphSourceIsAUsageError) {
  testing::CliResult result = run_autopar("graph");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--model"), std::string::npos) << result.err;
}

TEST(GraphCommand, NonPositiveBatchIsAUsageErrorShowingTheValue) {
  testing::CliResult result = run_autopar("graph --model llama3-debugmodel --batch 0");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("positive integer, got '0'"), std::string::npos) << result.err;
}

TEST(GraphCommand, UnknownDtypeIsAUsageErrorListingTheKnownOnes) {
  testing::CliResult result = run_autopar("graph --model llama3-debugmodel --dtype f8");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("bf16"), std::string::npos) << result.err;
}

TEST(GraphCommand, UnwritableOutFileFailsNamingThePath) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/no-such-dir/out.txt";
  testing::CliResult result = run_autopar("graph --model llama3-debugmodel --out '" + path + "'");
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_NE(result.err.find(path), std::string::npos) << result.err;
}

}  // namespace
}  // namespace autopar
