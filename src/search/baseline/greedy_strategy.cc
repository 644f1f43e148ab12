#include "search/baseline/greedy_strategy.h"

#include <fmt/format.h>

#include <algorithm>

#include "search/baseline/attempt_feedback.h"

namespace kforge::search {

namespace {

constexpr int kMaxHistoryItems = 1000;

}  // namespace

void RegisterBaselineStrategyConfig(ConfigSchema& s) {
  GreedyOptions d;
  s.Add({"greedy.history", int64_t{d.history_items},
         "greedy: earlier attempts shown in the prompt, one line each"});
  s.Add({"greedy.max_log_chars", static_cast<int64_t>(d.max_log_chars),
         "greedy: characters of compiler output shown for a failed build"});
}

Result<GreedyOptions> GreedyOptionsFromConfig(const Config& c) {
  GreedyOptions o;
  auto history = c.GetIntInRange("greedy.history", 0, kMaxHistoryItems);
  if (!history) return history.error();
  o.history_items = *history;
  int64_t log_chars = c.GetInt("greedy.max_log_chars");
  if (log_chars < 0) return Error::BadInput("config key 'greedy.max_log_chars' cannot be negative");
  o.max_log_chars = static_cast<size_t>(log_chars);
  return o;
}

GreedyStrategy::GreedyStrategy(const StrategyContext& context, TaskPrompt task_prompt,
                               PromptTemplates templates, GreedyOptions options)
    : context_(context),
      task_prompt_(std::move(task_prompt)),
      templates_(std::move(templates)),
      options_(options),
      islands_(static_cast<size_t>(std::max(1, context.islands))) {}

Result<std::unique_ptr<GreedyStrategy>> GreedyStrategy::Create(const StrategyContext& context,
                                                               const PromptTemplates& templates,
                                                               GreedyOptions options) {
  auto task_prompt = TaskPrompt::Create(context, templates);
  if (!task_prompt) return task_prompt.error();
  for (const char* parent : {"the reference program", "the current best candidate"}) {
    if (auto text = templates.Render("greedy", {{"parent", parent}}); !text) return text.error();
  }
  return std::unique_ptr<GreedyStrategy>(
      new GreedyStrategy(context, std::move(task_prompt).value(), templates, options));
}

int GreedyStrategy::PickIsland() const {
  std::vector<int64_t> load(islands_.size());
  for (size_t i = 0; i < islands_.size(); ++i) load[i] = islands_[i].observed;
  for (const auto& [id, island] : proposals_in_flight_) ++load[island];
  for (const auto& [id, island] : evaluations_in_flight_) ++load[island];
  return static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
}

llm::Prompt GreedyStrategy::BuildPrompt(const Island& island) const {
  llm::Prompt p;
  task_prompt_.AddHead(p, BaselineText(eager_ms_, compile_ms_));
  if (island.best) {
    const Observation& b = *island.best;
    p.Text("best", fmt::format("## Current best (iteration {})\nMeasured: {}.\n{}", b.iteration,
                               MeasurementsText(b.eval), task_prompt_.Fenced(b.source)));
  } else {
    p.Text("best", island.observed == 0
                       ? "No candidate has been evaluated yet: start from the reference program."
                       : "No candidate has been accepted yet: start from the reference program.");
  }
  if (!island.history.empty()) {
    p.History("history", "Earlier attempts (oldest first)",
              std::vector<std::string>(island.history.begin(), island.history.end()), 10);
  }
  if (island.last) {
    const Observation& last = *island.last;
    bool last_is_best = island.best && island.best->candidate_id == last.candidate_id;
    std::string text = "## Last attempt\n" + AttemptDetails(last, options_.max_log_chars);
    if (last_is_best) {
      text += "\n(This is the current best above.)";
    } else {
      text += "\nIts source:\n" + task_prompt_.Fenced(last.source);
    }
    // Dropped whole before the best or the task when the window runs short.
    p.Optional("last_attempt", text, 50);
  }
  auto instruction = templates_.Render(
      "greedy", {{"parent", island.best ? "the current best candidate" : "the reference program"}});
  p.Text("instruction", instruction ? *instruction : "Write a faster version.");
  task_prompt_.AddAnswer(p);
  return p;
}

std::optional<Proposal> GreedyStrategy::Propose() {
  int island = PickIsland();
  const Island& is = islands_[island];
  Proposal proposal;
  proposal.id = next_id_++;
  proposal.stage = kStage;
  proposal.prompt = BuildPrompt(is);
  proposal.code_langs = task_prompt_.code_langs();
  proposal.island = island;
  if (is.best) proposal.parent_ids.push_back(is.best->candidate_id);
  proposals_in_flight_[proposal.id] = island;
  return proposal;
}

void GreedyStrategy::Settle(uint64_t proposal_id, const ProposalOutcome& outcome) {
  auto it = proposals_in_flight_.find(proposal_id);
  if (it == proposals_in_flight_.end()) return;
  if (outcome.kind == ProposalOutcome::Kind::kSubmitted) {
    evaluations_in_flight_[outcome.candidate_id] = it->second;
  }
  proposals_in_flight_.erase(it);
}

void GreedyStrategy::Observe(const Observation& observation) {
  evaluations_in_flight_.erase(observation.candidate_id);
  if (observation.eval.eager_ms) {
    eager_ms_ = observation.eval.eager_ms;
    compile_ms_ = observation.eval.compile_ms;
  }
  int index = std::clamp(observation.island, 0, static_cast<int>(islands_.size()) - 1);
  Island& is = islands_[index];
  if (is.last) {
    is.history.push_back(OutcomeLine(*is.last));
    while (static_cast<int>(is.history.size()) > options_.history_items) is.history.pop_front();
  }
  is.last = observation;
  ++is.observed;
  if (IsNewBest(observation, is.best)) is.best = observation;
}

}  // namespace kforge::search
