// LlmSession: how the rest of kforge talks to models during one run. It
// picks the model for each stage, fits prompts into the context window,
// enforces the budget, prices and records every call (so the run can be
// resumed, costed and replayed), and turns replies into what a stage wants:
// plain text, the last code block, or a JSON value that matches a schema.
// Nothing here throws; every failure is an LlmError, and a failed call is
// recorded like a successful one.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llm/accounting.h"
#include "llm/call_log.h"
#include "llm/client_factory.h"
#include "llm/llm_client.h"
#include "llm/llm_settings.h"
#include "llm/prompt.h"
#include "llm/reply_parsing.h"

namespace kforge::llm {

struct SessionOptions {
  std::string run_id;
  std::string default_spec;                  // --llm; empty: settings.spec
  LlmCallLog* call_log = nullptr;            // required: where calls are recorded
  LlmCallLog* replay_source = nullptr;       // where replay:RUN_ID looks; null: call_log
  std::shared_ptr<HttpTransport> transport;  // null: CurlTransport
};

struct CodeReply {
  CodeBlock code;
  LlmResponse response;
};

struct StructuredReply {
  nlohmann::json value;  // valid against the schema asked for
  LlmResponse response;
  int attempts = 1;  // calls it took
};

class LlmSession {
 public:
  // Builds the default client and every llm.stage.<stage> client up front,
  // so a bad spec or missing key stops the run before its first call, and
  // continues the run's numbering and spending from calls already recorded
  // under `run_id` (resume).
  static LlmResult<std::unique_ptr<LlmSession>> Open(LlmSettings settings, SessionOptions options);

  // Plain text for `stage` from `prompt`, fitted to the chosen model's window.
  LlmResult<LlmResponse> Ask(const std::string& stage, const Prompt& prompt,
                             const TextDeltaFn& on_text = {});
  // The last fenced code block of the reply (preferring `langs`);
  // kNoCodeBlock (recorded as a failed call) when there is none.
  LlmResult<CodeReply> AskForCode(const std::string& stage, const Prompt& prompt,
                                  const std::vector<std::string>& langs,
                                  const TextDeltaFn& on_text = {});
  // A JSON value valid against `schema`: asked with response_format (OpenAI)
  // or a forced tool (Anthropic), validated, re-asked with the violations
  // up to llm.structured.max_attempts times; kSchemaViolation after that.
  LlmResult<StructuredReply> AskStructured(const std::string& stage, const Prompt& prompt,
                                           const OutputSchema& schema);
  // A request built by the caller (multi-turn agents, tools): no trimming.
  LlmResult<LlmResponse> Complete(LlmRequest request, const TextDeltaFn& on_text = {});

  // The client that serves `stage` (llm.stage.<stage>, else the default).
  LlmClient& ClientFor(const std::string& stage);
  const std::string& run_id() const { return run_id_; }
  BudgetSpend spend() const { return budget_->spend(); }
  const Budget& budget() const { return *budget_; }
  const LlmSettings& settings() const { return factory_->settings(); }

 private:
  LlmSession() = default;

  // Judges a successful reply: nullopt to accept it, or why it is unusable
  // (the call is then recorded as failed, with its response).
  using Judge = std::function<std::optional<LlmError>(const LlmResponse&)>;
  LlmResult<LlmResponse> Call(LlmClient& client, LlmRequest& request, const TextDeltaFn& on_text,
                              const Judge& judge);
  struct FittedRequest {
    LlmRequest request;
    std::vector<std::string> trims;  // "section: action"
  };
  LlmResult<FittedRequest> FitRequest(LlmClient& client, const std::string& stage,
                                      const Prompt& prompt) const;

  std::string run_id_;
  LlmCallLog* log_ = nullptr;
  std::unique_ptr<ClientFactory> factory_;
  std::unique_ptr<LlmClient> default_client_;
  std::map<std::string, std::unique_ptr<LlmClient>> stage_clients_;
  std::unique_ptr<Budget> budget_;
  std::atomic<int64_t> next_seq_{1};
};

}  // namespace kforge::llm
