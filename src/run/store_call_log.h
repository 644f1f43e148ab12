// LLM calls recorded in the run's store (llm_calls table), so every call of
// a run is durable before its answer is used, and `--llm replay:RUN_ID`
// replays a run recorded in the same database.
#pragma once

#include <string>
#include <vector>

#include "llm/call_log.h"
#include "store/store.h"

namespace kforge::run {

class StoreCallLog : public llm::LlmCallLog {
 public:
  explicit StoreCallLog(Store& store) : store_(store) {}

  // Durable on return (Store::RecordLlmCall). The run must exist.
  Status Record(const llm::LlmCallRecord& record) override;
  // Ordered by seq; an unknown run has no calls.
  Result<std::vector<llm::LlmCallRecord>> LoadRun(const std::string& run_id) override;

 private:
  Store& store_;
};

// The replay source of a resumed replay run: the recorded run's calls less
// those the resumed run already consumed (matched in order by stage and
// text), so the replay continues where it stopped instead of serving the
// first answers again.
class ReplayRemainder : public llm::LlmCallLog {
 public:
  ReplayRemainder(llm::LlmCallLog& base, std::string resumed_run_id)
      : base_(base), resumed_run_id_(std::move(resumed_run_id)) {}

  Status Record(const llm::LlmCallRecord& record) override { return base_.Record(record); }
  Result<std::vector<llm::LlmCallRecord>> LoadRun(const std::string& run_id) override;

 private:
  llm::LlmCallLog& base_;
  std::string resumed_run_id_;
};

llm::LlmCallRecord CallRecordFromRow(const LlmCallRecordRow& row);
LlmCallRecordRow CallRowFromRecord(const llm::LlmCallRecord& record);

}  // namespace kforge::run
