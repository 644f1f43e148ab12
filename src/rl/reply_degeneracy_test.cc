#include "rl/reply_degeneracy.h"

#include <gtest/gtest.h>

namespace kforge::rl {
namespace {

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

const char* kGoodReply =
    "Fusing the three ops into one pass:\n\n```python\nimport torch\n\nclass ModelNew:\n"
    "    def forward(self, x):\n        return fused(x)\n```\n";

TEST(FindRepetitionLoop, OrdinaryCodeDoesNotLoop) {
  EXPECT_FALSE(FindRepetitionLoop(kGoodReply));
  // Closing braces at one indentation, a ruler line, a short repeated call.
  EXPECT_FALSE(FindRepetitionLoop(Repeat("}\n", 6)));
  EXPECT_FALSE(FindRepetitionLoop("// " + std::string(120, '=') + "\n"));
  EXPECT_FALSE(FindRepetitionLoop(Repeat("  __syncthreads();\n", 3)));
  EXPECT_FALSE(
      FindRepetitionLoop("acc += a[0] * b[0];\nacc += a[1] * b[1];\n"
                         "acc += a[2] * b[2];\nacc += a[3] * b[3];\n"));
}

TEST(FindRepetitionLoop, RepeatedLinesLoop) {
  auto one = FindRepetitionLoop("intro\n" + Repeat("    x = x + 1  # keep on going\n", 4));
  ASSERT_TRUE(one);
  EXPECT_NE(one->find("1 line repeats"), std::string::npos) << *one;
  auto block = FindRepetitionLoop(
      Repeat("Let me reconsider the kernel.\nActually the first version was right.\n", 4));
  ASSERT_TRUE(block);
  EXPECT_NE(block->find("block of 2 lines"), std::string::npos) << *block;
  // Three copies are not yet a loop.
  EXPECT_FALSE(FindRepetitionLoop(Repeat("    x = x + 1  # keep on going\n", 3)));
}

TEST(FindRepetitionLoop, RepeatedTextInOneLineLoops) {
  auto loop = FindRepetitionLoop("We can " + Repeat("optimize the kernel, ", 8));
  ASSERT_TRUE(loop);
  EXPECT_NE(loop->find("unit repeats"), std::string::npos) << *loop;
  EXPECT_FALSE(FindRepetitionLoop("We can " + Repeat("optimize the kernel, ", 7)));
}

TrainingSample Sample(std::string response) {
  TrainingSample s;
  s.response = std::move(response);
  s.finish_reason = "stop";
  return s;
}

TEST(DegenerateReason, NamesEachRule) {
  EXPECT_FALSE(DegenerateReason(Sample(kGoodReply)));
  EXPECT_NE(DegenerateReason(Sample("no code here, sorry"))->find("no closed fenced code block"),
            std::string::npos);
  EXPECT_NE(DegenerateReason(Sample("```python\nunclosed = 1\n"))->find("no closed"),
            std::string::npos);
  TrainingSample cut = Sample(kGoodReply);
  cut.finish_reason = "length";
  EXPECT_NE(DegenerateReason(cut)->find("token limit"), std::string::npos);
  TrainingSample looping = Sample(std::string(kGoodReply) + Repeat("I will now write it.\n", 5));
  EXPECT_NE(DegenerateReason(looping)->find("repetition loop"), std::string::npos);
}

TEST(DegenerateReason, ChecksToolCallsAgainstTheRequest) {
  TrainingSample s = Sample("");
  s.tool_names = {"write_file"};
  s.response_tool_calls = {{"write_file", R"({"path": "k.cu", "text": "..."})"}};
  EXPECT_FALSE(DegenerateReason(s));  // a valid tool call needs no code block
  s.response_tool_calls = {{"run_shell", "{}"}};
  EXPECT_NE(DegenerateReason(s)->find("did not offer"), std::string::npos);
  s.response_tool_calls = {{"write_file", "{\"path\": "}};
  EXPECT_NE(DegenerateReason(s)->find("not a JSON object"), std::string::npos);
  s.response_tool_calls = {{"write_file", "[1]"}};
  EXPECT_NE(DegenerateReason(s)->find("not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace kforge::rl
