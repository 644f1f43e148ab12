#include "serve/evaluate_request.h"

#include <gtest/gtest.h>

namespace kforge::serve {
namespace {

TEST(ParseEvaluateRequest, ReadsEveryField) {
  auto r = ParseEvaluateRequest(
      R"({"task": "T", "candidate": "C", "format": "native", "policy": "any",
          "task_name": "23_Softmax"})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->task_source, "T");
  EXPECT_EQ(r->candidate_source, "C");
  EXPECT_EQ(r->format, CandidateFormat::kNative);
  EXPECT_EQ(r->policy, Policy::kAny);
  EXPECT_EQ(r->task_name, "23_Softmax");
}

TEST(ParseEvaluateRequest, DefaultsLikeKforgeEval) {
  auto r = ParseEvaluateRequest(R"({"task": "T", "candidate": "C"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->format, CandidateFormat::kKernelBench);
  EXPECT_EQ(r->policy, Policy::kStrict);
  EXPECT_EQ(r->task_name, "task");
}

TEST(ParseEvaluateRequest, RefusesBadBodiesWithOneLine) {
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"", "not valid JSON"},
           {"{\"task\": ", "not valid JSON"},
           {"[1, 2]", "must be a JSON object, not array"},
           {"\"x\"", "must be a JSON object, not string"},
           {R"({"candidate": "C"})", "missing field 'task'"},
           {R"({"task": "T"})", "missing field 'candidate'"},
           {R"({"task": 3, "candidate": "C"})", "'task' must be a string, not number"},
           {R"({"task": "T", "candidate": null})", "'candidate' must be a string, not null"},
           {R"({"task": "", "candidate": "C"})", "'task' is empty"},
           {R"({"task": "T", "candidate": "C", "format": "cuda"})", "kernelbench, native or cpp"},
           {R"({"task": "T", "candidate": "C", "format": 1})", "'format' must be a string"},
           {R"({"task": "T", "candidate": "C", "policy": "lenient"})", "strict or any"},
           {R"({"task": "T", "candidate": "C", "polcy": "any"})", "unknown field 'polcy'"},
           {R"({"task": "T", "candidate": "C", "task_name": "../etc/passwd"})", "task_name"},
           {R"({"task": "T", "candidate": "C", "task_name": ".hidden"})", "task_name"},
           {R"({"task": "T", "candidate": "C", "task_name": ""})", "task_name"},
       }) {
    auto r = ParseEvaluateRequest(c.body);
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
    EXPECT_NE(r.error().message.find(c.says), std::string::npos)
        << c.body << " -> " << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  }
}

TEST(ParseEvaluateRequest, RefusesInvalidUtf8) {
  std::string body = "{\"task\": \"a\xff\", \"candidate\": \"C\"}";
  EXPECT_FALSE(ParseEvaluateRequest(body));
}

}  // namespace
}  // namespace kforge::serve
