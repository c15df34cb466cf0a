#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cost/hardware.h"
#include "runtime/calibrate.h"
#include "support/require.h"

namespace autopar {
namespace {

bool mpirun_available() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

TEST(Calibrate, ByteSizesTakeBinarySuffixes) {
  EXPECT_EQ(*parse_byte_size("4096"), 4096.0);
  EXPECT_EQ(*parse_byte_size("64K"), 64.0 * 1024);
  EXPECT_EQ(*parse_byte_size("16m"), 16.0 * 1024 * 1024);
  EXPECT_EQ(*parse_byte_size("1G"), 1024.0 * 1024 * 1024);
  Expected<double> bad = parse_byte_size("12Q");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("12Q"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(parse_byte_size("").ok());
  EXPECT_FALSE(parse_byte_size("-4K").ok());
}

TEST(Calibrate, DefaultSizesGrowFromKibibytesToMebibytes) {
  std::vector<double> sizes = default_calibration_sizes(/*quick=*/false);
  ASSERT_GE(sizes.size(), 3u);
  EXPECT_EQ(sizes.front(), 4096.0);
  EXPECT_EQ(sizes.back(), 16.0 * 1024 * 1024);  // 4 KiB * 4^6
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
}

TEST(Calibrate, QuickRunWritesAProfileThePlannerLoads) {
  AUTOPAR_REQUIRE(mpirun_available(), "mpirun is not on PATH (install openmpi-bin)");
  std::string out = testing::TempDir() + "autopar_calibrate_" + std::to_string(getpid()) + ".json";
  std::string command = std::string("'") + AUTOPAR_CLI + "' calibrate --quick --out '" + out + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  Expected<HardwareProfile> hw = parse_hardware_json(text.str());
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_GT(hw->peak_flops[static_cast<size_t>(DType::f32)], 0);
  EXPECT_GT(hw->memory_bandwidth_bytes_per_s, 0);
  EXPECT_GT(hw->memory_bytes, 0);
  EXPECT_GT(hw->min_op_time_s, 0);
  EXPECT_EQ(hw->devices_per_node, 2);  // --quick measures 2 ranks
  EXPECT_GT(hw->intra_node.bandwidth_bytes_per_s, 0);
  EXPECT_GE(hw->intra_node.latency_s, 0);

  // The raw samples travel with the profile: 4 collectives x 3 quick sizes.
  nlohmann::json doc = nlohmann::json::parse(text.str());
  EXPECT_EQ(doc["calibration"]["samples"].size(), 12u);
  Expected<HardwareProfile> loaded = load_hardware(out);
  EXPECT_TRUE(loaded.ok()) << loaded.error().message;
  std::remove(out.c_str());
}

// With a graph and a mesh, the profile carries every local op call the
// planner may choose (each key names an op the model has), each parameter's
// update, and the runtime's own time per op; `autopar plan` then costs the
// model by them.
TEST(Calibrate, ModelAndMeshMeasureItsOpCallsAndThePlannerUsesThem) {
  AUTOPAR_REQUIRE(mpirun_available(), "mpirun is not on PATH (install openmpi-bin)");
  std::string out = testing::TempDir() + "autopar_calibrate_mlp_" + std::to_string(getpid()) + ".json";
  std::string command = std::string("'") + AUTOPAR_CLI + "' calibrate --quick --model mlp --mesh 2 --out '" + out + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  Expected<HardwareProfile> hw = load_hardware(out);
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_GT(hw->op_times.size(), 10u);
  EXPECT_GT(hw->node_overhead_s, 0);
  EXPECT_TRUE(hw->adamw_update.measured());
  bool has_mm = false, has_update = false, has_transposed_update = false;
  for (const auto& [key, seconds] : hw->op_times) {
    EXPECT_GT(seconds, 0) << key;
    has_mm = has_mm || key.rfind("aten.addmm.default(", 0) == 0 || key.rfind("aten.mm.default(", 0) == 0;
    has_update = has_update || key.rfind("optimizer.adamw(", 0) == 0;
    // A linear weight's gradient comes out of the backward transposed.
    has_transposed_update = has_transposed_update || key.find(", grad transposed)") != std::string::npos;
  }
  EXPECT_TRUE(has_mm);
  EXPECT_TRUE(has_update);
  EXPECT_TRUE(has_transposed_update);
  // Where the op calls found their inputs, and the two figures that chose it.
  std::ifstream in(out);
  nlohmann::json doc = nlohmann::json::parse(in);
  const nlohmann::json& where = doc["calibration"]["op_inputs"];
  EXPECT_TRUE(where["inputs"] == "warm" || where["inputs"] == "cold") << where.dump();
  EXPECT_GT(where["step_footprint_bytes"].get<double>(), 0);
  EXPECT_GT(where["cache_bytes"].get<double>(), 0);
  EXPECT_EQ(where["inputs"] == "warm",
            where["step_footprint_bytes"].get<double>() <= where["cache_bytes"].get<double>());
  for (const RingFigures& r : hw->intra_node.measured) EXPECT_GT(r.bandwidth_bytes_per_s, 0);
  std::string plan = std::string("'") + AUTOPAR_CLI + "' plan --model mlp --mesh 2 --hardware '" + out + "' > /dev/null";
  EXPECT_EQ(std::system(plan.c_str()), 0) << plan;
  std::remove(out.c_str());
}

TEST(Calibrate, AGraphWithoutAMeshIsAUsageError) {
  std::string command = std::string("'") + AUTOPAR_CLI + "' calibrate --quick --model mlp --out /dev/null 2>/dev/null";
  EXPECT_NE(std::system(command.c_str()), 0);
}

}  // namespace
}  // namespace autopar
