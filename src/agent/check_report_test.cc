#include "agent/check_report.h"

#include <gtest/gtest.h>

namespace kforge::agent {
namespace {

using nlohmann::json;

json Evaluation() {
  return {{"compiled", true},
          {"compile",
           {{"seconds", 2.5},
            {"log", ""},
            {"resources", json::array({{{"name", "_Z4gelu"},
                                        {"registers", 32},
                                        {"shared_bytes", 0},
                                        {"spill_store_bytes", 0},
                                        {"spill_load_bytes", 0}}})}}},
          {"correct", true},
          {"correctness", {{"trials", 5}, {"max_abs_err", 1e-6}, {"max_rel_err", 2e-6}}},
          {"accepted", true},
          {"timing",
           {{"candidate_ms", {{"median", 0.1}}},
            {"eager_ms", {{"median", 0.5}}},
            {"compile_ms", {{"median", 0.2}}}}},
          {"speedup", {{"eager", 5.0}, {"compile", 2.0}}},
          {"integrity", {{"verdict", "ok"}, {"flags", json::array()}}}};
}

TEST(CheckReportTest, ABuildFailureShowsTheCompilerLogsEnd) {
  json eval = {{"compiled", false},
               {"compile", {{"log", std::string(10000, 'x') + "\nerror: expected ';'"}}},
               {"error", "the extension did not build"}};
  for (CheckKind kind : {CheckKind::kCompile, CheckKind::kVerify, CheckKind::kProfile}) {
    CheckReport r = CheckReportFromEvaluation(kind, eval);
    EXPECT_FALSE(r.ok) << CheckKindName(kind);
    EXPECT_NE(r.summary.find("did not build or load"), std::string::npos);
    EXPECT_NE(r.summary.find("error: expected ';'"), std::string::npos);
    EXPECT_NE(r.summary.find("characters cut"), std::string::npos);
    EXPECT_LT(r.summary.size(), 7000u);
    EXPECT_EQ(r.detail, eval);
  }
}

TEST(CheckReportTest, CompileReportsTheKernelsResources) {
  CheckReport r = CheckReportFromEvaluation(CheckKind::kCompile, Evaluation());
  EXPECT_TRUE(r.ok);
  EXPECT_NE(r.summary.find("built and loaded (2.5 s)"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("_Z4gelu: 32 registers"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("outputs"), std::string::npos);
}

TEST(CheckReportTest, VerifySaysWhatDidNotMatchAndWhichCheckRejected) {
  json eval = Evaluation();
  eval["correct"] = false;
  eval["correctness"]["detail"] = "trial 2: max abs error 0.3 at index 17";
  CheckReport wrong = CheckReportFromEvaluation(CheckKind::kVerify, eval);
  EXPECT_FALSE(wrong.ok);
  EXPECT_NE(wrong.summary.find("outputs do not match the reference: trial 2: max abs error 0.3"),
            std::string::npos);

  eval = Evaluation();
  eval["integrity"] = {{"verdict", "rejected"},
                       {"flags", json::array({{{"check", "torch_compute"},
                                               {"severity", "reject"},
                                               {"detail", "calls torch.matmul"}}})}};
  CheckReport hacked = CheckReportFromEvaluation(CheckKind::kVerify, eval);
  EXPECT_FALSE(hacked.ok);  // correct outputs, but a rule is broken
  EXPECT_NE(hacked.summary.find("outputs match the reference (5 trials"), std::string::npos);
  EXPECT_NE(hacked.summary.find("torch_compute (reject): calls torch.matmul"), std::string::npos);
}

TEST(CheckReportTest, ProfileGivesTimesAndSpeedupsOnlyForAnAcceptedDraft) {
  CheckReport r = CheckReportFromEvaluation(CheckKind::kProfile, Evaluation());
  EXPECT_TRUE(r.ok);
  EXPECT_NE(r.summary.find("candidate 0.1000 ms, eager PyTorch 0.5000 ms, torch.compile 0.2000 ms; "
                           "speedup 5.00x over eager, 2.00x over torch.compile"),
            std::string::npos)
      << r.summary;

  EXPECT_EQ(r.summary.find("Nsight Compute"), std::string::npos);  // none added: none said

  json profiled = Evaluation();
  profiled["agent_profile"] = {{"state", "memory_bound"},
                               {"text", "State `memory_bound`: gelu: memory 89% of peak."}};
  EXPECT_NE(CheckReportFromEvaluation(CheckKind::kProfile, profiled)
                .summary.find("Nsight Compute profile (one call):\nState `memory_bound`: gelu"),
            std::string::npos);
  profiled["agent_profile"] = {{"error", "ncu: ERR_NVGPUCTRPERM"}};
  EXPECT_NE(CheckReportFromEvaluation(CheckKind::kProfile, profiled)
                .summary.find("Nsight Compute: not profiled: ncu: ERR_NVGPUCTRPERM"),
            std::string::npos);
  EXPECT_EQ(CheckReportFromEvaluation(CheckKind::kVerify, profiled).summary.find("Nsight"),
            std::string::npos);

  json eval = Evaluation();
  eval["accepted"] = false;
  eval["integrity"]["verdict"] = "rejected";
  CheckReport no = CheckReportFromEvaluation(CheckKind::kProfile, eval);
  EXPECT_FALSE(no.ok);
  EXPECT_NE(no.summary.find("not accepted (integrity verdict rejected)"), std::string::npos);
  EXPECT_EQ(no.summary.find("5.00x"), std::string::npos);
}

}  // namespace
}  // namespace kforge::agent
