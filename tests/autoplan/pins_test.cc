#include <gtest/gtest.h>

#include "plan_fixtures.h"
#include "planner/pins.h"

namespace autopar {
namespace {

TEST(Pins, ParsesOutputAndInputPins) {
  Expected<PinSpec> out = parse_pin("embedding=S(0)R", 2);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->pattern, "embedding");
  EXPECT_EQ(out->input, -1);
  EXPECT_EQ(to_string(out->sharding), "S(0)R");
  Expected<PinSpec> in = parse_pin("mm_3.in1 = RS(1)", 2);
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_EQ(in->pattern, "mm_3");
  EXPECT_EQ(in->input, 1);
}

TEST(Pins, BadPinsSayWhatIsWrong) {
  EXPECT_EQ(parse_pin("embedding", 2).error().message,
            "pin 'embedding' must look like NODE=SHARDING or NODE.in<K>=SHARDING, e.g. "
            "embedding=S(0)R");
  EXPECT_NE(parse_pin("@params=RR", 2).error().message.find("unknown selector '@params'"),
            std::string::npos);
  EXPECT_NE(parse_pin("x=S(0)", 2).error().message.find("pin 'x=S(0)'"), std::string::npos);
}

// Found by fuzz/pins_fuzz.cc: std::stoi threw out_of_range.
TEST(Pins, AnInputIndexBeyondIntIsAnErrorNotAnException) {
  Expected<PinSpec> pin = parse_pin("mm_3.in99999999999=RR", 2);
  ASSERT_FALSE(pin.ok());
  EXPECT_EQ(pin.error().message, "pin 'mm_3.in99999999999=RR': input index 99999999999 is too "
                                 "large (K in NODE.in<K> counts a node's inputs from 0)");
}

TEST(Pins, FileErrorsNameTheLine) {
  Expected<std::vector<PinSpec>> pins = parse_pin_file("# pins\nembedding=RR\n\nbad\n", 2, "c.txt");
  ASSERT_FALSE(pins.ok());
  EXPECT_TRUE(pins.error().message.starts_with("c.txt:4: pin 'bad'")) << pins.error().message;
}

TEST(Pins, PatternMatchingNothingIsAnError) {
  Graph g = testing::model("mlp", 1, 0, 0);
  PlanOptions o = testing::options({2});
  o.pins = {*parse_pin("no_such_node=R", 1)};
  Expected<Plan> p = make_plan(g, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("matches no node"), std::string::npos) << p.error().message;
}

TEST(Pins, ImpossibleShardingListsTheValidOnes) {
  Graph g = testing::model("mlp", 1, 0, 0);
  PlanOptions o = testing::options({2});
  o.pins = {*parse_pin("labels=S(1)", 1)};  // labels are 1-D: no dim 1
  Expected<Plan> p = make_plan(g, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("cannot take S(1)"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("S(0)"), std::string::npos) << p.error().message;
}

TEST(Pins, SelectorsAndParamNameGlobsPinEveryMatch) {
  Graph g = testing::model("mlp", 2, 0, 0);
  PlanOptions o = testing::options({2});
  o.pins = {*parse_pin("@param=R", 1), *parse_pin("layers.*.weight=R", 1)};
  Plan p = testing::plan_or_die(g, o);
  for (NodeId v = 0; v < g.size(); ++v) {
    const Node& n = g.node(v);
    if (n.is_placeholder() && n.kind == PlaceholderKind::kParam) {
      EXPECT_TRUE(p.strategies.nodes[static_cast<size_t>(v)].output(p.choice[static_cast<size_t>(v)], 0).is_replicated());
    }
  }
}

}  // namespace
}  // namespace autopar
