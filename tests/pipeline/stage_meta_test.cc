#include "pipeline/stage_meta.h"

#include <gtest/gtest.h>

#include "models/registry.h"
#include "pipeline/schedule.h"

namespace autopar::pipeline {
namespace {

// llama3-debugmodel: batch 8, seq 32, dim 256, vocab 2000.
constexpr int64_t kBatch = 8, kSeq = 32;

Graph debugmodel(int64_t batch, int64_t layers = 4) {
  Expected<Graph> g = build_model({"llama3-debugmodel", batch, std::nullopt, layers, std::nullopt});
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(*g);
}

std::map<std::string, TensorMeta> full_batch_inputs() {
  return {{"tokens", {{kBatch, kSeq}, DType::i64}}, {"labels", {{kBatch, kSeq}, DType::i64}}};
}

// Cuts the graph built at microbatch size and infers from the full-batch inputs.
void expect_boundaries_match_graph(int32_t microbatches, int32_t num_stages) {
  Graph g = debugmodel(kBatch / microbatches);
  Expected<std::vector<Stage>> stages =
      split_stages(g, {num_stages, num_stages, StageBalance::kCount, nullptr, {}});
  ASSERT_TRUE(stages.ok()) << stages.error().message;
  Expected<std::map<std::string, TensorMeta>> inputs =
      microbatch_metas(full_batch_inputs(), microbatches);
  ASSERT_TRUE(inputs.ok());
  Expected<PipelineMeta> meta =
      infer_pipeline(g, *stages, map_stages(num_stages, 1, StageMapping::kLoop), *inputs);
  ASSERT_TRUE(meta.ok()) << meta.error().message;
  ASSERT_EQ(meta->stages.size(), static_cast<size_t>(num_stages));
  for (const Stage& st : *stages) {
    const StageMeta& m = meta->stages[static_cast<size_t>(st.index)];
    for (size_t o = 0; o < st.outputs.size(); ++o) {
      const Value& v = st.outputs[o];
      EXPECT_EQ(m.outputs[o], g.node(v.node).outputs[static_cast<size_t>(v.output)])
          << "stage " << st.index << " output " << o;
    }
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      EXPECT_EQ(m.inputs[i], g.node(st.inputs[i].node).meta()) << "stage " << st.index;
    }
  }
  // Boundary activation: the residual stream f32[8/M, 32, 256].
  TensorMeta residual{{kBatch / microbatches, kSeq, 256}, DType::f32};
  EXPECT_EQ(meta->stages[0].outputs[0], residual);
  EXPECT_EQ(meta->stages[0].input_grads[0], std::nullopt);  // tokens are integers
  EXPECT_EQ(meta->stages[1].input_grads.back().value_or(TensorMeta{}), residual);
  // Every stage on its own rank: one message per boundary, no hand-off.
  EXPECT_EQ(meta->messages.size(), static_cast<size_t>(num_stages - 1));
  EXPECT_EQ(meta->direct_hand_offs, 0);
}

TEST(ShapeInference, TwoStagesMatchTheGraphAtMicrobatchSize) {
  expect_boundaries_match_graph(2, 2);
}

TEST(ShapeInference, FourStagesMatchTheGraphAtMicrobatchSize) {
  expect_boundaries_match_graph(4, 4);
}

TEST(ShapeInference, LastStageProducesTheScalarLoss) {
  Graph g = debugmodel(4);
  Expected<std::vector<Stage>> stages = split_stages(g, {2, 2, StageBalance::kCount, nullptr, {}});
  Expected<PipelineMeta> meta =
      infer_pipeline(g, *stages, {0, 1}, *microbatch_metas(full_batch_inputs(), 2));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->stages[1].outputs, (std::vector<TensorMeta>{{{}, DType::f32}}));
}

TEST(ShapeInference, TwoStagesOnOneRankHandOffWithoutAMessage) {
  Graph g = debugmodel(4);
  Expected<std::vector<Stage>> stages = split_stages(g, {4, 2, StageBalance::kCount, nullptr, {}});
  ASSERT_TRUE(stages.ok());
  // V mapping on 2 ranks: stages 0,1,2,3 on ranks 0,1,1,0; 1 -> 2 stays on rank 1.
  std::vector<RankIdx> ranks = map_stages(2, 2, StageMapping::kV);
  Expected<PipelineMeta> meta =
      infer_pipeline(g, *stages, ranks, *microbatch_metas(full_batch_inputs(), 2));
  ASSERT_TRUE(meta.ok()) << meta.error().message;
  EXPECT_EQ(meta->direct_hand_offs, 1);
  ASSERT_EQ(meta->messages.size(), 2u);  // 0 -> 1 and 2 -> 3 cross ranks
  EXPECT_EQ(meta->messages[0].from, 0);
  EXPECT_EQ(meta->messages[1].from, 2);
  EXPECT_EQ(meta->stages[2].inputs[0], (TensorMeta{{4, kSeq, 256}, DType::f32}));
}

TEST(ShapeInference, InputsThatDoNotFitTheMicrobatchGraphNameTheNode) {
  Graph g = debugmodel(4);  // built for microbatch 4
  Expected<std::vector<Stage>> stages = split_stages(g, {2, 2, StageBalance::kCount, nullptr, {}});
  // Full batch 8 in 4 microbatches gives 2, not 4: the first view with literal sizes fails.
  Expected<PipelineMeta> meta =
      infer_pipeline(g, *stages, {0, 1}, *microbatch_metas(full_batch_inputs(), 4));
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.error().message.substr(0, 8), "stage 0 ");
  EXPECT_NE(meta.error().message.find("node view"), std::string::npos) << meta.error().message;
}

TEST(ShapeInference, BatchNotDivisibleByMicrobatchesIsAnError) {
  Expected<std::map<std::string, TensorMeta>> m = microbatch_metas(full_batch_inputs(), 3);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "input labels i64[8, 32]: batch dim 0 cannot be split into 3 microbatches");
}

TEST(MetaMessage, EncodesAndDecodesBack) {
  MetaMessage message{1, 2, {{{4, 32, 256}, DType::f32}, {{4, 32}, DType::i64}}, {}};
  std::string bytes = encode_metas(message);
  EXPECT_EQ(bytes.substr(0, 80),
            R"({"from":1,"metas":[{"dtype":"f32","shape":[4,32,256],"strides":[8192,256,1]},{"d)");
  Expected<MetaMessage> back = decode_metas(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->from, 1);
  EXPECT_EQ(back->to, 2);
  EXPECT_EQ(back->metas, message.metas);
}

TEST(MetaMessage, NonContiguousStridesAreRejected) {
  Expected<MetaMessage> m =
      decode_metas(R"({"from":0,"to":1,"metas":[{"dtype":"f32","shape":[4,8],"strides":[1,4]}]})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "metadata message 0->1 meta 0: strides [1, 4] are not contiguous for f32[4, 8]");
}

class GivenShapes : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ = debugmodel(4);
    stages_ = *split_stages(g_, {2, 2, StageBalance::kCount, nullptr, {}});
    meta_ = *infer_pipeline(g_, stages_, {0, 1}, *microbatch_metas(full_batch_inputs(), 2));
  }
  Status check(const std::string& json) {
    Expected<std::vector<GivenStageShapes>> given = parse_stage_shapes(json);
    if (!given) return given.error();
    return check_stage_shapes(meta_.stages, *given);
  }
  Graph g_;
  std::vector<Stage> stages_;
  PipelineMeta meta_;
};

TEST_F(GivenShapes, MatchingShapesPass) {
  // Stage 1 reads labels (a placeholder, first in graph order) and the residual stream.
  Status s =
      check(R"({"stages":[{"stage":1,"inputs":[{"dtype":"i64","shape":[4,32],"strides":[32,1]},
      {"dtype":"f32","shape":[4,32,256]}],"outputs":[{"dtype":"f32","shape":[]}]}]})");
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST_F(GivenShapes, WrongShapeNamesStageValueAndBothShapes) {
  Status s = check(R"({"stages":[{"stage":1,"inputs":[{"dtype":"i64","shape":[4,32]},
      {"dtype":"f32","shape":[2,32,256]}]}]})");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "stage 1 input 1: shape [2, 32, 256] given, [4, 32, 256] inferred");
}

TEST_F(GivenShapes, WrongDtypeStridesAndCountAreNamed) {
  EXPECT_EQ(check(R"({"stages":[{"stage":0,"outputs":[{"dtype":"bf16","shape":[4,32,256]}]}]})")
                .error()
                .message,
            "stage 0 output 0: dtype bf16 given, f32 inferred");
  EXPECT_EQ(check(R"({"stages":[{"stage":0,"outputs":[{"dtype":"f32","shape":[4,32,256],
                    "strides":[256,1024,1]}]}]})")
                .error()
                .message,
            "stage 0 output 0: strides [256, 1024, 1] given, [8192, 256, 1] inferred (contiguous)");
  EXPECT_EQ(check(R"({"stages":[{"stage":1,"inputs":[{"dtype":"i64","shape":[4,32]}]}]})")
                .error()
                .message,
            "stage 1 inputs: 1 given, 2 inferred");
}

// Found by fuzz/stage_shapes_fuzz.cc: contiguous strides of [4, 2^32, 2^32]
// overflowed int64 (undefined behaviour) before any check.
TEST(StageShapes, ShapesWhoseBytesOverflowAreRefused) {
  Expected<std::vector<GivenStageShapes>> given = parse_stage_shapes(
      R"({"stages":[{"stage":0,"inputs":[{"dtype":"f32","shape":[4,4294967296,4294967296]}]}]})");
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.error().message, "stage shapes: stage 0 inputs 0: shape [4, 4294967296, 4294967296] "
                                   "must have sizes >= 0 and fit int64 in bytes");
  Expected<MetaMessage> message =
      decode_metas(R"({"from":0,"to":1,"metas":[{"dtype":"f32","shape":[4,-1]}]})");
  ASSERT_FALSE(message.ok());
  EXPECT_EQ(message.error().message, "metadata message 0->1 meta 0: shape [4, -1] must have sizes >= 0 "
                                     "and fit int64 in bytes");
}

TEST(Agreement, AllRanksInferOrAllAreGivenShapes) {
  const bool none[] = {false, false, false};
  const bool all[] = {true, true, true};
  EXPECT_EQ(decide_inference(none).value(), true);
  EXPECT_EQ(decide_inference(all).value(), false);
}

TEST(Agreement, AMixIsTheSameErrorOnEveryRank) {
  const bool mixed[] = {true, false, true, false};
  Expected<bool> d = decide_inference(mixed);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message,
            "ranks disagree on pipeline shape inference: rank(s) 0, 2 were given stage shapes, "
            "rank(s) 1, 3 were not; give --stage-shapes on every rank or on none");
}

}  // namespace
}  // namespace autopar::pipeline
