// SYNTHETIC. A stand-in for the LLM: a stochastic policy that reads only what
// a prompt would show it (recent attempts, an idea pool, scored exemplars, a
// failure log) and answers each stage. It does not know the landscape's gain
// table; it knows how popular each technique is (tiling comes to mind first,
// tensor cores rarely) and reacts to the results in its context:
//  - a technique that improved the program is likelier, by its largest gain
//    (exploitation);
//  - each failure since it last helped makes it less likely (up to six);
//  - every mention in a flat history anchors it further on that technique
//    (the "context pollution" of PACEvolve Section 2), so an unbounded
//    history narrows what it proposes;
//  - it notices an exact repeat only when the repeat is visible in context;
//  - it sees which techniques the code already uses fully and rarely goes back.
// Every strategy uses these same preferences; they differ only in what their
// prompts show (the last attempts, a flat history, an idea pool, exemplars).
// Code writing applies the chosen edit, sometimes with a side effect on
// another technique, and fails to compile/verify with the technique's
// failure rate. All of these behaviours are modelling choices, not data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "landscape.h"
#include "search/contrastive/rng.h"

namespace kforge::bench {

inline constexpr int kIdeaAngles = 5;

struct Edit {
  int technique = 0;
  int level = 0;
};

// What the model sees of one earlier attempt.
struct SeenAttempt {
  int technique = -1;
  int level = 0;
  bool improved = false;
  double gain = 0.0;  // log(previous best / new runtime) when it improved
  uint64_t parent = 0;
};

struct Implemented {
  Program program{};
  bool failed = false;
};

class SyntheticLlm {
 public:
  SyntheticLlm(const Landscape& landscape, uint64_t seed) : land_(landscape), rng_(seed) {}

  // Technique weights from popularity, the code in front of it (a technique
  // the parent already uses at its highest level looks used up) and context.
  // anchoring > 1 multiplies a technique's weight by anchoring^(mentions).
  std::vector<double> TechniqueWeights(const Program& parent,
                                       const std::vector<SeenAttempt>& context, double anchoring,
                                       const std::vector<double>& boost) const;
  // Picks one edit of `parent`; avoids edits it can see were already tried
  // from the same parent.
  Edit ProposeEdit(const Program& parent, const std::vector<SeenAttempt>& context, double anchoring,
                   const std::vector<double>& boost);
  int ProposeLevel(const Program& parent, int technique);
  // The code-writing step.
  Implemented Implement(const Program& parent, const Edit& edit);
  // A whole optimised program written in one go from the reference (best-of-n).
  Implemented OneShot();
  // Contrastive reading of scored exemplars (best first): techniques where the
  // better program differs from a worse one are credited with the difference.
  std::vector<double> ContrastBoost(const std::vector<Program>& exemplars_best_first) const;

  search::Rng& rng() { return rng_; }
  const Landscape& landscape() const { return land_; }

  // Text forms shared by the PACEvolve answers.
  // An idea names a technique and an angle on it (1..kIdeaAngles): a model
  // words the same concept differently from one proposal to the next.
  std::string IdeaText(int technique, int angle) const;
  std::string ExperimentText(const Edit& edit, const Program& parent) const;
  std::optional<Edit> ParseExperiment(const std::string& text) const;
  int ParseIdea(const std::string& text) const;  // −1 when not an idea of ours
  static uint64_t Hash(const Program& p);        // 48-bit FNV-1a

 private:
  const Landscape& land_;
  search::Rng rng_;
};

}  // namespace kforge::bench
