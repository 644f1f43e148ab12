#include "llm/call_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kforge::llm {
namespace {

namespace fs = std::filesystem;

LlmCallRecord MakeRecord(const std::string& run, int64_t seq, const std::string& text) {
  LlmCallRecord r;
  r.id = NewCallId();
  r.run_id = run;
  r.seq = seq;
  r.stage = "propose";
  r.model_spec = "openai:m@http://x/v1";
  r.request_json = R"({"messages":[]})";
  r.request_hash = "abc";
  r.response_json = R"({"text":")" + text + R"("})";
  r.text = text;
  r.input_tokens = 10 * seq;
  r.output_tokens = seq;
  r.latency_ms = 12.5;
  r.cost_usd = 0.001;
  r.status = "ok";
  r.created_at = IsoUtcTimestamp();
  return r;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("kforge-llm-log-" + NewCallId());
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void ExpectSame(const LlmCallRecord& a, const LlmCallRecord& b) {
  EXPECT_EQ(CallRecordToJson(a), CallRecordToJson(b));
}

TEST(CallLog, JsonRoundTripKeepsEveryField) {
  LlmCallRecord r = MakeRecord("run", 3, "hé \"quoted\"\n");
  r.status = "failed";
  r.error = "timeout: slow";
  auto back = CallRecordFromJson(CallRecordToJson(r));
  ASSERT_TRUE(back.ok());
  ExpectSame(r, *back);
  EXPECT_FALSE(back->ok());
  EXPECT_FALSE(CallRecordFromJson(nlohmann::json{{"seq", 1}}).ok());
}

TEST(CallLog, MemoryLogKeepsRunsApartAndOrdersBySeq) {
  MemoryCallLog log;
  ASSERT_TRUE(log.Record(MakeRecord("a", 2, "two")).ok());
  ASSERT_TRUE(log.Record(MakeRecord("b", 1, "other")).ok());
  ASSERT_TRUE(log.Record(MakeRecord("a", 1, "one")).ok());
  auto a = log.LoadRun("a");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].text, "one");
  EXPECT_EQ((*a)[1].text, "two");
  EXPECT_TRUE(log.LoadRun("none")->empty());
}

TEST(CallLog, JsonlLogSurvivesReopening) {
  TempDir dir;
  fs::path path = dir.path() / "sub" / "calls.jsonl";
  std::vector<LlmCallRecord> written = {MakeRecord("r1", 1, "a"), MakeRecord("r2", 1, "x"),
                                        MakeRecord("r1", 2, "b")};
  {
    JsonlCallLog log(path);
    for (const auto& r : written) ASSERT_TRUE(log.Record(r).ok());
  }
  JsonlCallLog reopened(path);
  auto r1 = reopened.LoadRun("r1");
  ASSERT_TRUE(r1.ok()) << r1.error().message;
  ASSERT_EQ(r1->size(), 2u);
  ExpectSame((*r1)[0], written[0]);
  ExpectSame((*r1)[1], written[2]);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::others_read, fs::perms::none);
  EXPECT_TRUE(JsonlCallLog(dir.path() / "missing.jsonl").LoadRun("r1")->empty());
}

TEST(CallLog, JsonlLogSkipsAndRepairsATailCutByACrash) {
  TempDir dir;
  fs::path path = dir.path() / "calls.jsonl";
  {
    JsonlCallLog log(path);
    ASSERT_TRUE(log.Record(MakeRecord("r", 1, "a")).ok());
  }
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"run_id": "r", "seq": 2, "te)";  // a write cut short
  }
  JsonlCallLog log(path);
  auto before = log.LoadRun("r");
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(before->size(), 1u);
  // The next append must not glue itself onto the cut line.
  ASSERT_TRUE(log.Record(MakeRecord("r", 2, "b")).ok());
  auto after = log.LoadRun("r");
  ASSERT_TRUE(after.ok()) << after.error().message;
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ((*after)[1].text, "b");
}

TEST(CallLog, JsonlLogRefusesDamageInTheMiddle) {
  TempDir dir;
  fs::path path = dir.path() / "calls.jsonl";
  {
    std::ofstream out(path);
    out << CallRecordToJson(MakeRecord("r", 1, "a")).dump() << "\n";
    out << "garbage\n";
    out << CallRecordToJson(MakeRecord("r", 2, "b")).dump() << "\n";
  }
  auto r = JsonlCallLog(path).LoadRun("r");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("line 2"), std::string::npos);
}

TEST(CallLog, InvalidUtf8NeverMakesRecordingThrow) {
  TempDir dir;
  JsonlCallLog log(dir.path() / "calls.jsonl");
  LlmCallRecord r = MakeRecord("r", 1, "ok");
  r.text = "compiler said \xff\xfe here";
  r.request_json = "{\"messages\": \"\xc3\"}";
  ASSERT_TRUE(log.Record(r).ok());
  auto back = log.LoadRun("r");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].text, "compiler said \xEF\xBF\xBD\xEF\xBF\xBD here");  // U+FFFD
}

TEST(CallLog, IdsAndTimestampsLookRight) {
  EXPECT_NE(NewCallId(), NewCallId());
  EXPECT_EQ(NewCallId().size(), 16u);
  std::string ts = IsoUtcTimestamp();
  EXPECT_EQ(ts.size(), 27u);
  EXPECT_EQ(ts.back(), 'Z');
  EXPECT_EQ(ts[10], 'T');
}

}  // namespace
}  // namespace kforge::llm
