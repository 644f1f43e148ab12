#include "kb/textual_gradient.h"

#include <gtest/gtest.h>

#include "kb/kb_store.h"
#include "kb/performance_state.h"
#include "llm/json_schema.h"

namespace kforge::kb {
namespace {

using nlohmann::json;

AppliedStep FusionStep() {
  AppliedStep s;
  s.state = kMemoryBound;
  s.technique = "kernel_fusion";
  s.predicted_gain = 1.197;
  s.accepted = true;
  s.speedup = 1.42;
  s.outcome = "accepted, verdict ok; candidate 0.61 ms, parent 0.87 ms";
  s.profile_before = "8 kernels, each memory 88%";
  s.profile_after = "1 kernel, memory 91%";
  return s;
}

KnowledgeBase Default() {
  return DefaultKnowledgeBase("sm_90").value();
}

TEST(TextualGradient, SchemasAreSupportedAndAcceptTheirExamples) {
  for (const json& schema :
       {PolicyEvaluationSchema(), PerfGapAnalysisSchema(), ParameterUpdateSchema()}) {
    EXPECT_TRUE(llm::CheckSchema(schema).ok()) << schema.dump();
  }
  json eval = {{"verdict", "better"},
               {"expected", "1.20x"},
               {"achieved", "1.42x"},
               {"evidence", "8 kernels became 1"}};
  EXPECT_TRUE(llm::ValidateAgainstSchema(eval, PolicyEvaluationSchema()).empty());
  json bad_eval = eval;
  bad_eval["verdict"] = "great";
  EXPECT_FALSE(llm::ValidateAgainstSchema(bad_eval, PolicyEvaluationSchema()).empty());
  json gap = {{"explanation", "fusion removed 7 round trips"},
              {"causes", {"DRAM traffic /8"}},
              {"state_after", "memory_bound"}};
  EXPECT_TRUE(llm::ValidateAgainstSchema(gap, PerfGapAnalysisSchema()).empty());
  json update = {{"notes", "works on chains of elementwise ops"},
                 {"description", ""},
                 {"new_state", nullptr},
                 {"new_techniques", json::array()}};
  EXPECT_TRUE(llm::ValidateAgainstSchema(update, ParameterUpdateSchema()).empty());
  update["new_state"] = {{"name", "l2_thrashing"}, {"description", "d"}, {"signature", "s"}};
  EXPECT_TRUE(llm::ValidateAgainstSchema(update, ParameterUpdateSchema()).empty());
  update["new_techniques"] = json::array({json{{"technique", "a"}, {"description", "d"}},
                                          json{{"technique", "b"}, {"description", "d"}},
                                          json{{"technique", "c"}, {"description", "d"}},
                                          json{{"technique", "e"}, {"description", "d"}}});
  EXPECT_FALSE(llm::ValidateAgainstSchema(update, ParameterUpdateSchema()).empty());
}

TEST(TextualGradient, PromptsCarryTheExpectationTheMeasurementAndEarlierStages) {
  KnowledgeBase kb = Default();
  AppliedStep s = FusionStep();
  std::string p1 = PolicyEvaluationPrompt(kb, s);
  EXPECT_NE(p1.find("kernel_fusion"), std::string::npos);
  EXPECT_NE(p1.find("1.197x"), std::string::npos);
  EXPECT_NE(p1.find("1.420x"), std::string::npos);
  EXPECT_NE(p1.find("8 kernels, each memory 88%"), std::string::npos);
  EXPECT_NE(p1.find("1 kernel, memory 91%"), std::string::npos);
  json eval = {{"verdict", "better"}, {"expected", "x"}, {"achieved", "y"}, {"evidence", "z"}};
  std::string p2 = PerfGapAnalysisPrompt(kb, s, eval);
  EXPECT_NE(p2.find("\"verdict\": \"better\""), std::string::npos);
  json gap = {{"explanation", "fewer passes over DRAM"},
              {"causes", json::array()},
              {"state_after", "memory_bound"}};
  std::string p3 = ParameterUpdatePrompt(kb, s, eval, gap);
  EXPECT_NE(p3.find("fewer passes over DRAM"), std::string::npos);
  EXPECT_NE(p3.find("\"verdict\": \"better\""), std::string::npos);
  s.accepted = false;
  EXPECT_NE(PolicyEvaluationPrompt(kb, s).find("not accepted"), std::string::npos);
}

TEST(TextualGradient, ParameterUpdateRewritesTheEntryAndAddsDiscoveries) {
  KnowledgeBase kb = Default();
  AppliedStep s = FusionStep();
  const double gain_before = kb.Find(s.state, s.technique)->PredictedGain();
  json reply = {{"notes", "Pays off on chains of 3+ elementwise kernels; not across reductions."},
                {"description", "Fuse chains of elementwise ops into one pass."},
                {"new_state",
                 {{"name", "l2_thrashing"},
                  {"description", "L2 hit rate collapses"},
                  {"signature", "L2 hit rate < 20% with DRAM > 70%"}}},
                {"new_techniques",
                 {{{"technique", "epilogue_fusion"},
                   {"description", "Fold the activation into the GEMM epilogue."}},
                  {{"technique", "kernel_fusion"}, {"description", "dup"}}}}};
  auto changed = ApplyParameterUpdate(kb, s, reply);
  ASSERT_TRUE(changed.ok()) << changed.error().message;
  const Optimization* o = kb.Find(s.state, s.technique);
  EXPECT_EQ(o->notes, reply["notes"]);
  EXPECT_EQ(o->description, reply["description"]);
  // Text only: the statistics are the numeric update's business.
  EXPECT_DOUBLE_EQ(o->PredictedGain(), gain_before);
  EXPECT_EQ(kb.states().at("l2_thrashing").signature, "L2 hit rate < 20% with DRAM > 70%");
  const Optimization* added = kb.Find(s.state, "epilogue_fusion");
  ASSERT_TRUE(added);
  EXPECT_DOUBLE_EQ(added->PredictedGain(), 1.0);  // neutral prior
  EXPECT_EQ((*changed)["new_state"], "l2_thrashing");
  EXPECT_EQ((*changed)["new_techniques"], json::array({"epilogue_fusion"}));
  // An empty description keeps the old one.
  json keep = {{"notes", "n2"},
               {"description", ""},
               {"new_state", nullptr},
               {"new_techniques", json::array()}};
  ASSERT_TRUE(ApplyParameterUpdate(kb, s, keep).ok());
  EXPECT_EQ(kb.Find(s.state, s.technique)->description, reply["description"]);
  EXPECT_EQ(kb.Find(s.state, s.technique)->notes, "n2");
}

TEST(TextualGradient, AnEntryNotInTheBaseIsNotFound) {
  KnowledgeBase kb = Default();
  AppliedStep s = FusionStep();
  s.technique = "no_such_technique";
  auto r = ApplyParameterUpdate(kb, s, {{"notes", "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
}

}  // namespace
}  // namespace kforge::kb
