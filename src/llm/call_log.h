// Every LLM call of a run is recorded, so the run can be audited, costed and
// replayed offline (`--llm replay:RUN_ID`). LlmCallLog is the seam: the store
// provides the durable implementation; MemoryCallLog and JsonlCallLog work
// without it (tests, `kforge llm test`, runs before the store exists).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace kforge::llm {

struct LlmCallRecord {
  std::string id;  // 16 hex digits, unique per call
  std::string run_id;
  int64_t seq = 0;  // 1, 2, ... within the run, in the order calls were started
  std::string stage;
  std::string model_spec;     // the spec of the client that answered
  std::string request_hash;   // RequestHash(request): SHA-256 of request_json
  std::string request_json;   // RequestToJson(request).dump()
  std::string response_json;  // ResponseToJson(response).dump(); empty when the call failed
  std::string text;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double latency_ms = 0;
  double cost_usd = 0;
  std::string status;      // "ok" | "failed"
  std::string error;       // "kind: message" when failed
  std::string created_at;  // ISO-8601 UTC

  bool ok() const { return status == "ok"; }
};

nlohmann::json CallRecordToJson(const LlmCallRecord& record);
Result<LlmCallRecord> CallRecordFromJson(const nlohmann::json& json);

class LlmCallLog {
 public:
  virtual ~LlmCallLog() = default;
  // Durable before it returns: a run killed right after a call keeps it.
  virtual Status Record(const LlmCallRecord& record) = 0;
  // Every record of the run, ordered by seq.
  virtual Result<std::vector<LlmCallRecord>> LoadRun(const std::string& run_id) = 0;
};

class MemoryCallLog : public LlmCallLog {
 public:
  Status Record(const LlmCallRecord& record) override;
  Result<std::vector<LlmCallRecord>> LoadRun(const std::string& run_id) override;

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<LlmCallRecord>> runs_;
};

// One JSON object per line, appended and fsync'ed per record. A crash can
// leave at most the last line incomplete; loading skips such a tail, but a
// damaged line anywhere else is an error (the log is not what was written).
class JsonlCallLog : public LlmCallLog {
 public:
  explicit JsonlCallLog(std::filesystem::path path);
  ~JsonlCallLog() override;
  JsonlCallLog(const JsonlCallLog&) = delete;
  JsonlCallLog& operator=(const JsonlCallLog&) = delete;

  Status Record(const LlmCallRecord& record) override;
  Result<std::vector<LlmCallRecord>> LoadRun(const std::string& run_id) override;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::mutex mu_;
  int fd_ = -1;
};

// Fresh call ids and timestamps for records.
std::string NewCallId();
std::string IsoUtcTimestamp();

}  // namespace kforge::llm
