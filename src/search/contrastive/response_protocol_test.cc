#include "search/contrastive/response_protocol.h"

#include <gtest/gtest.h>

namespace kforge::search {
namespace {

TEST(ResponseProtocolTest, SplitsTheThreeSections) {
  const std::string reply =
      "Some preamble.\n"
      "## Performance Analysis:\n"
      "Kernel 2 (score 1.8) fuses the bias add; kernel 1 (score 1.1) does not.\n"
      "\n"
      "## Algorithm Design:\n"
      "1. Fuse bias and activation.\n"
      "2. Use float4 loads.\n"
      "## Code Implementation:\n"
      "First draft:\n"
      "```python\nold = 1\n```\n"
      "Final:\n"
      "```python\nclass ModelNew:\n    pass\n```\n";
  Result<ContrastiveResponse> r = ParseContrastiveResponse(reply);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->analysis, "Kernel 2 (score 1.8) fuses the bias add; kernel 1 (score 1.1) does not.");
  EXPECT_EQ(r->design, "1. Fuse bias and activation.\n2. Use float4 loads.");
  EXPECT_EQ(r->code, "class ModelNew:\n    pass\n");
}

TEST(ResponseProtocolTest, AcceptsBoldHeadingsAndTextOnTheHeadingLine) {
  const std::string reply =
      "**## performance analysis:** the second is faster\r\n"
      "**## Algorithm Design:** tile by 64\r\n"
      "**## Code Implementation:**\r\n"
      "```cuda\r\n__global__ void k() {}\r\n```\r\n";
  Result<ContrastiveResponse> r = ParseContrastiveResponse(reply);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->analysis, "the second is faster");
  EXPECT_EQ(r->design, "tile by 64");
  EXPECT_EQ(r->code, "__global__ void k() {}\n");
}

TEST(ResponseProtocolTest, MissingOrMisorderedSectionsAreBadInput) {
  Result<ContrastiveResponse> none = ParseContrastiveResponse("```\ncode\n```");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::kBadInput);

  // Design before analysis: the design heading after the analysis is missing.
  EXPECT_FALSE(ParseContrastiveResponse("## Algorithm Design\nx\n## Performance Analysis\ny\n"
                                        "## Code Implementation\n```\nz\n```\n")
                   .ok());
  // No fenced block under the code heading.
  Result<ContrastiveResponse> no_code = ParseContrastiveResponse(
      "## Performance Analysis\na\n## Algorithm Design\nb\n## Code Implementation\nplain text\n");
  ASSERT_FALSE(no_code.ok());
  EXPECT_NE(no_code.error().message.find("fenced"), std::string::npos);
  // An unterminated fence is not a block.
  EXPECT_FALSE(ParseContrastiveResponse(
                   "## Performance Analysis\na\n## Algorithm Design\nb\n## Code Implementation\n"
                   "```\nunterminated\n")
                   .ok());
}

TEST(ResponseProtocolTest, ASentenceStartingWithAHeadingNameIsNotAHeading) {
  const std::string reply =
      "## Performance Analysis\n"
      "Algorithm design matters less than memory traffic here.\n"
      "## Algorithm Design\n"
      "plan\n"
      "## Code Implementation\n"
      "```\nx\n```\n";
  Result<ContrastiveResponse> r = ParseContrastiveResponse(reply);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->analysis, "Algorithm design matters less than memory traffic here.");
  EXPECT_EQ(r->design, "plan");
}

}  // namespace
}  // namespace kforge::search
