// Generic aten ops (OpId::kGeneric), libtorch's schema registry, the graph's
// carried values (constants, buffers), buffer-update outputs, and the attribute
// kinds they brought (strings, float lists).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/aten_schema.h"
#include "ir/base64.h"
#include "ir/json_io.h"
#include "ir/printer.h"

namespace autopar {
namespace {

using ::testing::HasSubstr;

TEST(AtenSchema, TheRegistryListsLibtorchsOpsByAutoparsNames) {
  EXPECT_GT(aten_schema_count(), 2000u);  // libtorch 1.13 has ~2,960 aten schemas
  const AtenSchema* triu = find_aten_schema("aten.triu.default");
  ASSERT_NE(triu, nullptr);
  EXPECT_EQ(triu->text, "aten::triu(Tensor self, int diagonal=0) -> Tensor");
  ASSERT_EQ(triu->args.size(), 2u);
  EXPECT_EQ(triu->args[0].kind, AtenArgKind::kTensor);
  EXPECT_EQ(triu->args[1].attr_type, AttrType::kInt);
  EXPECT_TRUE(triu->args[1].has_default);
  EXPECT_EQ(triu->num_returns, 1);
  EXPECT_NE(find_aten_schema("aten.add.Tensor"), nullptr);
  EXPECT_EQ(find_aten_schema("aten.triu"), nullptr);  // no overload: not autopar's spelling
  EXPECT_EQ(find_aten_schema("aten.no_such_op.default"), nullptr);
}

TEST(AtenSchema, ParsesOptionalAndListTensorsAttributeTypesAndReturns) {
  Expected<AtenSchema> up = parse_aten_schema(
      "aten::upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
      "float[]? scale_factors) -> Tensor");
  ASSERT_TRUE(up) << up.error().message;
  EXPECT_EQ(up->name, "aten.upsample_bilinear2d.vec");
  EXPECT_EQ(up->args[1].attr_type, AttrType::kInts);
  EXPECT_TRUE(up->args[1].optional);
  EXPECT_EQ(up->args[2].attr_type, AttrType::kBool);
  EXPECT_EQ(up->args[3].attr_type, AttrType::kFloats);

  Expected<AtenSchema> index = parse_aten_schema("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->args[1].kind, AtenArgKind::kOptionalTensorList);
  EXPECT_EQ(index->num_tensor_args(), 2);

  Expected<AtenSchema> split = parse_aten_schema(
      "aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]");
  ASSERT_TRUE(split);
  EXPECT_TRUE(split->returns_list);
  EXPECT_FALSE(split->mutates());

  Expected<AtenSchema> dropout = parse_aten_schema(
      "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)");
  ASSERT_TRUE(dropout);
  EXPECT_EQ(dropout->num_returns, 2);
  EXPECT_EQ(dropout->args[1].attr_type, AttrType::kScalar);

  Expected<AtenSchema> gelu = parse_aten_schema(
      "aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor");
  ASSERT_TRUE(gelu);
  EXPECT_TRUE(gelu->args[1].keyword_only);
  EXPECT_EQ(gelu->args[1].attr_type, AttrType::kString);

  Expected<AtenSchema> inplace = parse_aten_schema(
      "aten::relu_(Tensor(a!) self) -> Tensor(a!)");
  ASSERT_TRUE(inplace);
  EXPECT_TRUE(inplace->mutates());

  Expected<AtenSchema> full = parse_aten_schema(
      "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->num_tensor_args(), 0);
  EXPECT_EQ(full->args[2].attr_type, AttrType::kDType);
  EXPECT_EQ(full->args[3].kind, AtenArgKind::kUnsupported);
  EXPECT_TRUE(full->args[3].may_omit());
}

TEST(Base64, RoundTripsEveryLengthAndRejectsBadText) {
  std::vector<uint8_t> bytes;
  for (int n = 0; n < 10; ++n) {
    Expected<std::vector<uint8_t>> back = base64_decode(base64_encode(bytes));
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, bytes) << n;
    bytes.push_back(static_cast<uint8_t>(n * 37 + 200));
  }
  EXPECT_EQ(base64_encode({'M', 'a', 'n'}), "TWFu");  // RFC 4648's example
  EXPECT_EQ(base64_encode({'M', 'a'}), "TWE=");
  EXPECT_FALSE(base64_decode("TWE"));     // not a multiple of 4
  EXPECT_FALSE(base64_decode("TW!u"));    // outside the alphabet
}

// x @ w -> triu (generic) -> sum: a constant, a buffer with its update, a
// string and a float-list attribute, and an index op with a None index.
constexpr const char* kGenericGraph = R"({
  "format": "autopar.graph",
  "version": 1,
  "name": "generic",
  "nodes": [
    {"name":"x","op":"placeholder","kind":"input","target":"x","outputs":[{"shape":[2,4],"dtype":"f32"}]},
    {"name":"w","op":"placeholder","kind":"param","target":"w","outputs":[{"shape":[4,4],"dtype":"f32"}]},
    {"name":"steps","op":"placeholder","kind":"buffer","target":"steps","value":"AQAAAAAAAAA=","outputs":[{"shape":[],"dtype":"i64"}]},
    {"name":"idx","op":"placeholder","kind":"constant","value":"AwAAAAAAAAABAAAAAAAAAA==","outputs":[{"shape":[2],"dtype":"i64"}]},
    {"name":"mm","op":"aten.mm.default","inputs":["x","w"],"outputs":[{"shape":[2,4],"dtype":"f32"}]},
    {"name":"triu","op":"aten.triu.default","inputs":["mm"],"attrs":{"diagonal":1},"outputs":[{"shape":[2,4],"dtype":"f32"}]},
    {"name":"gelu","op":"aten.gelu.default","inputs":["triu"],"outputs":[{"shape":[2,4],"dtype":"f32"}]},
    {"name":"cols","op":"aten.index.Tensor","inputs":["gelu","idx"],"arg_inputs":[1,[0,1]],"outputs":[{"shape":[2,2],"dtype":"f32"}]},
    {"name":"up","op":"aten.upsample_nearest1d.vec","inputs":["cols"],"attrs":{"scale_factors":[2.0]},"outputs":[{"shape":[2,4],"dtype":"f32"}]},
    {"name":"floor","op":"aten.div.Tensor_mode","inputs":["triu","up"],"attrs":{"rounding_mode":"floor"},"outputs":[{"shape":[2,4],"dtype":"f32"}]},
    {"name":"sum","op":"aten.sum.dim_IntList","inputs":["floor"],"attrs":{"dim":[0,1]},"outputs":[{"shape":[],"dtype":"f32"}]},
    {"name":"add","op":"aten.add.Scalar","inputs":["steps"],"attrs":{"other":1},"outputs":[{"shape":[],"dtype":"i64"}]}
  ],
  "outputs": [
    {"node":"sum","kind":"loss"},
    {"node":"add","kind":"buffer","buffer":"steps"}
  ]
}
)";

TEST(GenericOps, ReadAnyLibtorchOpAndWriteTheSameBytes) {
  Expected<Graph> g = read_graph_json(kGenericGraph);
  ASSERT_TRUE(g) << g.error().message;
  const Node& triu = g->node(*g->find("triu"));
  EXPECT_EQ(triu.op, OpId::kGeneric);
  EXPECT_EQ(node_op_name(triu), "aten.triu.default");
  EXPECT_EQ(g->node(*g->find("gelu")).op, *find_op("aten.gelu.default"));  // the table's own
  const Node& cols = g->node(*g->find("cols"));
  ASSERT_EQ(cols.arg_inputs.size(), 2u);
  EXPECT_EQ(cols.arg_inputs[1].present, (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(g->node(*g->find("up")).attrs.get_floats("scale_factors"), std::vector<double>{2.0});
  const Node& idx = g->node(*g->find("idx"));
  ASSERT_TRUE(idx.value);
  EXPECT_EQ(idx.value->size(), 16u);  // two int64: 3 and 1
  EXPECT_EQ((*idx.value)[0], 3);
  EXPECT_EQ(g->outputs()[1].kind, OutputKind::kBuffer);
  EXPECT_EQ(g->outputs()[1].placeholder(), *g->find("steps"));
  EXPECT_EQ(write_graph_json(*g), kGenericGraph);
  EXPECT_THAT(print_graph(*g), HasSubstr("%up = aten.upsample_nearest1d.vec(%cols, scale_factors=[2.0])"));
  EXPECT_THAT(print_graph(*g), HasSubstr("buffer(%steps)=%add"));
}

// The reading error for one edit of the graph above.
std::string error_after(const std::string& from, const std::string& to) {
  std::string text = kGenericGraph;
  size_t at = text.find(from);
  if (at == std::string::npos) return "test bug: no '" + from + "'";
  text.replace(at, from.size(), to);
  Expected<Graph> g = read_graph_json(text);
  return g ? "read fine" : g.error().message;
}

TEST(GenericOps, MistakesAreErrorsNamingTheNodeAndTheSchema) {
  EXPECT_THAT(error_after(R"("attrs":{"diagonal":1})", R"("attrs":{"diag":1})"),
              HasSubstr("nodes[5].attrs.diag (node 'triu'): aten.triu.default has no attribute "
                        "'diag' (schema: aten::triu(Tensor self, int diagonal=0) -> Tensor)"));
  EXPECT_THAT(error_after(R"("attrs":{"diagonal":1})", R"("attrs":{"diagonal":1.5})"),
              HasSubstr("nodes[5].attrs.diagonal (node 'triu'): expected int, got number 1.5"));
  EXPECT_THAT(error_after(R"("inputs":["gelu","idx"],"arg_inputs":[1,[0,1]])", R"("inputs":["gelu"])"),
              HasSubstr("nodes[7].inputs (node 'cols'): aten.index.Tensor takes 2 tensor "
                        "arguments, got 1 inputs"));
  EXPECT_THAT(error_after(R"("arg_inputs":[1,[0,1]])", R"("arg_inputs":[1,[1,1]])"),
              HasSubstr("nodes[7].arg_inputs (node 'cols'): binds 3 inputs, but the node has 2"));
  EXPECT_THAT(error_after(R"("op":"aten.triu.default")", R"("op":"aten.triu_.default")"),
              HasSubstr("aten.triu_.default writes one of its arguments in place"));
  EXPECT_THAT(error_after(R"("kind":"constant","value":"AwAAAAAAAAABAAAAAAAAAA==",)",
                          R"("kind":"constant",)"),
              HasSubstr("nodes[3] (node 'idx'): a constant needs a 'value'"));
  EXPECT_THAT(error_after("AwAAAAAAAAABAAAAAAAAAA==", "AwAAAAAAAAA="),
              HasSubstr("nodes[3].value (node 'idx'): the value has 8 bytes, but i64[2] takes 16"));
  EXPECT_THAT(error_after(R"("buffer":"steps")", R"("buffer":"w")"),
              HasSubstr("graph output 1 (buffer): 'w' is not a buffer placeholder"));
  EXPECT_THAT(error_after(R"({"node":"add","kind":"buffer","buffer":"steps"})",
                          R"({"node":"add","kind":"buffer"})"),
              HasSubstr("outputs[1]: missing field 'buffer'"));
}

TEST(GenericOps, AddGenericAppendsANodeWhoseOutputsAreGiven) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{3, 3}, DType::f32});
  Expected<NodeId> id = g.add_generic("aten.triu.default", {x}, {{"diagonal", int64_t{0}}},
                                      {{{3, 3}, DType::f32}});
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(g.node(*id).name, "triu");
  EXPECT_FALSE(g.add_generic("aten.no_such.default", {x}, {}, {{{3, 3}, DType::f32}}));
  EXPECT_FALSE(g.add_generic("aten.triu.default", {x, x}, {}, {{{3, 3}, DType::f32}}));
}

}  // namespace
}  // namespace autopar
