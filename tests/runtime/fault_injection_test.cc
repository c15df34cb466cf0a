// --inject-fault's spec (parsed, printed back, malformed ones refused) and the
// phase record firing a fault once, on its rank, at its phase.
#include "runtime/fault_injection.h"

#include <gtest/gtest.h>

namespace autopar {
namespace {

TEST(PhaseFault, ParsesKindPhaseAndRank) {
  Expected<PhaseFault> fault = parse_phase_fault("kill:collective:3");
  ASSERT_TRUE(fault) << fault.error().message;
  EXPECT_EQ(fault->kind, FaultKind::kKill);
  EXPECT_EQ(fault->phase, JobPhase::kCollective);
  EXPECT_EQ(fault->rank, 3);
}

TEST(PhaseFault, RankDefaultsToZeroAndEveryInjectablePhasePrintsBack) {
  for (int32_t p = 0; p < kInjectablePhases; ++p) {
    const std::string spec = "fail:" + std::string(phase_name(static_cast<JobPhase>(p)));
    Expected<PhaseFault> fault = parse_phase_fault(spec);
    ASSERT_TRUE(fault) << spec << ": " << fault.error().message;
    EXPECT_EQ(to_string(*fault), spec + ":0");
  }
}

TEST(PhaseFault, MalformedSpecsAreUsageErrorsListingThePhases) {
  for (const char* spec : {"", "fail", "crash:startup", "fail:training", "fail:receive", "kill:send:-1",
                           "kill:send:x", "kill:send:1:2"}) {
    Expected<PhaseFault> fault = parse_phase_fault(spec);
    ASSERT_FALSE(fault) << spec;
    EXPECT_EQ(fault.error().kind, ErrorKind::kUsage) << spec;
    EXPECT_NE(fault.error().message.find("startup, shape-inference, first-forward, collective, send, optimizer-step"),
              std::string::npos)
        << fault.error().message;
  }
}

TEST(JobPhases, AFailureFiresOnceOnItsRankAtItsPhase) {
  ASSERT_TRUE(start_job_phases(/*rank=*/1, /*size=*/2, PhaseFault{FaultKind::kFail, JobPhase::kOptimizerStep, 1}));
  EXPECT_TRUE(enter_phase(JobPhase::kFirstForward));
  Status fired = enter_phase(JobPhase::kOptimizerStep);
  ASSERT_FALSE(fired);
  EXPECT_EQ(fired.error().message, "injected failure in phase optimizer-step (--inject-fault fail:optimizer-step:1)");
  EXPECT_TRUE(enter_phase(JobPhase::kOptimizerStep));  // once
}

TEST(JobPhases, AFaultForAnotherRankNeverFires) {
  ASSERT_TRUE(start_job_phases(/*rank=*/0, /*size=*/2, PhaseFault{FaultKind::kFail, JobPhase::kStartup, 1}));
  EXPECT_TRUE(enter_phase(JobPhase::kStartup));
}

TEST(JobPhases, ACollectiveFaultWaitsForTheFirstStep) {
  ASSERT_TRUE(start_job_phases(/*rank=*/0, /*size=*/2, PhaseFault{FaultKind::kFail, JobPhase::kCollective, 0}));
  {
    OperationPhase startup_collective(JobPhase::kCollective);  // e.g. the mesh's communicator split
    EXPECT_TRUE(startup_collective.fault());
  }
  EXPECT_TRUE(enter_phase(JobPhase::kFirstForward));
  OperationPhase first(JobPhase::kCollective);
  EXPECT_FALSE(first.fault());
}

}  // namespace
}  // namespace autopar
