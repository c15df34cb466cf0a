// The pipeline memory model on a case small enough to follow by hand, and the
// send release points it relies on.
#include "pipeline_runtime/pipeline_memory.h"

#include <gtest/gtest.h>

#include "models/mlp.h"
#include "pipeline/lower.h"
#include "pipeline_runtime/send_release.h"

namespace autopar::pipeline {
namespace {

// A 2-hidden-layer mlp at microbatch size 2 (in 4, hidden 8, classes 2, f32),
// cut into 2 stages on 2 ranks (stage 0: layers.0; stage 1: layers.1, output
// and loss), run by 1F1B with 2 microbatches.
struct TwoStageMlp {
  Graph graph;
  std::vector<Stage> stages;
  std::vector<StageProgram> programs;
  Schedule lowered;

  TwoStageMlp() {
    Expected<Graph> g = build_mlp({.batch = 2, .in_features = 4, .hidden = 8, .classes = 2, .hidden_layers = 2});
    EXPECT_TRUE(g.ok()) << g.error().message;
    graph = std::move(*g);
    Expected<std::vector<Stage>> s = split_stages(graph, {2, 2, StageBalance::kCount, nullptr, {}});
    EXPECT_TRUE(s.ok()) << s.error().message;
    stages = std::move(*s);
    Expected<std::vector<StageProgram>> p = partition_stages(graph, stages);
    EXPECT_TRUE(p.ok()) << p.error().message;
    programs = std::move(*p);
    Expected<Schedule> schedule = make_schedule({ScheduleKind::k1F1B, 2, 2, 1});
    EXPECT_TRUE(schedule.ok()) << schedule.error().message;
    lowered = lower_communication(*schedule);
  }
  PipelineMemoryInput input(double optimizer_bytes_per_element) const {
    return {&graph, &stages, &programs, &lowered, optimizer_bytes_per_element};
  }
};

TEST(SendRelease, ASendIsReleasedWhenAMessageSentAfterItsReceiveArrives) {
  TwoStageMlp mlp;
  // rank 0: 0F0 0SEND_F0 0F1 0SEND_F1 0RECV_B0 0B0 0RECV_B1 0B1
  // rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 1RECV_F1 1F1 1B1 1SEND_B1
  Expected<std::vector<std::vector<int32_t>>> release = send_release_points(mlp.lowered);
  ASSERT_TRUE(release.ok()) << release.error().message;
  // 0SEND_F0 (1): rank 1 sent B0 after receiving F0, so it goes after 0RECV_B0 (4);
  // 0SEND_F1 (3) likewise after 0RECV_B1 (6).
  EXPECT_EQ((*release)[0], (std::vector<int32_t>{-1, 4, -1, 6, -1, -1, -1, -1}));
  // Rank 1 hears nothing from rank 0 after its sends: both at the end of the step (8).
  EXPECT_EQ((*release)[1], (std::vector<int32_t>{-1, -1, -1, 8, -1, -1, -1, 8}));
}

TEST(SendRelease, ADeadlockingScheduleIsAnError) {
  Expected<Schedule> s = parse_schedule_text("rank 0: 0RECV_B0 0SEND_F0\nrank 1: 1RECV_F0 1SEND_B0\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  Expected<std::vector<std::vector<int32_t>>> release = send_release_points(*s);
  ASSERT_FALSE(release.ok());
  EXPECT_NE(release.error().message.find("rank 0 is stuck at position 0 (0RECV_B0)"), std::string::npos)
      << release.error().message;
}

// Bytes (f32 = 4 B): layers.0 weight [8,4] 128, bias [8] 32; layers.1 weight
// [8,8] 256, bias 32; output weight [2,8] 64, bias [2] 8; per microbatch
// inputs [2,4] 32, labels i64[2] 16; the tangent f32[] 4. Every [2,8]
// activation (addmm, relu, mm, threshold_backward, ...) 64; [2,2] ones
// (addmm_2, _log_softmax, nll_loss_backward, _log_softmax_backward_data) 16;
// nll_loss_forward's two outputs 4 + 4; sum [1,2] 8, sum_1 [1,8] 32, mm_1
// [8,2] 64, mm_3 [8,8] 256, mm_4 [4,8] 128. Views (t*, view*) and getitems
// add nothing.
//
// Rank 0 (stage 0) holds 160 of params + 2 x 32 of inputs = 224 all run.
//   0F0: addmm +64, relu +64, addmm -64: 288 (relu kept: sent, read by B).
//   0SEND_F0 shares relu. 0F1: 352. 0RECV_B0: mm_2 +64 = 416, then 0SEND_F0
//   is released (relu 0 is still held for B0).
//   0B0: threshold_backward_1 +64 = 480, mm_2 and relu 0 go = 352, sum_2 +32
//   = 384, mm_4 +128 = 512, threshold_backward_1 goes = 448; the sums: weight
//   +128 = 576 and mm_4 goes, bias +32 and sum_2 goes: 448 = 224 + relu 1 +
//   160 of sums.
//   0RECV_B1 +64 = 512; 0B1: +64 = 576, -128 = 448, +32 = 480, mm_4 +128 = 608.
// Peak 608 in 0B1. Had 0SEND_F0 held relu 0 to the step's end: 672.
//
// Rank 1 (stage 1) holds 360 of params + 2 x 16 of labels + the tangent 4 =
// 396 all run.
//   1RECV_F0 relu +64 = 460. 1F0: addmm_1 +64, relu_1 +64, addmm_1 -64,
//   addmm_2 +16, _log_softmax +16, addmm_2 -16, nll_loss_forward +8 = 548.
//   1B0 ends its nodes at 824 = 396 + loss 4 + the grads view 8, t_5 64,
//   view_1 32, t_8 256 + mm_2 64 (to send); adding the sums peaks at 824 +
//   256 (layers.1 weight's sum before its gradient goes) = 1080; after B0:
//   396 + 360 of sums + mm_2 = 820. 1SEND_B0 holds mm_2 to the step's end
//   (rank 0 sends nothing later).
//   1RECV_F1 +64 = 884; 1F1 = 972 (as F0: +88). 1B1: nll_loss_backward +16,
//   getitem_1 -4, _log_softmax_backward_data +16, -16, -16 = 968, sum +8,
//   mm +64, mm_1 +64 = 1104, -16, threshold_backward +64 = 1152, mm and relu_1
//   go = 1024, sum_1 +32, mm_2 +64 = 1120, mm_3 +256 = 1376.
// Peak 1376 in 1B1.
TEST(PipelineMemory, TwoStageMlpOneFOneBPeaksFollowTheHandCount) {
  TwoStageMlp mlp;
  Expected<std::vector<RankMemory>> m = predict_pipeline_memory(mlp.input(0));
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].resident_bytes, 224);
  EXPECT_EQ((*m)[0].peak_bytes, 608);
  EXPECT_EQ((*m)[0].peak_action, "0B1");
  EXPECT_EQ((*m)[1].resident_bytes, 396);
  EXPECT_EQ((*m)[1].peak_bytes, 1376);
  EXPECT_EQ((*m)[1].peak_action, "1B1");
  // Rank 0 at its peak: params 160, inputs 64, sums 160, activations
  // threshold_backward_1 64 + sum_2 32 + mm_4 128; the received mm_2 is gone.
  const auto& parts = (*m)[0].at_peak;
  EXPECT_EQ(parts[static_cast<size_t>(PipelineMemoryKind::kParam)], 160);
  EXPECT_EQ(parts[static_cast<size_t>(PipelineMemoryKind::kInput)], 64);
  EXPECT_EQ(parts[static_cast<size_t>(PipelineMemoryKind::kGradSum)], 160);
  EXPECT_EQ(parts[static_cast<size_t>(PipelineMemoryKind::kActivation)], 224);
  EXPECT_EQ(parts[static_cast<size_t>(PipelineMemoryKind::kReceived)], 0);
}

// AdamW: 8 bytes per element of the params with gradients, held all run.
// Rank 0: (32 + 8) x 8 = 320 more; rank 1: (64 + 8 + 16 + 2) x 8 = 720 more.
TEST(PipelineMemory, AdamWStateAddsEightBytesPerParamElementToEveryRank) {
  TwoStageMlp mlp;
  Expected<std::vector<RankMemory>> m = predict_pipeline_memory(mlp.input(8));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ((*m)[0].peak_bytes, 608 + 320);
  EXPECT_EQ((*m)[1].peak_bytes, 1376 + 720);
  EXPECT_EQ((*m)[1].at_peak[static_cast<size_t>(PipelineMemoryKind::kOptimizer)], 720);
}

}  // namespace
}  // namespace autopar::pipeline
