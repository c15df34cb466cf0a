#include <gtest/gtest.h>

#include "memory/liveness.h"

namespace autopar {
namespace {

// position: 0 w (param), 1 x (input), 2 relu(x), 3 view(relu), 4 mm(view, w),
//           5 relu(mm), 6 mul(relu_1, view) -- the view keeps relu alive to 6.
struct SmallGraph {
  Graph g;
  NodeId w, x, relu, view, mm, relu1, mul;
  SmallGraph() {
    w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
    x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
    relu = *g.add(OpId::kRelu, {x});
    view = *g.add(OpId::kView, {relu}, {{"size", std::vector<int64_t>{4, 8}}});
    mm = *g.add(OpId::kMm, {view, w});
    relu1 = *g.add(OpId::kRelu, {mm});
    mul = *g.add(OpId::kMulTensor, {relu1, view});
    g.add_output({mul, OutputKind::kLoss});
  }
};

TEST(Liveness, ViewsAliasTheirInputAndExtendItsLifetime) {
  SmallGraph s;
  Liveness live = analyze_liveness(s.g);
  EXPECT_EQ(live.storage_root[static_cast<size_t>(s.view)], s.relu);
  EXPECT_FALSE(live.owns_storage(s.view));
  EXPECT_EQ(live.start[static_cast<size_t>(s.relu)], 2);
  EXPECT_EQ(live.end[static_cast<size_t>(s.relu)], 6);  // read through the view by mul at 6
}

TEST(Liveness, ParamsLiveToTheEndAndInputsDieAfterLastUse) {
  SmallGraph s;
  Liveness live = analyze_liveness(s.g);
  EXPECT_EQ(live.role[static_cast<size_t>(s.w)], StorageRole::kParam);
  EXPECT_EQ(live.end[static_cast<size_t>(s.w)], 6);
  EXPECT_EQ(live.start[static_cast<size_t>(s.x)], 0);
  EXPECT_EQ(live.end[static_cast<size_t>(s.x)], 2);
  EXPECT_EQ(live.end[static_cast<size_t>(s.mm)], 5);
  EXPECT_EQ(live.end[static_cast<size_t>(s.mul)], 6);  // graph output
}

TEST(Liveness, PeakCandidatesArePointsWhereSomethingDiesAndNotDominated) {
  SmallGraph s;
  Liveness live = analyze_liveness(s.g);
  // Deaths at 2 (x), 5 (mm), 6 (relu, relu_1, mul, w). Live sets:
  // t=2 {w,x,relu}; t=5 {w,relu,mm,relu_1}; t=6 {w,relu,relu_1,mul}.
  // None is a subset of another, so all three are kept.
  EXPECT_EQ(peak_candidate_points(live), (std::vector<int32_t>{2, 5, 6}));
  EXPECT_EQ(live_at(live, 5, StorageRole::kActivation),
            (std::vector<NodeId>{s.relu, s.mm, s.relu1}));
}

TEST(Liveness, PointsWithANewlyAllocatedTensorAreNeverDominated) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4}, DType::f32});
  NodeId a = *g.add(OpId::kRelu, {x});       // 1
  NodeId b = *g.add(OpId::kRelu, {a});       // 2
  NodeId c = *g.add(OpId::kAddTensor, {a, b});  // 3: a and b die here
  NodeId d = *g.add(OpId::kAddTensor, {x, c});  // 4: x and c die here
  g.add_output({d, OutputKind::kLoss});
  Liveness live = analyze_liveness(g);
  // t=3 live {x,a,b,c}; t=4 live {x,c,d}: d is new, so 4 is kept.
  EXPECT_EQ(peak_candidate_points(live), (std::vector<int32_t>{3, 4}));
  Graph h;
  NodeId y = h.add_placeholder("y", PlaceholderKind::kInput, {{4}, DType::f32});
  NodeId p = *h.add(OpId::kRelu, {y});               // 1
  NodeId q = *h.add(OpId::kAddTensor, {p, y});       // 2: nothing dies (y, p used later)
  NodeId r = *h.add(OpId::kAddTensor, {p, q});       // 3: p, q die
  NodeId v = *h.add(OpId::kView, {r}, {{"size", std::vector<int64_t>{4}}});  // 4: aliases r
  NodeId u = *h.add(OpId::kAddTensor, {y, v});       // 5: y and r die
  h.add_output({u, OutputKind::kLoss});
  Liveness hl = analyze_liveness(h);
  // t=3 {y,p,q,r}; t=5 {y,r,u}: u allocated at 5 > 3, kept.
  EXPECT_EQ(peak_candidate_points(hl), (std::vector<int32_t>{3, 5}));
}

}  // namespace
}  // namespace autopar
