// SessionAgentModel: an agent's turns through the run's LlmSession (the
// model spec of the turn's stage, retries, budget, recording of every call).
#pragma once

#include "agent/agent_episode.h"
#include "llm/llm_session.h"

namespace kforge::agent {

class SessionAgentModel : public AgentModel {
 public:
  explicit SessionAgentModel(llm::LlmSession& session) : session_(session) {}
  llm::LlmResult<llm::LlmResponse> Turn(const llm::LlmRequest& request) override {
    return session_.Complete(request);
  }

 private:
  llm::LlmSession& session_;
};

}  // namespace kforge::agent
