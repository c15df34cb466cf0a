// Fixtures of the CNN ops (PyTorch import): the one per op that the golden
// files and the soundness sweep use, and variants the sweep checks too
// (depthwise conv, masked-out gradients, eval-mode batch norm).
#include "fixtures.h"

namespace autopar::testing {
namespace {

using V = std::vector<int64_t>;

TensorMeta f32(Shape shape) { return {std::move(shape), DType::f32}; }

struct CnnBuilder {
  OpFixture fx;
  NodeId in(TensorMeta meta) {
    return fx.graph.add_placeholder(fx.graph.fresh_name("x"), PlaceholderKind::kInput,
                                    std::move(meta));
  }
  std::optional<OpFixture> op(OpId op, std::vector<NodeId> inputs, Attrs attrs) {
    Expected<NodeId> id = fx.graph.add(op, std::move(inputs), std::move(attrs));
    if (!id) return std::nullopt;
    fx.node = *id;
    return std::move(fx);
  }
};

// 3x3 kernels, stride 1, padding 1: H and W stay 6.
Attrs conv_attrs(int64_t groups) {
  return {{"stride", V{1, 1}}, {"padding", V{1, 1}}, {"dilation", V{1, 1}}, {"groups", groups}};
}

Attrs with(Attrs attrs, std::string_view name, AttrValue value) {
  attrs.set(name, std::move(value));
  return attrs;
}

Attrs pool_attrs() {
  // 3x3 windows, stride 2, padding 1 (resnet's stem): (6 + 2 - 2 - 1) / 2 + 1 = 3.
  return {{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}}};
}

// N=4, C=4, O=8 (dims of 4 and 8 shard on both axes of a 2x2 mesh).
const Shape kX{4, 4, 6, 6};
const Shape kY{4, 8, 6, 6};

std::optional<OpFixture> batch_norm_backward(bool running_stats, V mask) {
  CnnBuilder b;
  std::vector<NodeId> in{b.in(f32(kX)), b.in(f32(kX)), b.in(f32({4}))};
  for (int i = 0; i < (running_stats ? 4 : 2); ++i) in.push_back(b.in(f32({4})));
  return b.op(OpId::kNativeBatchNormBackward, in,
              {{"train", true}, {"eps", 1e-5}, {"output_mask", std::move(mask)}});
}

std::optional<OpFixture> conv_backward(const Shape& w, int64_t groups, V mask) {
  CnnBuilder b;
  Shape y{4, w[0], 6, 6};
  Shape x{4, w[1] * groups, 6, 6};
  Attrs attrs = with(conv_attrs(groups), "output_mask", std::move(mask));
  return b.op(OpId::kConvolutionBackward, {b.in(f32(y)), b.in(f32(x)), b.in(f32(w))},
              std::move(attrs));
}

}  // namespace

std::optional<OpFixture> cnn_op_fixture(OpId op) {
  CnnBuilder b;
  switch (op) {
    case OpId::kConvolution:
      return b.op(op, {b.in(f32(kX)), b.in(f32({8, 4, 3, 3})), b.in(f32({8}))}, conv_attrs(1));
    case OpId::kConvolutionBackward: return conv_backward({8, 4, 3, 3}, 1, {1, 1, 1});
    case OpId::kHardtanh:
      return b.op(op, {b.in(f32({4, 6}))}, {{"min_val", 0.0}, {"max_val", 6.0}});
    case OpId::kHardtanhBackward:
      return b.op(op, {b.in(f32({4, 6})), b.in(f32({4, 6}))}, {{"min_val", 0.0}, {"max_val", 6.0}});
    case OpId::kMaxPool2dWithIndices: return b.op(op, {b.in(f32(kX))}, pool_attrs());
    case OpId::kMaxPool2dWithIndicesBackward: {
      NodeId grad = b.in(f32({4, 4, 3, 3}));
      NodeId x = b.in(f32(kX));
      NodeId indices = b.in({{4, 4, 3, 3}, DType::i64});
      return b.op(op, {grad, x, indices}, pool_attrs());
    }
    case OpId::kNativeBatchNorm: {
      std::vector<NodeId> in{b.in(f32(kX))};
      for (int i = 0; i < 4; ++i) in.push_back(b.in(f32({4})));
      return b.op(op, in, {{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}});
    }
    case OpId::kNativeBatchNormBackward: return batch_norm_backward(true, {1, 1, 1});
    default: break;
  }
  return std::nullopt;
}

std::vector<OpFixture> cnn_variant_fixtures() {
  std::vector<OpFixture> out;
  auto push = [&](std::optional<OpFixture> fx) {
    if (fx) out.push_back(std::move(*fx));
  };
  {  // depthwise conv without bias (mobilenet_v2): groups = C = O = 4
    CnnBuilder b;
    push(b.op(OpId::kConvolution, {b.in(f32(kX)), b.in(f32({4, 1, 3, 3}))}, conv_attrs(4)));
  }
  {  // grouped (not depthwise) conv: 2 groups of 2 input and 4 output channels
    CnnBuilder b;
    push(b.op(OpId::kConvolution, {b.in(f32(kX)), b.in(f32({8, 2, 3, 3})), b.in(f32({8}))},
              conv_attrs(2)));
  }
  push(conv_backward({4, 1, 3, 3}, 4, {1, 1, 0}));  // depthwise, no bias
  push(conv_backward({8, 4, 3, 3}, 1, {0, 1, 0}));  // first layer: no input gradient
  push(conv_backward({8, 2, 3, 3}, 2, {1, 1, 1}));  // grouped
  {  // eval-mode batch norm: normalizes with the running statistics
    CnnBuilder b;
    std::vector<NodeId> in{b.in(f32(kX))};
    for (int i = 0; i < 4; ++i) in.push_back(b.in(f32({4})));
    push(b.op(OpId::kNativeBatchNorm, in, {{"training", false}, {"momentum", 0.1}, {"eps", 1e-5}}));
  }
  push(batch_norm_backward(false, {1, 1, 1}));  // no running statistics
  push(batch_norm_backward(true, {1, 0, 0}));   // frozen affine
  return out;
}

}  // namespace autopar::testing
