#include "llm/llm_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "common/hash.h"
#include "llm/json_schema.h"

namespace kforge::llm {

namespace {

constexpr size_t kMaxViolationsShown = 8;

std::string ListViolations(const std::vector<std::string>& violations) {
  std::string out;
  for (size_t i = 0; i < violations.size() && i < kMaxViolationsShown; ++i) {
    out += "\n- " + violations[i];
  }
  if (violations.size() > kMaxViolationsShown) {
    out += fmt::format("\n- ... and {} more", violations.size() - kMaxViolationsShown);
  }
  return out;
}

}  // namespace

LlmResult<std::unique_ptr<LlmSession>> LlmSession::Open(LlmSettings settings,
                                                        SessionOptions options) {
  if (options.call_log == nullptr) {
    return LlmError::Make(LlmErrorKind::kRecording, "an LLM session needs a call log");
  }
  if (options.run_id.empty()) {
    return LlmError::Make(LlmErrorKind::kBadSpec, "an LLM session needs a run id");
  }
  std::string default_spec = options.default_spec.empty() ? settings.spec : options.default_spec;
  if (default_spec.empty()) {
    return LlmError::Make(LlmErrorKind::kBadSpec,
                          "no model given: pass --llm SPEC or set the config key llm.spec");
  }
  std::unique_ptr<LlmSession> session(new LlmSession());
  session->run_id_ = options.run_id;
  session->log_ = options.call_log;
  session->budget_ = std::make_unique<Budget>(settings.budget);
  std::map<std::string, std::string> stage_specs = settings.stage_specs;
  LlmCallLog* replay_source =
      options.replay_source != nullptr ? options.replay_source : options.call_log;
  session->factory_ =
      std::make_unique<ClientFactory>(std::move(settings), options.transport, replay_source);

  auto client = session->factory_->Make(default_spec);
  if (!client) return client.error();
  session->default_client_ = std::move(client).value();
  for (const auto& [stage, spec] : stage_specs) {
    auto stage_client = session->factory_->Make(spec);
    if (!stage_client) {
      LlmError e = stage_client.error();
      e.message = fmt::format("llm.stage.{}: {}", stage, e.message);
      return e;
    }
    session->stage_clients_[stage] = std::move(stage_client).value();
  }

  // Resume: continue numbering and spending where the recorded calls end.
  auto recorded = options.call_log->LoadRun(options.run_id);
  if (!recorded) {
    return LlmError::Make(LlmErrorKind::kRecording,
                          fmt::format("cannot read the recorded LLM calls of run {}: {}",
                                      options.run_id, recorded.error().message));
  }
  BudgetSpend spent;
  int64_t max_seq = 0;
  for (const LlmCallRecord& r : *recorded) {
    ++spent.calls;
    spent.input_tokens += r.input_tokens;
    spent.output_tokens += r.output_tokens;
    spent.cost_usd += r.cost_usd;
    max_seq = std::max(max_seq, r.seq);
  }
  session->budget_->Restore(spent);
  session->next_seq_ = max_seq + 1;
  return session;
}

LlmClient& LlmSession::ClientFor(const std::string& stage) {
  if (auto it = stage_clients_.find(stage); it != stage_clients_.end()) return *it->second;
  return *default_client_;
}

LlmResult<LlmResponse> LlmSession::Call(LlmClient& client, LlmRequest& request,
                                        const TextDeltaFn& on_text, const Judge& judge) {
  const LlmSettings& s = settings();
  if (request.max_output_tokens <= 0) request.max_output_tokens = s.max_output_tokens;
  if (!request.temperature && s.temperature) request.temperature = s.temperature;

  auto reserved = budget_->Reserve();
  if (!reserved) return reserved.error();
  LlmCallRecord record;
  record.id = NewCallId();
  record.run_id = run_id_;
  record.seq = next_seq_.fetch_add(1);
  record.stage = request.stage;
  record.model_spec = client.spec();
  record.request_json = DumpJson(RequestToJson(request));
  record.request_hash = Sha256Hex(record.request_json);
  record.created_at = IsoUtcTimestamp();

  auto start = std::chrono::steady_clock::now();
  auto result = client.Complete(request, on_text);
  record.latency_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  std::optional<LlmError> verdict;
  if (result) {
    LlmResponse& r = result.value();
    double cost = 0;
    if (client.billable()) {
      cost = s.prices.Find(client.model()) ? s.prices.Cost(client.model(), r.usage)
                                           : s.prices.Cost(r.model, r.usage);
    }
    r.cost_usd = cost;
    r.call_seq = record.seq;
    r.call_id = record.id;
    budget_->Settle(r.usage, cost);
    record.response_json = DumpJson(ResponseToJson(r));
    record.text = r.text;
    record.input_tokens = r.usage.input_tokens;
    record.output_tokens = r.usage.output_tokens;
    record.cost_usd = cost;
    if (judge) verdict = judge(r);
    record.status = verdict ? "failed" : "ok";
    if (verdict) record.error = verdict->Describe();
  } else {
    record.status = "failed";
    record.error = result.error().Describe();
  }
  if (Status st = log_->Record(record); !st) {
    return LlmError::Make(LlmErrorKind::kRecording,
                          fmt::format("call #{} of run {} could not be recorded: {}", record.seq,
                                      run_id_, st.error().message));
  }
  if (verdict) return *verdict;
  return result;
}

LlmResult<LlmSession::FittedRequest> LlmSession::FitRequest(LlmClient& client,
                                                            const std::string& stage,
                                                            const Prompt& prompt) const {
  const LlmSettings& s = settings();
  int64_t window = s.ContextWindowFor(client.model());
  auto fitted = prompt.Fit(PromptBudgetTokens(window, s.max_output_tokens));
  if (!fitted) {
    LlmError e = fitted.error();
    e.message = fmt::format("stage '{}' on {} (window {} tokens): {}", stage, client.spec(), window,
                            e.message);
    return e;
  }
  FittedRequest out;
  out.request.stage = stage;
  out.request.messages = std::move(fitted->messages);
  for (const TrimNote& n : fitted->trimmed) out.trims.push_back(n.section + ": " + n.action);
  return out;
}

LlmResult<LlmResponse> LlmSession::Ask(const std::string& stage, const Prompt& prompt,
                                       const TextDeltaFn& on_text) {
  LlmClient* client = ClientFor(stage).Pick();
  auto fitted = FitRequest(*client, stage, prompt);
  if (!fitted) return fitted.error();
  auto response = Call(*client, fitted->request, on_text, nullptr);
  if (response) response->prompt_trims = fitted->trims;
  return response;
}

LlmResult<CodeReply> LlmSession::AskForCode(const std::string& stage, const Prompt& prompt,
                                            const std::vector<std::string>& langs,
                                            const TextDeltaFn& on_text) {
  LlmClient* client = ClientFor(stage).Pick();
  auto fitted = FitRequest(*client, stage, prompt);
  if (!fitted) return fitted.error();
  std::optional<CodeBlock> block;
  auto response =
      Call(*client, fitted->request, on_text, [&](const LlmResponse& r) -> std::optional<LlmError> {
        block = ExtractLastCodeBlock(r.text, langs);
        if (block) return std::nullopt;
        return LlmError::Make(
            LlmErrorKind::kNoCodeBlock,
            fmt::format(
                "the reply has no closed fenced code block{}",
                r.finish_reason == "length" ? " (it was cut at the output token limit)" : ""));
      });
  if (!response) return response.error();
  response->prompt_trims = fitted->trims;
  return CodeReply{std::move(*block), std::move(response).value()};
}

LlmResult<StructuredReply> LlmSession::AskStructured(const std::string& stage, const Prompt& prompt,
                                                     const OutputSchema& schema) {
  if (Status st = CheckSchema(schema.schema); !st) {
    return LlmError::Make(LlmErrorKind::kBadSpec,
                          fmt::format("output schema '{}': {}", schema.name, st.error().message));
  }
  LlmClient* client = ClientFor(stage).Pick();
  auto fitted = FitRequest(*client, stage, prompt);
  if (!fitted) return fitted.error();
  LlmRequest& base = fitted->request;
  base.output_schema = schema;

  int max_attempts = std::max(1, settings().structured_max_attempts);
  LlmRequest request = base;
  LlmError last;
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    nlohmann::json value;
    std::string reply;
    std::vector<std::string> violations;
    auto judge = [&](const LlmResponse& r) -> std::optional<LlmError> {
      reply = r.text;
      auto parsed = ParseJsonReply(r.text);
      if (!parsed) {
        violations = {r.text.empty() ? "/: the reply is empty" : "/: the reply is not JSON"};
      } else {
        violations = ValidateAgainstSchema(*parsed, schema.schema);
        if (violations.empty()) {
          value = std::move(*parsed);
          return std::nullopt;
        }
      }
      return LlmError::Make(LlmErrorKind::kSchemaViolation,
                            fmt::format("the reply does not match schema '{}':{}", schema.name,
                                        ListViolations(violations)));
    };
    auto response = Call(*client, request, {}, judge);
    if (response) {
      response->prompt_trims = fitted->trims;
      return StructuredReply{std::move(value), std::move(response).value(), attempt};
    }
    last = response.error();
    if (last.kind != LlmErrorKind::kSchemaViolation) return last;
    // Ask again from the original prompt, showing the model its last reply
    // and what was wrong with it (only the last, so retries do not grow).
    request.messages = base.messages;
    request.messages.push_back(ChatMessage::Assistant(reply.empty() ? "(empty reply)" : reply));
    request.messages.push_back(ChatMessage::User(fmt::format(
        "Your reply did not match the required JSON schema '{}':{}\n\nReply again with only "
        "the JSON value, matching the schema exactly.",
        schema.name, ListViolations(violations))));
  }
  last.message += fmt::format(" (after {} attempts)", max_attempts);
  return last;
}

LlmResult<LlmResponse> LlmSession::Complete(LlmRequest request, const TextDeltaFn& on_text) {
  LlmClient* client = ClientFor(request.stage).Pick();
  return Call(*client, request, on_text, nullptr);
}

}  // namespace kforge::llm
