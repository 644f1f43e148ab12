#include "store/records.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace kforge {
namespace {

TEST(RecordsTest, TimestampsAreFixedWidthUtcAndSortAsText) {
  std::regex iso(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)");
  std::string a = IsoUtcNow();
  std::string b = IsoUtcNow();
  EXPECT_TRUE(std::regex_match(a, iso)) << a;
  EXPECT_LE(a, b);
  auto epoch = std::chrono::system_clock::time_point{};
  EXPECT_EQ(IsoUtc(epoch), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(IsoUtc(epoch + std::chrono::microseconds(86400000001)), "1970-01-02T00:00:00.000001Z");
}

TEST(RecordsTest, IdsAreRandomHexAndRunIdsStartWithTheDate) {
  std::set<std::string> ids;
  for (int i = 0; i < 100; ++i) ids.insert(RandomHexId());
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_TRUE(std::regex_match(*ids.begin(), std::regex("[0-9a-f]{16}")));
  std::string run = NewRunId();
  EXPECT_TRUE(std::regex_match(run, std::regex(R"(\d{8}-\d{6}-[0-9a-f]{6})"))) << run;
  EXPECT_EQ(run.substr(0, 4), IsoUtcNow().substr(0, 4));
}

TEST(RecordsTest, StatusNamesRoundTrip) {
  for (RunStatus s : {RunStatus::kCreated, RunStatus::kRunning, RunStatus::kCompleted,
                      RunStatus::kStopped, RunStatus::kFailed}) {
    auto parsed = ParseRunStatus(RunStatusName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ(RunStatusName(RunStatus::kCompleted), "completed");
  EXPECT_EQ(IdeaStatusName(IdeaStatus::kPruned), "pruned");
  EXPECT_EQ(JobStateName(JobState::kLeased), "leased");
  EXPECT_EQ(*ParseIdeaStatus("rejected"), IdeaStatus::kRejected);
  EXPECT_EQ(*ParseJobState("done"), JobState::kDone);
  auto bad = ParseRunStatus("finished");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().message.find("finished"), std::string::npos);
}

}  // namespace
}  // namespace kforge
