// The values index (ir/values_index.h): what the exporter writes reads back
// with each file's size, and every malformed field is an error naming it.
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/values_index.h"

namespace autopar {
namespace {

using ::testing::HasSubstr;

std::string index_of(const std::string& tensors) {
  return R"({"format": "autopar.values", "version": 1, "tensors": [)" + tensors + "]}";
}

TEST(ValuesIndex, ReadsEachTensorWithTheBytesItsFileMustHave) {
  Expected<ValuesIndex> index = parse_values_index(
      index_of(R"({"role": "param", "name": "fc.weight", "file": "0.bin", "shape": [16, 8], "dtype": "f32"},
                  {"role": "loss", "name": "loss", "file": "1.bin", "shape": [], "dtype": "bf16"})"),
      "dir");
  ASSERT_TRUE(index) << index.error().message;
  ASSERT_EQ(index->entries.size(), 2u);
  EXPECT_EQ(index->entries[0].name, "fc.weight");
  EXPECT_EQ(index->entries[0].file, "0.bin");
  EXPECT_EQ(index->entries[0].bytes, 16 * 8 * 4);
  EXPECT_EQ(index->entries[1].role, "loss");
  EXPECT_EQ(index->entries[1].bytes, 2);  // a bf16 scalar
}

TEST(ValuesIndex, AnotherDocumentIsNotAnIndex) {
  for (const char* text : {"", "[]", "5", R"({"format": "autopar.plan", "tensors": []})",
                           R"({"format": 7, "tensors": []})", R"({"format": "autopar.values"})"}) {
    Expected<ValuesIndex> index = parse_values_index(text, "dir");
    ASSERT_FALSE(index) << text;
    EXPECT_EQ(index.error().message, "dir/index.json is not an autopar.values index");
  }
}

TEST(ValuesIndex, AFieldOfTheWrongTypeIsAnErrorNamingTheTensorAndField) {
  Expected<ValuesIndex> index = parse_values_index(
      index_of(R"({"role": "param", "name": "w", "file": 5, "dtype": "f32"})"), "dir");
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().message, "dir/index.json: tensors[0].file must be a string, got 5");
  index = parse_values_index(R"({"format": "autopar.values", "tensors": {"a": 1}})", "dir");
  ASSERT_FALSE(index);
  EXPECT_THAT(index.error().message, HasSubstr("\"tensors\" must be a list"));
  index = parse_values_index(index_of("[1]"), "dir");
  ASSERT_FALSE(index);
  EXPECT_THAT(index.error().message, HasSubstr("tensors[0] must be an object"));
}

TEST(ValuesIndex, NegativeOrOverflowingShapesAreRefusedBeforeAnythingIsAllocated) {
  Expected<ValuesIndex> index = parse_values_index(
      index_of(R"({"role": "param", "name": "w", "file": "w.bin", "shape": [-1], "dtype": "f32"})"), "dir");
  ASSERT_FALSE(index);
  EXPECT_THAT(index.error().message, HasSubstr("tensors[0].shape must be a list of sizes >= 0"));
  // 2^32 * 2^32 elements do not fit int64.
  index = parse_values_index(
      index_of(R"({"role": "param", "name": "w", "file": "w.bin", "shape": [4294967296, 4294967296], "dtype": "f32"})"),
      "dir");
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().message, "dir/w.bin: f32[4294967296, 4294967296] has more bytes than a file can hold");
}

TEST(ValuesIndex, UnknownDtypeAndRoleKeepTheirMessages) {
  Expected<ValuesIndex> index = parse_values_index(
      index_of(R"({"role": "param", "name": "w", "file": "w.bin", "dtype": "f33"})"), "dir");
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().message, "dir/w.bin: unknown dtype 'f33'");
  index = parse_values_index(index_of(R"({"role": "weight", "name": "w", "file": "w.bin", "dtype": "f32"})"), "dir");
  ASSERT_FALSE(index);
  EXPECT_EQ(index.error().message, "dir/index.json: tensor 'w' has unknown role 'weight'");
}

}  // namespace
}  // namespace autopar
