// The structured LLM stages of PACEvolve and their replies. Each stage asks
// for JSON that follows Schema() (given to the LLM as an OpenAI json_schema
// response format or an Anthropic tool input schema; strict-mode compatible:
// every property required, no extra properties); the LLM layer validates the
// reply against it, and FromJson turns it into the struct the search
// consumes. Only the shape is checked here; PacEvolveSearch checks the
// meaning (does the idea id exist, is it a known failure, …).
//
// The implementation stage is not here: it answers in plain text with a
// fenced code block, like every code stage.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace kforge::search::pacevolve {

// Stage 1: propose several ideas, each with its reasoning.
struct IdeaProposal {
  std::string description;
  std::string reasoning;
};
struct IdeaGenerationReply {
  std::vector<IdeaProposal> ideas;

  static std::string_view SchemaName() { return "pacevolve_idea_generation"; }
  static nlohmann::json Schema();
  static Result<IdeaGenerationReply> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;
};

// Stage 2: for one proposal, either an existing idea it belongs to (with the
// merged description, at most two sentences) or a new idea.
struct ClassificationReply {
  bool idea_exists = false;
  std::optional<int> idea_id;  // set when idea_exists
  std::string description;     // merged description, or the new idea's description

  static std::string_view SchemaName() { return "pacevolve_idea_classification"; }
  static nlohmann::json Schema();
  static Result<ClassificationReply> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;
};

// Stage 3: the idea to pursue and the concrete experiment to run under it.
struct SelectionReply {
  int idea_id = 0;
  std::string experiment;

  static std::string_view SchemaName() { return "pacevolve_idea_selection"; }
  static nlohmann::json Schema();
  static Result<SelectionReply> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;
};

// K_hyp reached: an idea's hypotheses condensed into key findings (what
// worked, what did not, the best result so far).
struct SummaryReply {
  std::string key_findings;

  static std::string_view SchemaName() { return "pacevolve_hypothesis_summary"; }
  static nlohmann::json Schema();
  static Result<SummaryReply> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;
};

// K_idea exceeded: the ideas to drop so that at most K_idea remain.
struct PruningReply {
  std::vector<int> drop_idea_ids;
  std::string rationale;

  static std::string_view SchemaName() { return "pacevolve_idea_pruning"; }
  static nlohmann::json Schema();
  static Result<PruningReply> FromJson(const nlohmann::json& j);
  nlohmann::json ToJson() const;
};

}  // namespace kforge::search::pacevolve
