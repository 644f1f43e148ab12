// One training sample per evaluated candidate of a run: the messages the
// model was sent for it, its reply, and the reward its evaluation earned.
// The store keeps calls and evaluations as JSON text; this is the edge where
// they become C++ values (docs/rl.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "store/store.h"

namespace kforge::rl {

struct ToolCallText {
  std::string name;
  std::string arguments_json;
};

// The agent episode that wrote a candidate (its `agent_episode` event): the
// RFT filter drops trajectories with hallucinated or looping tool calls.
struct AgentEpisodeStats {
  std::string end;  // submitted | stopped | turn_limit | token_limit | model_error
  int64_t turns = 0;
  int64_t tokens = 0;
  int64_t invalid_tool_calls = 0;
  int64_t repeated_tool_calls = 0;
};

struct TrainingSample {
  // The request's messages as recorded ([{"role", "content", ...}]): chat
  // messages are JSON by nature and go out as they came in.
  nlohmann::json prompt = nlohmann::json::array();
  std::vector<std::string> tool_names;  // the tools the request offered
  std::string response;                 // the model's reply text
  std::vector<ToolCallText> response_tool_calls;
  std::string finish_reason;  // stop | length | tool_calls | ...

  // The evaluation (CONTRACT.md `kforge eval --json`).
  int milestone = -1;
  std::optional<double> speedup_eager, speedup_compile;
  bool accepted = false;
  std::string verdict;  // ok | suspect | rejected

  // Where it came from.
  std::string run_id, bench_id;  // bench_id empty for a run exported alone
  std::string task_name, task_hash;
  std::string candidate_id, llm_call_id, stage, model, format;
  std::vector<std::string> parent_ids;
  int64_t iteration = 0, island = 0;
  // Set for a candidate an agent episode submitted (strategy agent): the
  // prompt is then the whole conversation before the submitting turn.
  std::optional<AgentEpisodeStats> agent;

  // The exported reward: CUDA Agent's milestone (−1, 1, 2, 3), as is.
  double reward() const { return milestone; }
};

struct LoadedSamples {
  std::vector<TrainingSample> samples;
  // Evaluated candidates left out because their call's request holds no
  // messages (records written by hand, or by a kforge before calls were
  // recorded in full).
  size_t without_prompt = 0;
};

// The samples of a run, or of every run of a bench (in the bench's order),
// each run's in iteration order. A candidate without an evaluation, or whose
// LLM call is missing or failed, has no sample. kNotFound (one line) when
// `id` names neither a run nor a bench; kBadInput when an evaluation is not
// a contract object.
Result<LoadedSamples> LoadTrainingSamples(Store& store, const std::string& id);

}  // namespace kforge::rl
