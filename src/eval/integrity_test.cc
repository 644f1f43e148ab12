#include "eval/integrity.h"

#include <gtest/gtest.h>

#include "eval/eval_result.h"

namespace kforge {
namespace {

TEST(IntegrityTest, VerdictCombination) {
  EXPECT_EQ(CombineVerdict({}), Verdict::kOk);
  EXPECT_EQ(CombineVerdict({{"side_stream", Severity::kWarn, ""}}), Verdict::kSuspect);
  EXPECT_EQ(CombineVerdict(
                {{"side_stream", Severity::kWarn, ""}, {"timer_patched", Severity::kReject, ""}}),
            Verdict::kRejected);
}

TEST(IntegrityTest, PolicyMapsStaticChecks) {
  EXPECT_EQ(StaticCheckSeverity("torch_compute", Policy::kStrict), Severity::kReject);
  EXPECT_TRUE(StaticCheckAllowed("torch_compute", Policy::kAny));
  EXPECT_FALSE(StaticCheckAllowed("torch_compute", Policy::kStrict));
  EXPECT_EQ(StaticCheckSeverity("monkey_patch", Policy::kAny), Severity::kReject);
  EXPECT_EQ(StaticCheckSeverity("precision_downcast", Policy::kStrict), Severity::kWarn);
  // A check id this build does not know rejects rather than passing silently.
  EXPECT_EQ(StaticCheckSeverity("some_future_check", Policy::kAny), Severity::kReject);
}

TEST(MilestoneTest, FollowsCudaAgentScheme) {
  EXPECT_EQ(MilestoneReward(false, 3.0, 3.0), -1);
  EXPECT_EQ(MilestoneReward(true, 1.06, 1.06), 3);
  EXPECT_EQ(MilestoneReward(true, 1.06, 1.04), 2);
  EXPECT_EQ(MilestoneReward(true, 1.05, 1.2), 1);  // "more than 5%" is strict
  EXPECT_EQ(MilestoneReward(true, 0.5, std::nullopt), 1);
  EXPECT_EQ(MilestoneReward(true, 2.0, std::nullopt), 2);
}

TEST(EvalResultTest, JsonHasContractFieldsAndNullsWhenNotAccepted) {
  EvalResult r;
  r.task_name = "t";
  r.compiled = true;
  r.correct = false;
  r.flags.push_back({"inputs_mutated", Severity::kReject, "x"});
  auto j = r.ToJson();
  for (const char* key :
       {"kforge_version", "task", "candidate", "device", "policy", "compiled", "compile", "correct",
        "correctness", "timing", "speedup", "sol", "integrity", "accepted", "reward", "error"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["integrity"]["verdict"], "rejected");
  EXPECT_EQ(j["integrity"]["flags"][0]["check"], "inputs_mutated");
  EXPECT_EQ(j["integrity"]["flags"][0]["severity"], "reject");
  EXPECT_TRUE(j["speedup"]["eager"].is_null());
  EXPECT_TRUE(j["timing"]["candidate_ms"].is_null());
  EXPECT_TRUE(j["task"]["degenerate_reason"].is_null());
}

}  // namespace
}  // namespace kforge
