#include "llm/reply_parsing.h"

#include <gtest/gtest.h>

namespace kforge::llm {
namespace {

TEST(ExtractLastCodeBlock, TakesTheLastBlockOfAPreferredLanguage) {
  std::string text =
      "Analysis...\n```python\nold = 1\n```\nDesign.\n```cuda\n__global__ void k() {}\n```\n"
      "And a usage example:\n```bash\nnvcc k.cu\n```\n";
  auto block = ExtractLastCodeBlock(text, {"python", "cuda"});
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->lang, "cuda");
  EXPECT_EQ(block->code, "__global__ void k() {}\n");
  auto any = ExtractLastCodeBlock(text, {"rust"});
  ASSERT_TRUE(any.has_value());
  EXPECT_EQ(any->lang, "bash");  // no preferred language: the last block
}

TEST(ExtractLastCodeBlock, HandlesFenceVariants) {
  // Longer fences may contain shorter ones; tildes; info strings with
  // attributes; CRLF; an unlabelled block.
  std::string text =
      "````markdown\n```python\ninner\n```\n````\r\n~~~ Python {.numberLines}\r\nx = 2\r\n~~~\r\n";
  auto blocks = ExtractCodeBlocks(text);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].lang, "markdown");
  EXPECT_EQ(blocks[0].code, "```python\ninner\n```\n");
  EXPECT_EQ(blocks[1].lang, "python");
  EXPECT_EQ(blocks[1].code, "x = 2\n");
  auto plain = ExtractLastCodeBlock("```\nplain\n```", {"cpp"});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->lang, "");
  EXPECT_EQ(plain->code, "plain\n");
  EXPECT_EQ(ExtractCodeBlocks("```\n\n```")[0].code, "\n");
}

TEST(ExtractLastCodeBlock, IgnoresAnUnclosedFinalFenceAndInlineCode) {
  std::string cut = "```python\ngood = 1\n```\nMore:\n```python\nhalf = (";
  auto block = ExtractLastCodeBlock(cut, {"python"});
  ASSERT_TRUE(block.has_value());
  EXPECT_EQ(block->code, "good = 1\n");
  EXPECT_FALSE(ExtractLastCodeBlock("```python\nnever closed", {"python"}).has_value());
  EXPECT_FALSE(ExtractLastCodeBlock("use ```x``` inline", {}).has_value());
  EXPECT_FALSE(ExtractLastCodeBlock("no code at all", {}).has_value());
}

TEST(ParseJsonReply, FindsTheJsonInWhatModelsSend) {
  EXPECT_EQ(*ParseJsonReply(R"({"a": 1})"), nlohmann::json({{"a", 1}}));
  EXPECT_EQ(*ParseJsonReply("  [1, 2]\n"), nlohmann::json({1, 2}));
  EXPECT_EQ(*ParseJsonReply("Sure:\n```json\n{\"a\": 2}\n```\nDone."), nlohmann::json({{"a", 2}}));
  EXPECT_EQ(*ParseJsonReply("The answer is {\"a\": {\"b\": 3}} as asked."),
            nlohmann::json({{"a", {{"b", 3}}}}));
  EXPECT_FALSE(ParseJsonReply("{\"a\": ").has_value());
  EXPECT_FALSE(ParseJsonReply("no json here").has_value());
  EXPECT_FALSE(ParseJsonReply("").has_value());
}

}  // namespace
}  // namespace kforge::llm
