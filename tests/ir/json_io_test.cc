#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ir/json_io.h"
#include "ir/printer.h"
#include "test_graphs.h"

namespace autopar {
namespace {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(JsonWriter, WritesOneNodePerLineInTheDocumentedLayout) {
  EXPECT_EQ(write_graph_json(testing::matmul_loss_graph()),
            R"({
  "format": "autopar.graph",
  "version": 1,
  "name": "matmul_loss",
  "nodes": [
    {"name":"x","op":"placeholder","kind":"input","target":"x","outputs":[{"shape":[4,3],"dtype":"f32"}]},
    {"name":"w","op":"placeholder","kind":"param","target":"fc.weight","outputs":[{"shape":[3,2],"dtype":"f32"}]},
    {"name":"mm","op":"aten.mm.default","scope":"fc","inputs":["x","w"],"outputs":[{"shape":[4,2],"dtype":"f32"}]},
    {"name":"sum","op":"aten.sum.dim_IntList","inputs":["mm"],"attrs":{"dim":[0,1]},"outputs":[{"shape":[],"dtype":"f32"}]}
  ],
  "outputs": [
    {"node":"sum","kind":"loss"}
  ]
}
)");
}


void expect_same_graph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.size(), b.size());
  for (NodeId id = 0; id < a.size(); ++id) {
    const Node& x = a.node(id);
    const Node& y = b.node(id);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op, y.op) << x.name;
    EXPECT_EQ(x.inputs, y.inputs) << x.name;
    EXPECT_EQ(x.attrs, y.attrs) << x.name;
    EXPECT_EQ(x.outputs, y.outputs) << x.name;
    EXPECT_EQ(x.kind, y.kind) << x.name;
    EXPECT_EQ(x.target, y.target) << x.name;
    EXPECT_EQ(x.scope, y.scope) << x.name;
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    EXPECT_EQ(a.outputs()[i].node, b.outputs()[i].node);
    EXPECT_EQ(a.outputs()[i].kind, b.outputs()[i].kind);
    EXPECT_EQ(a.outputs()[i].param, b.outputs()[i].param);
  }
  ASSERT_EQ(a.gradient_links().size(), b.gradient_links().size());
  for (size_t i = 0; i < a.gradient_links().size(); ++i) {
    EXPECT_EQ(a.gradient_links()[i].value, b.gradient_links()[i].value);
    EXPECT_EQ(a.gradient_links()[i].grad, b.gradient_links()[i].grad);
  }
}

TEST(JsonRoundTrip, ReadingBackGivesTheSameGraphAndTheSameBytes) {
  Graph g = testing::linear_training_graph();
  std::string text = write_graph_json(g);
  Expected<Graph> back = read_graph_json(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->gradient_links().size(), 2u);
  expect_same_graph(g, *back);
  EXPECT_EQ(write_graph_json(*back), text);
  EXPECT_EQ(print_graph(*back), print_graph(g));
}

// A chain of mul.Scalar nodes over x f32[2], one per scalar, summed into a loss.
Graph scalar_chain(const std::vector<AttrValue>& scalars) {
  Graph g;
  NodeId prev = g.add_placeholder("x", PlaceholderKind::kInput, {{2}, DType::f32});
  for (const AttrValue& scalar : scalars) prev = *g.add(OpId::kMulScalar, {prev}, {{"other", scalar}});
  NodeId loss = *g.add(OpId::kSumDimIntList, {prev}, {{"dim", std::vector<int64_t>{0}}});
  g.add_output({loss, OutputKind::kLoss});
  return g;
}

TEST(JsonRoundTrip, ScalarsKeepIntOrFloatAndDoublesComeBackBitForBit) {
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<AttrValue> scalars = {int64_t{2}, 2.0, 0.1, 1.0 / 3.0, 1e-300, 5e-324, -0.0,
                                    std::numeric_limits<double>::max(), kInf, -kInf,
                                    std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<int64_t>::min(), 0.7071067811865476};
  Graph g = scalar_chain(scalars);
  std::string text = write_graph_json(g);
  Expected<Graph> back = read_graph_json(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  for (size_t i = 0; i < scalars.size(); ++i) {
    const AttrValue& got = *back->node(static_cast<NodeId>(i + 1)).attrs.find("other");
    ASSERT_EQ(got.index(), scalars[i].index()) << "scalar " << i << " changed between int and float";
    if (const auto* d = std::get_if<double>(&scalars[i])) {
      double r = std::get<double>(got);
      // Compare bits: catches a lost digit, and -0.0 vs 0.0 (NaN has one encoding here).
      EXPECT_EQ(std::memcmp(d, &r, sizeof r), 0) << "scalar " << i << ": wrote " << *d << ", read " << r;
    } else {
      EXPECT_EQ(got, scalars[i]) << "scalar " << i;
    }
  }
  EXPECT_THAT(text, HasSubstr(R"("attrs":{"other":2})"));
  EXPECT_THAT(text, HasSubstr(R"("attrs":{"other":2.0})"));
  EXPECT_THAT(text, HasSubstr(R"("attrs":{"other":"-inf"})"));
  EXPECT_EQ(write_graph_json(*back), text);
}

// A graph the size of an 8B Llama's joint graph (~10k nodes), written and read back.
TEST(JsonRoundTrip, TenThousandNodeGraphRoundTripsByteIdentically) {
  constexpr int kLayers = 2500;  // 4 nodes per layer -> 10k nodes
  Graph g;
  NodeId h = g.add_placeholder("x", PlaceholderKind::kInput, {{64, 32}, DType::f32});
  for (int layer = 0; layer < kLayers; ++layer) {
    std::string scope = "layers." + std::to_string(layer);
    NodeId w = g.add_placeholder(scope + "_w", PlaceholderKind::kParam, {{32, 32}, DType::f32},
                                 scope + ".w");
    (void)w;
  }
  for (int layer = 0; layer < kLayers; ++layer) {
    std::string scope = "layers." + std::to_string(layer);
    NodeId w = *g.find(scope + "_w");
    NodeId mm = *g.add(OpId::kMm, {h, w}, {}, scope);
    NodeId act = *g.add(OpId::kSilu, {mm}, {}, scope);
    h = *g.add(OpId::kMulScalar, {act}, {{"other", 0.5}}, scope);
  }
  NodeId loss = *g.add(OpId::kSumDimIntList, {h}, {{"dim", std::vector<int64_t>{0, 1}}});
  g.add_output({loss, OutputKind::kLoss});
  ASSERT_EQ(g.size(), 1 + 4 * kLayers + 1);

  auto start = std::chrono::steady_clock::now();
  std::string text = write_graph_json(g);
  Expected<Graph> back = read_graph_json(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(write_graph_json(*back), text);
  RecordProperty("write_read_ms", static_cast<int>(seconds * 1000));
  std::printf("write + read of %d nodes (%zu bytes): %.0f ms\n", g.size(), text.size(),
              seconds * 1000);
}

TEST(JsonRoundTrip, ReaderAcceptsFieldsInAnyOrderAndOmittedOptionalFields) {
  std::string text = R"({"outputs": [{"kind": "loss", "node": "s"}], "nodes": [
    {"outputs": [{"dtype": "f32", "shape": [3]}], "op": "placeholder", "kind": "input", "name": "x", "inputs": [], "attrs": {}},
    {"name": "s", "op": "aten.sum.dim_IntList", "attrs": {"keepdim": false, "dim": [0]}, "inputs": ["x"],
     "outputs": [{"shape": [], "dtype": "f32"}]}], "version": 1, "format": "autopar.graph"})";
  Expected<Graph> g = read_graph_json(text);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->name, "");
  // Attributes are stored in schema order (dim, keepdim), whatever order the file used.
  EXPECT_EQ(print_graph(*g), "%x = placeholder[input]()  # f32[3]\n"
                             "%s = aten.sum.dim_IntList(%x, dim=[0], keepdim=False)  # f32[]\n"
                             "return (loss=%s)\n");
}

// --- Reader errors: each names the JSON path and/or node, and the values. ---

// matmul_loss_graph as a JSON document: nodes x, w, mm, sum; outputs [sum: loss].
Json matmul_doc() { return Json::parse(write_graph_json(testing::matmul_loss_graph())); }
Json linear_doc() { return Json::parse(write_graph_json(testing::linear_training_graph())); }

std::string read_error(const Json& doc) {
  Expected<Graph> g = read_graph_json(doc.dump());
  return g.ok() ? "ok" : g.error().message;
}
std::string read_error(std::string_view text) {
  Expected<Graph> g = read_graph_json(text);
  return g.ok() ? "ok" : g.error().message;
}

TEST(JsonReader, FixturesAreValid) {
  EXPECT_EQ(read_error(matmul_doc()), "ok");
  EXPECT_EQ(read_error(linear_doc()), "ok");
}

TEST(JsonReader, MalformedJsonReportsTheBytePosition) {
  std::string message = read_error(std::string_view(R"({"format": "autopar.graph", "version": })"));
  EXPECT_THAT(message, StartsWith("malformed JSON at byte 40: parse error at line 1, column 40"));
  EXPECT_THAT(message, HasSubstr("syntax error"));
  EXPECT_THAT(read_error(std::string_view("")), StartsWith("malformed JSON at byte 1:"));
}

TEST(JsonReader, DeeplyNestedValueIsAnErrorNotAStackOverflow) {
  constexpr size_t kDepth = 100000;
  std::string text = std::string(kDepth, '[') + std::string(kDepth, ']');
  // The message shows the first 37 characters of the value, then "...".
  EXPECT_EQ(read_error(std::string_view(text)),
            "(top level): expected an object, got array " + std::string(37, '[') + "...");
}

TEST(JsonReader, TopLevelMustBeAnObjectOfTheRightFormatAndVersion) {
  EXPECT_EQ(read_error(Json::array({1, 2})), "(top level): expected an object, got array [1,2]");
  Json format = matmul_doc();
  format["format"] = "onnx";
  EXPECT_EQ(read_error(format), R"(format: expected "autopar.graph", got string "onnx")");
  Json version = matmul_doc();
  version["version"] = 2;
  EXPECT_EQ(read_error(version), "version: this reader understands version 1, got number 2");
  Json missing = matmul_doc();
  missing.erase("nodes");
  EXPECT_EQ(read_error(missing), "(top level): missing field 'nodes'");
  Json extra = matmul_doc();
  extra["nodez"] = Json::array();
  EXPECT_EQ(read_error(extra),
            "(top level): unknown field 'nodez' (known: format, version, name, nodes, outputs, "
            "gradient_links)");
}

TEST(JsonReader, MissingNodeFieldNamesTheNode) {
  Json doc = matmul_doc();
  doc["nodes"][1].erase("op");
  EXPECT_EQ(read_error(doc), "nodes[1] (node 'w'): missing field 'op'");
  Json no_outputs = matmul_doc();
  no_outputs["nodes"][2].erase("outputs");
  EXPECT_EQ(read_error(no_outputs), "nodes[2] (node 'mm'): missing field 'outputs'");
}

TEST(JsonReader, MistypedNodeFieldShowsTheValue) {
  Json inputs = matmul_doc();
  inputs["nodes"][2]["inputs"] = "x";
  EXPECT_EQ(read_error(inputs),
            R"(nodes[2].inputs (node 'mm'): expected an array of node names, got string "x")");
  Json name = matmul_doc();
  name["nodes"][3]["name"] = 7;
  EXPECT_EQ(read_error(name), "nodes[3].name: expected a string, got number 7");
  Json dim = matmul_doc();
  dim["nodes"][0]["outputs"][0]["shape"][1] = 2.5;
  EXPECT_EQ(read_error(dim), "nodes[0].outputs[0].shape[1] (node 'x'): expected an int, got number 2.5");
  Json negative = matmul_doc();
  negative["nodes"][0]["outputs"][0]["shape"][0] = -4;
  EXPECT_EQ(read_error(negative),
            "nodes[0].outputs[0].shape[0] (node 'x'): a dimension must be >= 0, got -4");
}

TEST(JsonReader, UnknownNodeFieldIsRejected) {
  Json doc = matmul_doc();
  doc["nodes"][3]["atrs"] = Json::object();
  EXPECT_EQ(read_error(doc), "nodes[3]: unknown field 'atrs' (known: name, op, kind, target, "
                             "scope, value, inputs, arg_inputs, attrs, outputs)");
}

TEST(JsonReader, UnknownOpSuggestsCloseNames) {
  Json doc = matmul_doc();
  doc["nodes"][2]["op"] = "aten.mm";
  EXPECT_EQ(read_error(doc), "nodes[2].op (node 'mm'): unknown op 'aten.mm': neither autopar's "
                             "op table nor libtorch has it (did you mean aten.mm.default, "
                             "aten.bmm.default?)");
  Json far = matmul_doc();
  far["nodes"][2]["op"] = "aten.no_such_op_xyz.default";
  EXPECT_EQ(read_error(far), "nodes[2].op (node 'mm'): unknown op 'aten.no_such_op_xyz.default': "
                             "neither autopar's op table nor libtorch has it");
}

TEST(JsonReader, UnknownDtypeListsTheKnownOnes) {
  Json doc = matmul_doc();
  doc["nodes"][0]["outputs"][0]["dtype"] = "f33";
  EXPECT_EQ(read_error(doc), "nodes[0].outputs[0].dtype (node 'x'): unknown dtype 'f33' "
                             "(known: f32, bf16, f16, f64, i64, i32, bool, c64)");
}

TEST(JsonReader, WrongArityNamesTheOpAndCounts) {
  Json doc = matmul_doc();
  doc["nodes"][2]["inputs"] = Json::array({"x"});
  EXPECT_EQ(read_error(doc),
            "nodes[2].inputs (node 'mm'): aten.mm.default takes 2 tensor inputs, got 1");
}

TEST(JsonReader, UnknownAttributeListsTheSchema) {
  Json doc = matmul_doc();
  doc["nodes"][3]["attrs"]["keep_dim"] = true;
  EXPECT_EQ(read_error(doc), "nodes[3].attrs.keep_dim (node 'sum'): aten.sum.dim_IntList has no "
                             "attribute 'keep_dim' (it takes: dim, keepdim)");
}

TEST(JsonReader, MistypedAttributeShowsTheExpectedTypeAndTheValue) {
  Json doc = matmul_doc();
  doc["nodes"][3]["attrs"]["dim"] = 0;
  EXPECT_EQ(read_error(doc), "nodes[3].attrs.dim (node 'sum'): expected int list, got number 0");
  Json element = matmul_doc();
  element["nodes"][3]["attrs"]["dim"][1] = "1";
  EXPECT_EQ(read_error(element),
            R"(nodes[3].attrs.dim[1] (node 'sum'): expected an int, got string "1")");
  Json scalar = linear_doc();
  scalar["nodes"][5]["attrs"]["half_to_float"] = 0;  // a bool, not an int
  EXPECT_EQ(read_error(scalar),
            "nodes[5].attrs.half_to_float (node '_log_softmax'): expected bool, got number 0");
}

TEST(JsonReader, MissingAttributeNamesItAndItsType) {
  Json doc = matmul_doc();
  doc["nodes"][3]["op"] = "aten.view.default";
  doc["nodes"][3].erase("attrs");
  EXPECT_EQ(read_error(doc),
            "nodes[3].attrs (node 'sum'): aten.view.default needs attribute 'size' (int list)");
}

TEST(JsonReader, ShapeThatDisagreesWithTheOpRuleShowsRecordedAndInferred) {
  Json doc = matmul_doc();
  doc["nodes"][2]["outputs"][0]["shape"] = Json::array({4, 3});
  // x f32[4, 3] @ w f32[3, 2] = f32[4, 2].
  EXPECT_EQ(read_error(doc), "node 'mm' (aten.mm.default): recorded outputs f32[4, 3] differ "
                             "from inferred f32[4, 2]");
}

TEST(JsonReader, InputMustBeDefinedBeforeUse) {
  Json dangling = matmul_doc();
  dangling["nodes"][2]["inputs"][1] = "w2";
  EXPECT_EQ(read_error(dangling),
            "nodes[2].inputs[1] (node 'mm'): 'w2' is not defined before this node");
  Json later = matmul_doc();
  later["nodes"][2]["inputs"][1] = "sum";
  EXPECT_EQ(read_error(later), "nodes[2].inputs[1] (node 'mm'): 'sum' is not defined before this "
                               "node (it is defined later, at nodes[3])");
}

TEST(JsonReader, DuplicateNodeNameNamesTheFirstDefinition) {
  Json doc = matmul_doc();
  doc["nodes"][2]["name"] = "x";
  EXPECT_EQ(read_error(doc), "nodes[2].name: 'x' is already the name of nodes[0]");
}

TEST(JsonReader, PlaceholderFieldsBelongToPlaceholdersOnly) {
  Json kind = matmul_doc();
  kind["nodes"][2]["kind"] = "param";
  EXPECT_EQ(read_error(kind), "nodes[2].kind (node 'mm'): only placeholders have a kind");
  Json no_kind = matmul_doc();
  no_kind["nodes"][0].erase("kind");
  EXPECT_EQ(read_error(no_kind), "nodes[0] (node 'x'): missing field 'kind'");
  Json bad_kind = matmul_doc();
  bad_kind["nodes"][0]["kind"] = "none";
  EXPECT_EQ(read_error(bad_kind), "nodes[0].kind (node 'x'): unknown placeholder kind 'none' "
                                  "(known: param, buffer, input, tangent, constant)");
}

TEST(JsonReader, OutputMustReferenceAKnownNode) {
  Json doc = matmul_doc();
  doc["outputs"][0]["node"] = "loss";
  EXPECT_EQ(read_error(doc), "outputs[0].node: output 'loss' is not a node of the graph");
  Json kind = matmul_doc();
  kind["outputs"][0]["kind"] = "gradient";
  EXPECT_EQ(read_error(kind), "outputs[0].kind: unknown output kind 'gradient' (known: loss, grad, buffer)");
}

TEST(JsonReader, GradOutputNamesAParamPlaceholder) {
  Json input = linear_doc();
  input["outputs"][1]["param"] = "x";
  EXPECT_EQ(read_error(input), "outputs[1].param: 'x' is not a param placeholder (its kind is input)");
  Json computed = linear_doc();
  computed["outputs"][1]["param"] = "t";
  EXPECT_EQ(read_error(computed),
            "outputs[1].param: 't' is not a param placeholder (its op is aten.t.default)");
  Json unknown = linear_doc();
  unknown["outputs"][1]["param"] = "fc.weight";
  EXPECT_EQ(read_error(unknown), "outputs[1].param: param 'fc.weight' is not a node of the graph");
  Json missing = linear_doc();
  missing["outputs"][1].erase("param");
  EXPECT_EQ(read_error(missing), "outputs[1]: missing field 'param' (a grad output names its param)");
  Json on_loss = linear_doc();
  on_loss["outputs"][0]["param"] = "w";
  EXPECT_EQ(read_error(on_loss), "outputs[0].param: only a grad output names a param");
}

TEST(JsonReader, GradientLinksNameKnownNodesOfTheValuesMeta) {
  Json unknown = linear_doc();
  unknown["gradient_links"][0]["grad"] = "d_mm";
  EXPECT_EQ(read_error(unknown), "gradient_links[0].grad: grad 'd_mm' is not a node of the graph");
  Json typo = linear_doc();
  typo["gradient_links"][1]["gradient"] = "mm";
  EXPECT_EQ(read_error(typo), "gradient_links[1]: unknown field 'gradient' (known: value, grad)");
  Json shape = linear_doc();
  shape["gradient_links"][0]["grad"] = "t";
  EXPECT_EQ(read_error(shape),
            "gradient link 0: 't' (f32[3, 4]) cannot be the gradient of 'mm' (f32[4, 2]); a "
            "gradient comes later and has the value's shape and dtype");
  Json backwards = linear_doc();
  backwards["gradient_links"][0] = {{"value", "mm"}, {"grad", "x"}};
  EXPECT_THAT(read_error(backwards), StartsWith("gradient link 0: 'x' (f32[4, 3]) cannot be"));
}

TEST(JsonReader, VerifierChecksRunAfterReading) {
  Json doc = linear_doc();
  doc["outputs"][1]["node"] = "t";  // t(x) is f32[3, 4]; w is f32[3, 2]
  EXPECT_EQ(read_error(doc),
            "graph output 1 (grad of 'w'): node 't' is f32[3, 4], but the param is f32[3, 2]");
}

TEST(JsonReader, HugeIntegersAreRejectedNotWrapped) {
  Json doc = matmul_doc();
  doc["nodes"][0]["outputs"][0]["shape"][0] = uint64_t{1} << 63;
  EXPECT_EQ(read_error(doc), "nodes[0].outputs[0].shape[0] (node 'x'): expected an int, got "
                             "number 9223372036854775808");
}

// Found by fuzz/graph_fuzz.cc (the inputs are its regressions): sizes and
// attributes from the file overflowed int64 inside op rules (undefined
// behaviour); each is now an error naming the node and the values.
TEST(JsonReader, AttributesThatOverflowInt64AreErrorsNamingTheNode) {
  const std::pair<const char*, const char*> kCases[] = {
      {"cat_size_overflow.json", "has more elements than int64 can count"},
      {"conv_groups_overflow.json", "do not fit groups=4611686018427387904"},
      {"pad_size_overflow.json", "makes a dim of f32[8] overflow int64"},
      {"pool_window_overflow.json", "is beyond 2^31 (or the size beyond 2^61)"},
      {"view_size_overflow.json", "has more elements than int64 can count"},
  };
  for (const auto& [file, expected] : kCases) {
    std::ifstream in(std::string(AUTOPAR_SOURCE_DIR) + "/fuzz/regressions/graph/" + file);
    ASSERT_TRUE(in) << file;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_THAT(read_error(std::string_view(text)), HasSubstr(expected)) << file;
  }
}

// Found by fuzz/graph_fuzz.cc: a constant of f32[4, 2^32, 2^32] overflowed
// int64 in numel() (undefined behaviour) while its value was checked.
TEST(JsonReader, ShapesWhoseBytesOverflowInt64AreRejected) {
  Json doc = matmul_doc();
  doc["nodes"][0]["outputs"][0]["shape"] = {4, int64_t{1} << 32, int64_t{1} << 32};
  EXPECT_EQ(read_error(doc), "nodes[0].outputs[0].shape (node 'x'): f32[4, 4294967296, 4294967296] "
                             "is too large: its size in bytes does not fit int64");
}

}  // namespace
}  // namespace autopar
