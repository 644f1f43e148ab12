#include "llm/replay_client.h"

#include "llm/model_spec.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace kforge::llm {

ReplayClient::ReplayClient(std::string run_id, std::vector<LlmCallRecord> records, bool strict,
                           bool in_order)
    : run_id_(std::move(run_id)),
      records_(std::move(records)),
      served_(records_.size(), false),
      strict_(strict && !in_order),
      in_order_(in_order) {}

std::string ReplayClient::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < records_.size(); ++i) {
    if (served_[i]) continue;
    auto spec = ParseModelSpec(records_[i].model_spec);
    if (spec && spec->provider != Provider::kReplay) return spec->model;
    break;
  }
  return spec();
}

size_t ReplayClient::remaining() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (bool s : served_) n += s ? 0 : 1;
  return n;
}

LlmResult<LlmResponse> ReplayClient::Complete(const LlmRequest& request,
                                              const TextDeltaFn& on_text) {
  std::string hash = RequestHash(request);
  const LlmCallRecord* record = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t next = records_.size();
    size_t match = records_.size();
    for (size_t i = 0; i < records_.size(); ++i) {
      if (served_[i]) continue;
      if (next == records_.size()) next = i;
      if (!in_order_ && records_[i].request_hash == hash) {
        match = i;
        break;
      }
    }
    if (match < records_.size()) record = &records_[match];
    if (next == records_.size()) {
      return LlmError::Make(
          LlmErrorKind::kReplayExhausted,
          fmt::format("replay of run {} has no recorded calls left ({} were recorded); "
                      "stage '{}' asked for one more",
                      run_id_, records_.size(), request.stage));
    }
    if (record != nullptr && record->stage != request.stage) {
      return LlmError::Make(
          LlmErrorKind::kReplayDivergence,
          fmt::format("replay of run {} diverged: call #{} with this request was recorded for "
                      "stage '{}', now asked by stage '{}'",
                      run_id_, record->seq, record->stage, request.stage));
    }
    if (record != nullptr) served_[match] = true;
    if (record == nullptr) {
      const LlmCallRecord& expected = records_[next];
      if (strict_) {
        return LlmError::Make(
            LlmErrorKind::kReplayDivergence,
            fmt::format("replay of run {} diverged at stage '{}': no recorded call has request "
                        "hash {}; the next recorded call is #{} (stage '{}', hash {}). The "
                        "prompts changed since the run was recorded (set "
                        "llm.replay.strict=false to replay by stage order instead)",
                        run_id_, request.stage, hash.substr(0, 12), expected.seq, expected.stage,
                        expected.request_hash.substr(0, 12)));
      }
      for (size_t i = next; i < records_.size(); ++i) {
        if (!served_[i] && records_[i].stage == request.stage) {
          record = &records_[i];
          served_[i] = true;
          break;
        }
      }
      if (record == nullptr) {
        return LlmError::Make(
            LlmErrorKind::kReplayDivergence,
            fmt::format("replay of run {} diverged: no recorded call of stage '{}' is left",
                        run_id_, request.stage));
      }
    }
  }
  // A failed call with a response was answered but judged unusable (a reply
  // off its schema): serve the answer so the caller judges it the same way.
  if (!record->ok() && record->response_json.empty()) {
    return LlmError::Make(LlmErrorKind::kReplayedFailure,
                          fmt::format("recorded call #{} failed: {}", record->seq, record->error));
  }
  nlohmann::json j = nlohmann::json::parse(record->response_json, nullptr, false);
  if (j.is_discarded()) {
    return LlmError::Make(LlmErrorKind::kMalformedResponse,
                          fmt::format("recorded call #{} of run {} has an unreadable response",
                                      record->seq, run_id_));
  }
  auto response = ResponseFromJson(j);
  if (!response) return response.error();
  response->latency_ms = 0;
  response->first_token_ms = 0;
  response->attempts = 1;
  if (on_text) on_text(response->text);
  return response;
}

}  // namespace kforge::llm
