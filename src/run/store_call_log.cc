#include "run/store_call_log.h"

namespace kforge::run {

llm::LlmCallRecord CallRecordFromRow(const LlmCallRecordRow& row) {
  llm::LlmCallRecord r;
  r.id = row.id;
  r.run_id = row.run_id;
  r.seq = row.seq;
  r.stage = row.stage;
  r.model_spec = row.model_spec;
  r.request_hash = row.request_hash;
  r.request_json = row.request_json;
  r.response_json = row.response_json;
  r.text = row.text;
  r.input_tokens = row.input_tokens;
  r.output_tokens = row.output_tokens;
  r.latency_ms = row.latency_ms;
  r.cost_usd = row.cost_usd;
  r.status = row.status;
  r.error = row.error;
  r.created_at = row.created_at;
  return r;
}

LlmCallRecordRow CallRowFromRecord(const llm::LlmCallRecord& r) {
  LlmCallRecordRow row;
  row.id = r.id;
  row.run_id = r.run_id;
  row.seq = r.seq;
  row.stage = r.stage;
  row.model_spec = r.model_spec;
  row.request_hash = r.request_hash;
  row.request_json = r.request_json;
  row.response_json = r.response_json;
  row.text = r.text;
  row.input_tokens = r.input_tokens;
  row.output_tokens = r.output_tokens;
  row.latency_ms = r.latency_ms;
  row.cost_usd = r.cost_usd;
  row.status = r.status;
  row.error = r.error;
  row.created_at = r.created_at;
  return row;
}

Status StoreCallLog::Record(const llm::LlmCallRecord& record) {
  auto stored = store_.RecordLlmCall(CallRowFromRecord(record));
  if (!stored) return stored.error();
  return Status::Ok();
}

Result<std::vector<llm::LlmCallRecord>> StoreCallLog::LoadRun(const std::string& run_id) {
  auto rows = store_.LlmCallsOfRun(run_id);
  if (!rows) return rows.error();
  std::vector<llm::LlmCallRecord> out;
  out.reserve(rows->size());
  for (const LlmCallRecordRow& row : *rows) out.push_back(CallRecordFromRow(row));
  return out;
}

Result<std::vector<llm::LlmCallRecord>> ReplayRemainder::LoadRun(const std::string& run_id) {
  auto source = base_.LoadRun(run_id);
  if (!source) return source.error();
  if (run_id == resumed_run_id_) return source;
  auto consumed = base_.LoadRun(resumed_run_id_);
  if (!consumed) return consumed.error();
  std::vector<bool> used(source->size(), false);
  for (const llm::LlmCallRecord& c : *consumed) {
    for (size_t i = 0; i < source->size(); ++i) {
      const llm::LlmCallRecord& s = (*source)[i];
      if (!used[i] && s.stage == c.stage && s.text == c.text) {
        used[i] = true;
        break;
      }
    }
  }
  std::vector<llm::LlmCallRecord> rest;
  for (size_t i = 0; i < source->size(); ++i) {
    if (!used[i]) rest.push_back((*source)[i]);
  }
  return rest;
}

}  // namespace kforge::run
