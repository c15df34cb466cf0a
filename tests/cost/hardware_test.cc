#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "cost/hardware.h"

namespace autopar {
namespace {

double peak(const HardwareProfile& hw, DType dtype) { return hw.peak_flops[static_cast<size_t>(dtype)]; }

constexpr const char* kMinimalProfile = R"({
  "name": "tiny",
  "peak_flops": {"f32": 1e12, "bf16": 2e12},
  "memory_bandwidth_bytes_per_s": 1e11,
  "memory_bytes": 1e9,
  "devices_per_node": 4,
  "intra_node": {"bandwidth_bytes_per_s": 1e10, "latency_s": 1e-6},
  "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 1e-5}
})";

TEST(Hardware, BuiltinNamesAreSortedAndAllLoad) {
  std::vector<std::string> names = builtin_hardware_names();
  EXPECT_EQ(names, (std::vector<std::string>{"a100", "b200", "cpu", "h100", "h200"}));
  for (const std::string& name : names) {
    Expected<HardwareProfile> hw = load_hardware(name);
    ASSERT_TRUE(hw.ok()) << name << ": " << hw.error().message;
    EXPECT_EQ(hw->name, name);
    EXPECT_FALSE(hw->source.empty()) << name;
    EXPECT_GT(peak(*hw, DType::f32), 0) << name;
    EXPECT_GT(hw->intra_node.bandwidth_bytes_per_s, hw->inter_node.bandwidth_bytes_per_s) << name;
  }
}

TEST(Hardware, H100CarriesItsDenseDatasheetFigures) {
  Expected<HardwareProfile> hw = load_hardware("h100");
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(peak(*hw, DType::bf16), 989e12);
  EXPECT_DOUBLE_EQ(hw->memory_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(hw->memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(hw->intra_node.bandwidth_bytes_per_s, 450e9);  // 900 GB/s bidirectional / 2
  EXPECT_DOUBLE_EQ(hw->inter_node.bandwidth_bytes_per_s, 50e9);   // 400 Gb/s / 8 bits
  EXPECT_EQ(hw->devices_per_node, 8);
}

TEST(Hardware, UnknownNameListsBuiltinsAndMentionsPaths) {
  Expected<HardwareProfile> hw = load_hardware("tpu9");
  ASSERT_FALSE(hw.ok());
  const std::string& msg = hw.error().message;
  EXPECT_NE(msg.find("tpu9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a100, b200, cpu, h100, h200"), std::string::npos) << msg;
  EXPECT_NE(msg.find("path to a JSON file"), std::string::npos) << msg;
}

TEST(Hardware, MinimalProfileParsesWithDefaults) {
  Expected<HardwareProfile> hw = parse_hardware_json(kMinimalProfile);
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->name, "tiny");
  EXPECT_DOUBLE_EQ(peak(*hw, DType::bf16), 2e12);
  EXPECT_EQ(peak(*hw, DType::f16), 0);
  EXPECT_EQ(hw->compute_efficiency, 1);
  EXPECT_EQ(hw->min_op_time_s, 0);
  EXPECT_EQ(hw->devices_per_node, 4);
  EXPECT_DOUBLE_EQ(hw->link(LinkClass::kInterNode).latency_s, 1e-5);
}

TEST(Hardware, WrittenProfileParsesBackEqual) {
  Expected<HardwareProfile> h200 = load_hardware("h200");
  ASSERT_TRUE(h200.ok()) << h200.error().message;
  Expected<HardwareProfile> back = parse_hardware_json(write_hardware_json(*h200));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->name, h200->name);
  EXPECT_EQ(back->source, h200->source);
  EXPECT_EQ(back->peak_flops, h200->peak_flops);
  EXPECT_EQ(back->memory_bandwidth_bytes_per_s, h200->memory_bandwidth_bytes_per_s);
  EXPECT_EQ(back->memory_bytes, h200->memory_bytes);
  EXPECT_EQ(back->memory_efficiency, h200->memory_efficiency);
  EXPECT_EQ(back->min_op_time_s, h200->min_op_time_s);
  EXPECT_EQ(back->devices_per_node, h200->devices_per_node);
  EXPECT_EQ(back->intra_node.latency_s, h200->intra_node.latency_s);
  EXPECT_EQ(back->inter_node.bandwidth_bytes_per_s, h200->inter_node.bandwidth_bytes_per_s);
}

// Replaces the first occurrence of `from` in the minimal profile.
std::string minimal_with(const std::string& from, const std::string& to) {
  std::string text = kMinimalProfile;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Hardware, ParseErrorsNameTheField) {
  struct Case {
    std::string from, to, field;
  };
  const Case cases[] = {
      {"\"memory_bytes\": 1e9", "\"memory_bytes\": \"lots\"", "'memory_bytes'"},
      {"\"memory_bytes\": 1e9,", "", "'memory_bytes' is missing"},
      {"\"latency_s\": 1e-6", "\"latency_s\": -1", "'intra_node.latency_s'"},
      {"\"bf16\": 2e12", "\"bf17\": 2e12", "'peak_flops.bf17'"},
      {"\"f32\": 1e12", "\"f32\": 0", "'peak_flops.f32'"},
      {"\"devices_per_node\": 4", "\"devices_per_node\": 0", "'devices_per_node'"},
      {"\"name\": \"tiny\"", "\"nmae\": \"tiny\"", "'nmae'"},
  };
  for (const Case& c : cases) {
    Expected<HardwareProfile> hw = parse_hardware_json(minimal_with(c.from, c.to));
    ASSERT_FALSE(hw.ok()) << c.to;
    EXPECT_NE(hw.error().message.find(c.field), std::string::npos) << hw.error().message;
  }
}

constexpr const char* kIntraWithAlgorithms = R"("intra_node": {"bandwidth_bytes_per_s": 1e10, "latency_s": 1e-6,
    "algorithms": [
      {"algorithm": "ring", "protocol": "ll", "latency_s": 5e-7, "bandwidth_bytes_per_s": 4e9},
      {"algorithm": "nvls", "protocol": "simple", "latency_s": 2e-5, "bandwidth_bytes_per_s": 8e9}]})";

TEST(Hardware, LinksMayListTheirCollectiveAlgorithms) {
  std::string text = minimal_with(R"("intra_node": {"bandwidth_bytes_per_s": 1e10, "latency_s": 1e-6})",
                                  kIntraWithAlgorithms);
  Expected<HardwareProfile> hw = parse_hardware_json(text);
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  ASSERT_EQ(hw->intra_node.algorithms.size(), 2u);
  const AlgorithmSpec& nvls = hw->intra_node.algorithms[1];
  EXPECT_EQ(nvls.algorithm, CollAlgorithm::kNvls);
  EXPECT_EQ(nvls.protocol, CollProtocol::kSimple);
  EXPECT_DOUBLE_EQ(nvls.latency_s, 2e-5);
  EXPECT_DOUBLE_EQ(nvls.bandwidth_bytes_per_s, 8e9);
  EXPECT_TRUE(hw->inter_node.algorithms.empty());  // the plain ring of the link's own figures
  // Written and read back unchanged.
  Expected<HardwareProfile> back = parse_hardware_json(write_hardware_json(*hw));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->intra_node.algorithms.size(), 2u);
  EXPECT_EQ(back->intra_node.algorithms[0].protocol, CollProtocol::kLowLatency);
  EXPECT_DOUBLE_EQ(back->intra_node.algorithms[0].bandwidth_bytes_per_s, 4e9);
}

TEST(Hardware, AlgorithmErrorsNameTheEntry) {
  std::string base = minimal_with(R"("intra_node": {"bandwidth_bytes_per_s": 1e10, "latency_s": 1e-6})",
                                  kIntraWithAlgorithms);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = base;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  struct Case {
    std::string text, field;
  };
  const Case cases[] = {
      {with(R"("algorithm": "nvls")", R"("algorithm": "mesh")"), "'intra_node.algorithms[1].algorithm' must be one of ring, tree, nvls"},
      {with(R"("protocol": "ll")", R"("protocol": "ll128")"), "'intra_node.algorithms[0].protocol'"},
      {with(R"("algorithm": "nvls", "protocol": "simple")", R"("algorithm": "ring", "protocol": "ll")"), "repeats ring/ll"},
      {with(R"("algorithm": "ring")", R"("algorithm": "tree")"), "needs a ring entry"},
      {with(R"("latency_s": 5e-7, )", ""), "'intra_node.algorithms[0].latency_s' is missing"},
      {with(R"("bandwidth_bytes_per_s": 8e9)", R"("bandwidth_bytes_per_s": 0)"), "'intra_node.algorithms[1].bandwidth_bytes_per_s'"},
      {with(R"("algorithms": [)", R"("algorithms": [{"algorithm": "ring", "speed": 1},)"), "'intra_node.algorithms[0].speed' is not known"},
      {with(R"("inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 1e-5})",
            R"("inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 1e-5, "algorithms": [{"algorithm": "nvls", "protocol": "simple", "latency_s": 0, "bandwidth_bytes_per_s": 1}]})"),
       "only intra_node may list it"},
  };
  for (const Case& c : cases) {
    Expected<HardwareProfile> hw = parse_hardware_json(c.text);
    ASSERT_FALSE(hw.ok()) << c.field;
    EXPECT_NE(hw.error().message.find(c.field), std::string::npos) << hw.error().message;
  }
}

TEST(Hardware, GpuProfilesCarryFittedAlgorithmsAndStateTheirNodes) {
  for (const char* name : {"a100", "b200", "h100", "h200"}) {
    Expected<HardwareProfile> hw = load_hardware(name);
    ASSERT_TRUE(hw.ok()) << hw.error().message;
    EXPECT_EQ(hw->devices_per_node, 8) << name;
    EXPECT_FALSE(hw->intra_node.algorithms.empty()) << name;
    EXPECT_FALSE(hw->inter_node.algorithms.empty()) << name;
  }
  EXPECT_TRUE(load_hardware("cpu")->intra_node.algorithms.empty());  // calibrated: plain ring
}

TEST(Hardware, LoadsAProfileFromAFilePath) {
  std::string path = testing::TempDir() + "autopar_hardware_test.json";
  std::ofstream(path) << kMinimalProfile;
  Expected<HardwareProfile> hw = load_hardware(path);
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->name, "tiny");
  std::ofstream(path) << "{\"name\": 3}";
  Expected<HardwareProfile> bad = load_hardware(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(path), std::string::npos) << bad.error().message;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace autopar
