// Serves the recorded calls of an earlier run instead of asking a model, so
// a run can be reproduced offline and for free (`--llm replay:RUN_ID`).
//
// Each request is matched to the earliest unserved recorded call with the
// same request hash, so concurrent stages that finish in another order still
// replay. When none matches, the replay has diverged (the prompts changed):
// strict mode reports that with the stage and the hash of the next recorded
// call; lenient mode serves the next unserved call of the same stage.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "llm/call_log.h"
#include "llm/llm_client.h"

namespace kforge::llm {

class ReplayClient : public LlmClient {
 public:
  ReplayClient(std::string run_id, std::vector<LlmCallRecord> records, bool strict,
               bool in_order = false);

  // Calls recorded as failed without a response are served as
  // kReplayedFailure with the recorded message, so the replay takes the same
  // path the run took.
  LlmResult<LlmResponse> Complete(const LlmRequest& request,
                                  const TextDeltaFn& on_text = {}) override;
  std::string spec() const override { return "replay:" + run_id_; }
  // The model that answered the next unserved recorded call, so the prompt is
  // fitted to the same context window it was fitted to when recorded.
  std::string model() const override;
  bool billable() const override { return false; }
  size_t remaining() const;

 private:
  std::string run_id_;
  std::vector<LlmCallRecord> records_;
  std::vector<bool> served_;
  bool strict_;
  bool in_order_;
  mutable std::mutex mu_;
};

}  // namespace kforge::llm
