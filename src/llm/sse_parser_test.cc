#include "llm/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kforge::llm {
namespace {

std::vector<SseEvent> ParseAll(const std::vector<std::string>& pieces, bool* cut = nullptr) {
  SseParser parser;
  std::vector<SseEvent> events;
  for (const std::string& p : pieces) {
    parser.Feed(p, [&](const SseEvent& e) { events.push_back(e); });
  }
  bool was_cut = parser.Finish();
  if (cut != nullptr) *cut = was_cut;
  return events;
}

TEST(SseParser, SplitsEventsOnBlankLines) {
  auto events = ParseAll({"data: one\n\ndata: two\n\n"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "one");
  EXPECT_EQ(events[1].data, "two");
  EXPECT_EQ(events[0].event, "");
}

TEST(SseParser, ReadsEventNameIdAndJoinsDataLines) {
  auto events = ParseAll({"event: message_start\nid: 7\ndata: a\ndata: b\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "message_start");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].data, "a\nb");
}

TEST(SseParser, IgnoresCommentsRetryAndUnknownFields) {
  auto events = ParseAll({": keep-alive\nretry: 100\nfoo: bar\ndata: x\n\n: ping\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(SseParser, KeepsOnlyOneLeadingSpaceOfAValue) {
  auto events = ParseAll({"data:no-space\n\ndata:  two-spaces\n\ndata\n\n"});
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "no-space");
  EXPECT_EQ(events[1].data, " two-spaces");
  EXPECT_EQ(events[2].data, "");  // a bare "data" field is an empty value
}

TEST(SseParser, EventWithoutDataIsNotDispatched) {
  auto events = ParseAll({"event: ping\n\ndata: real\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "real");
  EXPECT_EQ(events[0].event, "");  // the name does not leak into the next event
}

TEST(SseParser, AcceptsCrLfAndCrLineEndings) {
  auto crlf = ParseAll({"event: e\r\ndata: a\r\n\r\ndata: b\r\n\r\n"});
  ASSERT_EQ(crlf.size(), 2u);
  EXPECT_EQ(crlf[0].event, "e");
  EXPECT_EQ(crlf[0].data, "a");
  EXPECT_EQ(crlf[1].data, "b");
  auto cr = ParseAll({"data: a\r\rdata: b\r\r"});
  ASSERT_EQ(cr.size(), 2u);
  EXPECT_EQ(cr[1].data, "b");
}

TEST(SseParser, SameEventsWhateverTheSplit) {
  const std::string stream =
      "\xEF\xBB\xBF"
      "event: a\r\ndata: {\"x\": 1}\r\n\r\n: c\n\ndata: line1\ndata: line2\n\nevent: b\rdata: "
      "z\r\r";
  auto whole = ParseAll({stream});
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole[0].event, "a");
  EXPECT_EQ(whole[0].data, "{\"x\": 1}");
  EXPECT_EQ(whole[1].data, "line1\nline2");
  EXPECT_EQ(whole[2].event, "b");
  // Every two-way split, and byte by byte.
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    auto split = ParseAll({stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(split.size(), whole.size()) << "split at " << cut;
    for (size_t i = 0; i < whole.size(); ++i) {
      EXPECT_EQ(split[i].data, whole[i].data) << "split at " << cut;
      EXPECT_EQ(split[i].event, whole[i].event) << "split at " << cut;
    }
  }
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  auto bytewise = ParseAll(bytes);
  ASSERT_EQ(bytewise.size(), whole.size());
  EXPECT_EQ(bytewise[1].data, "line1\nline2");
}

TEST(SseParser, StripsByteOrderMarkOnlyAtTheStart) {
  auto events = ParseAll({"\xEF\xBB",
                          "\xBF"
                          "data: x\n\n"});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(SseParser, FinishReportsAnUnterminatedEvent) {
  bool cut = false;
  auto events = ParseAll({"data: whole\n\ndata: half"}, &cut);
  ASSERT_EQ(events.size(), 1u);  // the half event is discarded, as the spec says
  EXPECT_TRUE(cut);
  auto complete = ParseAll({"data: whole\n\n"}, &cut);
  EXPECT_FALSE(cut);
  ParseAll({"data: whole\n\ndata: done\n"}, &cut);  // fields seen, no blank line
  EXPECT_TRUE(cut);
}

}  // namespace
}  // namespace kforge::llm
