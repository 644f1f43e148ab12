// What a run takes from the knowledge base for one proposal (KernelBlaster
// §3, Algorithm 2, "select"): the parent's performance state, its profile
// summary, and a weighted-random top-k of the state's optimizations; and
// what it reads back from the model's reply (the technique it says it
// applied). Pure: no I/O, deterministic given the seed.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "kb/knowledge_base.h"

namespace kforge::kb {

// One optimization offered to the model, as it stood when it was drawn.
struct TechniqueOffer {
  std::string technique;
  std::string description;
  std::string notes;
  double predicted_gain = 1;
};

// The knowledge-base context of one proposal.
struct KbAdvice {
  std::string state;              // the parent's performance state
  std::string state_description;  // from the knowledge base (may be empty)
  std::string profile_of;         // whose profile decided: "the reference program", ...
  std::string details;            // SummarizeProfiles, or why there is no profile
  std::vector<TechniqueOffer> offers;

  nlohmann::json ToJson() const;
  // kBadInput for a value that is not an advice object.
  static Result<KbAdvice> FromJson(const nlohmann::json& j);
  const TechniqueOffer* Find(const std::string& technique) const;
};

// The draw's seed: a fixed mix of the run seed, the proposal's slot (the
// iteration its candidate would get) and how many draws that slot had, so a
// resumed run draws what the run would have drawn from the same knowledge base.
uint64_t SelectionSeed(uint64_t run_seed, int64_t slot, int64_t draw);

// The state's entry and a weighted-random top-k of its optimizations (the
// "unknown" state when `state` is not in the knowledge base).
KbAdvice Advise(const KnowledgeBase& kb, const std::string& state, std::string profile_of,
                std::string details, const SelectionOptions& options, uint64_t seed);

// The techniques offered, one block each, for the prompt's knowledge-base section.
std::string OffersText(const KbAdvice& advice);

// The technique a reply names in a line `Technique: <id>` (any case, with
// markdown emphasis, backticks or quotes around it; the last such line outside
// code blocks wins, else one inside them). An offered technique matches by its
// id or its words ("Kernel fusion" is kernel_fusion); another name is kept
// when it is a plausible new id (snake_case, at most 64 characters). nullopt
// when the reply names none, or says "none".
std::optional<std::string> ParseTechnique(std::string_view reply,
                                          const std::vector<std::string>& offered);

}  // namespace kforge::kb
