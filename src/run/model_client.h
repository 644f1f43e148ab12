// What the optimize loop needs of the LLM: a code answer or a structured
// answer for a stage, and what has been spent. SessionModelClient forwards to
// an LlmSession (which records every call); tests script their own.
// Implementations are called from several proposal threads at once.
#pragma once

#include <string>
#include <vector>

#include "llm/llm_session.h"

namespace kforge::run {

class ModelClient {
 public:
  virtual ~ModelClient() = default;
  virtual llm::LlmResult<llm::CodeReply> AskForCode(const std::string& stage,
                                                    const llm::Prompt& prompt,
                                                    const std::vector<std::string>& langs) = 0;
  virtual llm::LlmResult<llm::StructuredReply> AskStructured(const std::string& stage,
                                                             const llm::Prompt& prompt,
                                                             const llm::OutputSchema& schema) = 0;
  // One turn of a tool-using conversation (the agent strategy), recorded
  // like every other call. A client that cannot hold one says so.
  virtual llm::LlmResult<llm::LlmResponse> Complete(const llm::LlmRequest& request) {
    return llm::LlmError::Make(
        llm::LlmErrorKind::kBadSpec,
        "this model client cannot hold a tool-using conversation (" + request.stage + ")");
  }
  virtual llm::BudgetSpend spend() const = 0;
};

class SessionModelClient : public ModelClient {
 public:
  explicit SessionModelClient(llm::LlmSession& session) : session_(session) {}
  llm::LlmResult<llm::CodeReply> AskForCode(const std::string& stage, const llm::Prompt& prompt,
                                            const std::vector<std::string>& langs) override {
    return session_.AskForCode(stage, prompt, langs);
  }
  llm::LlmResult<llm::StructuredReply> AskStructured(const std::string& stage,
                                                     const llm::Prompt& prompt,
                                                     const llm::OutputSchema& schema) override {
    return session_.AskStructured(stage, prompt, schema);
  }
  llm::LlmResult<llm::LlmResponse> Complete(const llm::LlmRequest& request) override {
    return session_.Complete(request);
  }
  llm::BudgetSpend spend() const override { return session_.spend(); }

 private:
  llm::LlmSession& session_;
};

}  // namespace kforge::run
