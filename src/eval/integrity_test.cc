#include "eval/integrity.h"

#include <gtest/gtest.h>

#include <set>

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

TEST(IntegrityTest, RuntimeChecksHaveStableSeveritiesPerPolicy) {
  // A side stream is the runtime form of stream_creation: reject under
  // strict, warn under any (the device-wide timing counts it anyway).
  EXPECT_EQ(RuntimeCheckSeverity("side_stream", Policy::kStrict), Severity::kReject);
  EXPECT_EQ(RuntimeCheckSeverity("side_stream", Policy::kAny), Severity::kWarn);
  EXPECT_EQ(RuntimeCheckSeverity("input_distribution_shortcut", Policy::kAny), Severity::kReject);
  EXPECT_EQ(RuntimeCheckSeverity("degenerate_task", Policy::kStrict), Severity::kWarn);
  EXPECT_EQ(RuntimeCheckSeverity("implausible_speedup", Policy::kStrict), Severity::kWarn);
  EXPECT_FALSE(RuntimeCheckSeverity("torch_compute", Policy::kStrict).has_value());
  // No id is both a static and a runtime check, and every runtime id is unique.
  std::set<std::string> seen;
  for (const auto& c : RuntimeChecks()) {
    EXPECT_TRUE(seen.insert(c.id).second) << c.id;
    EXPECT_NE(StaticCheckSeverity(c.id, Policy::kStrict), Severity::kWarn) << c.id;
  }
  EXPECT_GE(seen.size(), 16u);
}

OutputProfile Profile(bool zeros_pass, double near_zero, int64_t nonfinite = 0) {
  OutputProfile p;
  p.numel = 100;
  p.zeros_pass = zeros_pass;
  p.near_zero_fraction = near_zero;
  p.nonfinite = nonfinite;
  return p;
}

TEST(DegeneracyTest, RulesInOrderOfSpecificity) {
  const auto healthy = Profile(false, 0.1);
  EXPECT_FALSE(JudgeDegeneracy({{healthy}, {healthy}, {healthy}}, 0, 1e-4, 1e-4));
  EXPECT_FALSE(JudgeDegeneracy({}, 0, 1e-4, 1e-4));

  auto nan = JudgeDegeneracy({{healthy}, {Profile(false, 0.1, 3)}}, 1, 1e-4, 1e-4);
  ASSERT_TRUE(nan);
  EXPECT_EQ(nan->kind, "nonfinite");

  auto same = JudgeDegeneracy({{healthy}, {healthy}, {healthy}}, 2, 1e-4, 1e-4);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->kind, "insensitive_to_inputs");
  EXPECT_NE(same->reason.find("3 input seeds"), std::string::npos);
  // One seed says nothing about sensitivity to inputs.
  EXPECT_FALSE(JudgeDegeneracy({{healthy}}, 0, 1e-4, 1e-4));

  auto zeros = JudgeDegeneracy({{Profile(true, 1.0)}, {Profile(true, 1.0)}}, 0, 1e-2, 1e-2);
  ASSERT_TRUE(zeros);
  EXPECT_EQ(zeros->kind, "zeros_pass");
  // Every seed must agree: one healthy seed clears the zeros rule.
  EXPECT_FALSE(JudgeDegeneracy({{Profile(true, 1.0)}, {healthy}}, 0, 1e-2, 1e-2));

  auto mostly = JudgeDegeneracy({{Profile(false, 0.995)}, {Profile(false, 0.999)}}, 0, 1e-4, 1e-4);
  ASSERT_TRUE(mostly);
  EXPECT_EQ(mostly->kind, "mostly_zero");
  // A multi-output task: every output of every seed must be mostly zero.
  EXPECT_FALSE(JudgeDegeneracy({{Profile(false, 0.995), healthy}}, 0, 1e-4, 1e-4));
}

TEST(DegeneracyTest, ParsesTheHarnessProfile) {
  auto p = ParseOutputProfile(nlohmann::json{{"numel", 8},
                                             {"nonfinite", 1},
                                             {"near_zero_fraction", 0.5},
                                             {"zeros_pass", true},
                                             {"max_abs", 2.5}});
  EXPECT_EQ(p.numel, 8);
  EXPECT_EQ(p.nonfinite, 1);
  EXPECT_DOUBLE_EQ(p.near_zero_fraction, 0.5);
  EXPECT_TRUE(p.zeros_pass);
  EXPECT_DOUBLE_EQ(p.max_abs, 2.5);
  EXPECT_EQ(ParseOutputProfile(nlohmann::json(nullptr)).numel, 0);
}

TEST(InputVariantTest, UsedOnlyWhereTheReferenceStaysInformative) {
  const auto healthy = Profile(false, 0.1);
  EXPECT_EQ(VariantSkipReason(2, {healthy}, false), "");
  EXPECT_NE(VariantSkipReason(0, {healthy}, false), "");
  EXPECT_NE(VariantSkipReason(1, {Profile(false, 0.1, 5)}, false).find("not finite"),
            std::string::npos);
  EXPECT_NE(VariantSkipReason(1, {Profile(true, 1.0)}, false).find("degenerate"),
            std::string::npos);
  EXPECT_NE(VariantSkipReason(1, {healthy}, true).find("does not change"), std::string::npos);
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
