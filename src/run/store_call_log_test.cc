#include "run/store_call_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"
#include "llm/replay_client.h"

namespace kforge::run {
namespace {

namespace fs = std::filesystem;

llm::LlmCallRecord Call(const std::string& run, int64_t seq, const std::string& stage,
                        const std::string& text) {
  llm::LlmCallRecord r;
  r.id = llm::NewCallId();
  r.run_id = run;
  r.seq = seq;
  r.stage = stage;
  r.model_spec = "openai:m";
  r.request_json = "{}";
  r.request_hash = "h" + std::to_string(seq);
  r.response_json = "{\"text\":\"" + text + "\"}";
  r.text = text;
  r.input_tokens = 10 * seq;
  r.output_tokens = seq;
  r.cost_usd = 0.5;
  r.status = "ok";
  r.created_at = llm::IsoUtcTimestamp();
  return r;
}

TEST(StoreCallLogTest, RecordsDurablyAndReplaysInSeqOrderAcrossRuns) {
  auto dir = MakeTempDir(fs::temp_directory_path(), "kforge-calllog-test-");
  ASSERT_TRUE(dir.ok());
  {
    auto store = OpenStore((*dir / "k.db").string());
    ASSERT_TRUE(store.ok());
    RunRecord a;
    a.id = "run-a";
    RunRecord b;
    b.id = "run-b";
    ASSERT_TRUE((*store)->CreateRun(a).ok());
    ASSERT_TRUE((*store)->CreateRun(b).ok());
    StoreCallLog log(**store);
    ASSERT_TRUE(log.Record(Call("run-a", 2, "refine", "two")).ok());
    ASSERT_TRUE(log.Record(Call("run-a", 1, "refine", "one")).ok());
    ASSERT_TRUE(log.Record(Call("run-a", 3, "refine", "three")).ok());
    EXPECT_FALSE(log.Record(Call("run-a", 3, "refine", "again")).ok());  // seq reused
    auto loaded = log.LoadRun("run-a");
    ASSERT_TRUE(loaded.ok());
    ASSERT_EQ(loaded->size(), 3u);
    EXPECT_EQ((*loaded)[0].text, "one");
    EXPECT_EQ((*loaded)[2].text, "three");
    EXPECT_EQ((*loaded)[1].input_tokens, 20);
    EXPECT_DOUBLE_EQ((*loaded)[1].cost_usd, 0.5);
    EXPECT_TRUE(log.LoadRun("no-such-run")->empty());
    auto usage = (*store)->LlmUsageOfRun("run-a");
    EXPECT_EQ(usage->calls, 3);

    // run-b replayed run-a's first answer before it was stopped: a resumed
    // replay continues with the rest.
    ASSERT_TRUE(log.Record(Call("run-b", 1, "refine", "one")).ok());
    ReplayRemainder rest(log, "run-b");
    auto remaining = rest.LoadRun("run-a");
    ASSERT_TRUE(remaining.ok());
    ASSERT_EQ(remaining->size(), 2u);
    EXPECT_EQ((*remaining)[0].text, "two");
    EXPECT_EQ(rest.LoadRun("run-b")->size(), 1u);
  }
  fs::remove_all(*dir);
}

// The optimize loop replays in order: a request whose hash happens to equal
// a later record's must still get the next answer of its stage.
TEST(ReplayInOrderTest, ServesEachStageInRecordedOrderWhateverTheHash) {
  std::vector<llm::LlmCallRecord> records;
  for (int i = 1; i <= 3; ++i) {
    llm::LlmCallRecord r = Call("rec", i, "refine", "answer " + std::to_string(i));
    llm::LlmResponse response;
    response.text = r.text;
    response.model = "m";
    r.response_json = llm::DumpJson(llm::ResponseToJson(response));
    records.push_back(r);
  }
  llm::LlmRequest request;
  request.stage = "refine";
  request.messages.push_back(llm::ChatMessage::User("the same prompt every time"));
  records[2].request_hash = llm::RequestHash(request);  // the third call's hash matches

  llm::ReplayClient by_hash("rec", records, /*strict=*/false);
  EXPECT_EQ(by_hash.Complete(request)->text, "answer 3");
  llm::ReplayClient in_order("rec", records, /*strict=*/true, /*in_order=*/true);
  EXPECT_EQ(in_order.Complete(request)->text, "answer 1");
  EXPECT_EQ(in_order.Complete(request)->text, "answer 2");
  EXPECT_EQ(in_order.Complete(request)->text, "answer 3");
  auto exhausted = in_order.Complete(request);
  ASSERT_FALSE(exhausted.ok());
  EXPECT_EQ(exhausted.error().kind, llm::LlmErrorKind::kReplayExhausted);
}

}  // namespace
}  // namespace kforge::run
