// The generic kernel (OpId::kGeneric): any aten op through libtorch's
// dispatcher, with the node's inputs and attributes bound back to the schema.
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>

#include "runtime/kernels.h"

namespace autopar {
namespace {

at::Tensor f32(std::vector<float> values, std::vector<int64_t> shape) {
  return at::tensor(values, at::TensorOptions().dtype(at::kFloat)).reshape(shape);
}

std::vector<float> values_of(const at::Tensor& t) {
  at::Tensor c = t.contiguous().to(at::kFloat);
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

Node generic(std::string aten, int inputs, Attrs attrs = {}, std::vector<TensorArg> args = {}) {
  Node node;
  node.name = "g";
  node.op = OpId::kGeneric;
  node.aten = std::move(aten);
  node.inputs.assign(static_cast<size_t>(inputs), 0);
  node.attrs = std::move(attrs);
  node.arg_inputs = std::move(args);
  return node;
}

Expected<std::vector<at::Tensor>> run(const Node& node, std::vector<at::Tensor> in,
                                      std::vector<TensorMeta> out) {
  return run_kernel(node, in, out);
}

TEST(GenericKernel, TriuKeepsTheUpperTriangleAboveTheGivenDiagonal) {
  // [[1,2,3],[4,5,6],[7,8,9]] above diagonal 1: [[0,2,3],[0,0,6],[0,0,0]]
  auto r = run(generic("aten.triu.default", 1, {{"diagonal", int64_t{1}}}),
               {f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3})}, {{{3, 3}, DType::f32}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
}

TEST(GenericKernel, AbsentArgumentsTakeTheSchemaDefault) {
  // triu's diagonal defaults to 0: [[1,2],[0,4]]
  auto r = run(generic("aten.triu.default", 1), {f32({1, 2, 3, 4}, {2, 2})}, {{{2, 2}, DType::f32}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{1, 2, 0, 4}));
}

TEST(GenericKernel, OptionalTensorListBindsNoneWhereTheFlagSaysSo) {
  // x[:, [2, 0]] on [[1,2,3],[4,5,6]] = [[3,1],[6,4]]
  at::Tensor idx = at::tensor(std::vector<int64_t>{2, 0}, at::kLong);
  auto r = run(generic("aten.index.Tensor", 2, {}, {TensorArg{}, TensorArg{1, {0, 1}}}),
               {f32({1, 2, 3, 4, 5, 6}, {2, 3}), idx}, {{{2, 2}, DType::f32}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(values_of((*r)[0]), (std::vector<float>{3, 1, 6, 4}));
}

TEST(GenericKernel, ListReturnsBecomeOneOutputEach) {
  auto r = run(generic("aten.split_with_sizes.default", 1, {{"split_sizes", std::vector<int64_t>{1, 2}}}),
               {f32({1, 2, 3}, {3})}, {{{1}, DType::f32}, {{2}, DType::f32}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(values_of((*r)[1]), (std::vector<float>{2, 3}));
}

TEST(GenericKernel, FactoriesStringsAndFloatListsReachTheOp) {
  auto full = run(generic("aten.full.default", 0, {{"size", std::vector<int64_t>{2}}, {"fill_value", 1.5}}),
                  {}, {{{2}, DType::f32}});
  ASSERT_TRUE(full) << full.error().message;
  EXPECT_EQ(values_of((*full)[0]), (std::vector<float>{1.5, 1.5}));
  // floor(-3 / 2) = -2; a plain division would give -1.5
  auto floor = run(generic("aten.div.Tensor_mode", 2, {{"rounding_mode", std::string("floor")}}),
                   {f32({-3}, {1}), f32({2}, {1})}, {{{1}, DType::f32}});
  ASSERT_TRUE(floor) << floor.error().message;
  EXPECT_EQ(values_of((*floor)[0]), (std::vector<float>{-2}));
  auto up = run(generic("aten.upsample_nearest1d.vec", 1, {{"scale_factors", std::vector<double>{2.0}}}),
                {f32({1, 2}, {1, 1, 2})}, {{{1, 1, 4}, DType::f32}});
  ASSERT_TRUE(up) << up.error().message;
  EXPECT_EQ(values_of((*up)[0]), (std::vector<float>{1, 1, 2, 2}));
}

TEST(GenericKernel, WrongDeclaredOutputsAndLibtorchErrorsNameTheNode) {
  auto shape = run(generic("aten.triu.default", 1), {f32({1, 2, 3, 4}, {2, 2})}, {{{4}, DType::f32}});
  ASSERT_FALSE(shape);
  EXPECT_NE(shape.error().message.find("node g (aten.triu.default)"), std::string::npos)
      << shape.error().message;
  auto bad = run(generic("aten.triu.default", 1), {f32({1, 2, 3}, {3})}, {{{3}, DType::f32}});
  ASSERT_FALSE(bad);  // triu needs 2-D input
  EXPECT_NE(bad.error().message.find("libtorch"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace autopar
