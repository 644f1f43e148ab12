#include "strategies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>

#include "search/contrastive/bucket_sampler.h"
#include "search/contrastive/exemplar_store.h"
#include "search/pacevolve/pacevolve_search.h"
#include "synthetic_llm.h"

namespace kforge::bench {
namespace {

using search::Rng;
namespace pe = search::pacevolve;

constexpr double kAnchoring = 1.1;  // per mention in a flat history
constexpr size_t kGreedyWindow = 10;
constexpr int64_t kMaxCallsPerEvaluation = 100;

bool WithinBudget(const Budget& b, int64_t evaluations, int64_t calls) {
  // The call cap under an evaluation budget only guards against a search that
  // stops producing candidates; main.cc reports runs that hit it.
  const int64_t call_cap = b.llm_calls != std::numeric_limits<int64_t>::max()
                               ? b.llm_calls
                               : kMaxCallsPerEvaluation * b.evaluations;
  return evaluations < b.evaluations && calls < call_cap;
}

// The best accepted candidate by measured runtime, as a search would pick it.
struct BestTracker {
  const Landscape& land;
  double measured;
  double true_ms;

  explicit BestTracker(const Landscape& l)
      : land(l), measured(l.baseline_ms()), true_ms(l.baseline_ms()) {}
  bool Offer(const Program& p, double m) {
    if (m >= measured) return false;
    measured = m;
    true_ms = land.TrueRuntime(p);
    return true;
  }
};

}  // namespace

RunResult RunGreedy(const Landscape& land, uint64_t seed, const Budget& budget) {
  SyntheticLlm llm(land, seed);
  Rng noise(seed ^ 0x9e3779b97f4a7c15ULL);
  BestTracker best(land);
  Program current{};
  std::vector<SeenAttempt> history;
  RunResult r;
  while (WithinBudget(budget, r.evaluations, r.llm_calls)) {
    const size_t from = history.size() > kGreedyWindow ? history.size() - kGreedyWindow : 0;
    const std::vector<SeenAttempt> window(history.begin() + from, history.end());
    const Edit e = llm.ProposeEdit(current, window, kAnchoring, {});
    const Implemented impl = llm.Implement(current, e);
    ++r.llm_calls;
    ++r.evaluations;
    SeenAttempt seen{e.technique, e.level, false, 0.0, SyntheticLlm::Hash(current)};
    if (!impl.failed) {
      const double m = land.Measure(impl.program, noise);
      const double before = best.measured;
      if (best.Offer(impl.program, m)) {
        seen.improved = true;
        seen.gain = std::log(before / m);
        current = impl.program;
      }
    }
    history.push_back(seen);
  }
  r.best_true_ms = best.true_ms;
  r.best_measured_ms = best.measured;
  return r;
}

RunResult RunBestOfN(const Landscape& land, uint64_t seed, const Budget& budget) {
  SyntheticLlm llm(land, seed);
  Rng noise(seed ^ 0x9e3779b97f4a7c15ULL);
  BestTracker best(land);
  RunResult r;
  while (WithinBudget(budget, r.evaluations, r.llm_calls)) {
    const Implemented impl = llm.OneShot();
    ++r.llm_calls;
    ++r.evaluations;
    if (!impl.failed) best.Offer(impl.program, land.Measure(impl.program, noise));
  }
  r.best_true_ms = best.true_ms;
  r.best_measured_ms = best.measured;
  return r;
}

RunResult RunContrastive(const Landscape& land, uint64_t seed, const Budget& budget,
                         const search::ContrastiveOptions& options) {
  SyntheticLlm llm(land, seed);
  Rng noise(seed ^ 0x9e3779b97f4a7c15ULL);
  Rng sampling(seed ^ 0x5bd1e9955bd1e995ULL);
  search::ExemplarStore store(options.score, land.baseline_ms(), options.bucket_width);
  const search::BucketSampler sampler(options.temperature);
  std::map<std::string, Program> programs;
  BestTracker best(land);
  RunResult r;
  while (WithinBudget(budget, r.evaluations, r.llm_calls)) {
    std::vector<const search::Exemplar*> shown;
    for (size_t i : sampler.Sample(store, static_cast<size_t>(options.exemplars), sampling)) {
      shown.push_back(&store.entries()[i]);
    }
    std::sort(shown.begin(), shown.end(), [](const search::Exemplar* a, const search::Exemplar* b) {
      return a->score > b->score;
    });
    std::vector<Program> shown_programs;
    for (const search::Exemplar* e : shown) shown_programs.push_back(programs.at(e->candidate_id));
    const Program parent = shown_programs.empty() ? Program{} : shown_programs.front();
    const Edit e = llm.ProposeEdit(parent, {}, 1.0, llm.ContrastBoost(shown_programs));
    const Implemented impl = llm.Implement(parent, e);
    ++r.llm_calls;
    ++r.evaluations;
    if (impl.failed) continue;
    const double m = land.Measure(impl.program, noise);
    const std::string id = fmt::format("c{}", r.evaluations);
    programs[id] = impl.program;
    store.Add(id, m, 0, r.evaluations);
    best.Offer(impl.program, m);
  }
  r.best_true_ms = best.true_ms;
  r.best_measured_ms = best.measured;
  return r;
}

namespace {

// Answers PacEvolveSearch's requests with the synthetic LLM.
class PacEvolveDriver {
 public:
  PacEvolveDriver(const Landscape& land, uint64_t seed, pe::PacEvolveSearch& search)
      : land_(land),
        llm_(land, seed),
        noise_(seed ^ 0x9e3779b97f4a7c15ULL),
        search_(search),
        best_(land) {}

  // Returns an error text on library misuse, empty otherwise.
  std::string Answer(const pe::StageRequest& r, RunResult& result) {
    switch (r.stage) {
      case pe::StageKind::kIdeaGeneration:
        return Check(search_.ObserveIdeas(r.id, GenerateIdeas(r)));
      case pe::StageKind::kClassification:
        return Check(search_.ObserveClassification(r.id, Classify(r)));
      case pe::StageKind::kSelection:
        return Check(search_.ObserveSelection(r.id, Select(r)));
      case pe::StageKind::kImplementation:
        return ImplementAndEvaluate(r, result);
      case pe::StageKind::kSummarization:
        return Check(search_.ObserveSummary(r.id, Summarize(r)));
      case pe::StageKind::kPruning:
        return Check(search_.ObservePruning(r.id, Prune(r)));
    }
    return "unknown stage";
  }

  const BestTracker& best() const { return best_; }

 private:
  static std::string Check(const Result<pe::ReplyResult>& r) {
    return r.ok() ? std::string() : r.error().message;
  }

  Program ProgramOf(const std::string& candidate_id) const {
    auto it = programs_.find(candidate_id);
    return it == programs_.end() ? Program{} : it->second;
  }

  std::vector<double> ExemplarBoost(const pe::StageRequest& r) const {
    std::vector<Program> shown;
    std::vector<const pe::ExemplarView*> order;
    for (const pe::ExemplarView& e : r.exemplars) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->score > b->score; });
    for (const pe::ExemplarView* e : order) shown.push_back(ProgramOf(e->candidate_id));
    return llm_.ContrastBoost(shown);
  }

  // How promising an idea looks from its record, as the pruning prompt asks
  // the model to judge it: the runtime it took off (its improvements over the
  // island's best at the time), minus the experiments since its last gain.
  double Promise(const pe::Idea& idea, const std::vector<pe::Idea>& pool) const {
    const int t = llm_.ParseIdea(idea.description);
    double gain = 0.0;
    int since_gain = 0;
    for (const SeenAttempt& a : SeenPool(pool)) {
      if (a.technique != t) continue;
      if (a.improved) {
        gain += a.gain;
        since_gain = 0;
      } else {
        ++since_gain;
      }
    }
    // A second idea about the same technique reads as redundant.
    double redundant = 0.0;
    for (const pe::Idea& other : pool) {
      if (other.id < idea.id && llm_.ParseIdea(other.description) == t) redundant = 0.5;
    }
    if (idea.TotalHypotheses() == 0) return 0.02 - redundant;  // untried: some potential
    return gain - 0.05 * since_gain - redundant;
  }

  pe::IdeaGenerationReply GenerateIdeas(const pe::StageRequest& r) {
    std::set<int> in_pool;
    for (const pe::Idea& idea : r.ideas) {
      const int t = llm_.ParseIdea(idea.description);
      if (t >= 0) in_pool.insert(t);
    }
    std::vector<double> w =
        llm_.TechniqueWeights(ProgramOf(r.parent.candidate_id), SeenPool(r.ideas), 1.0, {});
    std::set<std::string> pruned_texts;
    for (const pe::FailureEntry& f : r.failures) {
      if (f.kind != pe::FailureKind::kPrunedIdea) continue;
      const int t = llm_.ParseIdea(f.text);
      if (t >= 0) w[t] *= 0.7;  // it read the log of dropped ideas
      pruned_texts.insert(f.text);
    }
    const std::vector<double> boost = ExemplarBoost(r);
    for (int t = 0; t < kTechniques; ++t) w[t] *= boost[t];

    std::vector<int> picked;
    std::vector<double> left = w;
    for (int i = 0; i < r.ideas_wanted; ++i) {
      const int t = static_cast<int>(llm_.rng().Categorical(left));
      picked.push_back(t);
      left[t] = 0.0;
      if (std::all_of(left.begin(), left.end(), [](double x) { return x <= 0.0; })) break;
    }
    // The prompt asks for at least one idea outside the pool.
    const bool has_new =
        std::any_of(picked.begin(), picked.end(), [&](int t) { return in_pool.count(t) == 0; });
    if (!has_new) {
      std::vector<double> outside = w;
      for (int t : in_pool) outside[t] = 0.0;
      for (int t : picked) outside[t] = 0.0;
      if (std::any_of(outside.begin(), outside.end(), [](double x) { return x > 0.0; })) {
        picked.back() = static_cast<int>(llm_.rng().Categorical(outside));
      }
    }
    pe::IdeaGenerationReply reply;
    for (int t : picked) {
      // A wording it has not seen dropped, when there is one.
      int angle = 1 + static_cast<int>(llm_.rng().UniformIndex(kIdeaAngles));
      for (int k = 0; k < kIdeaAngles && pruned_texts.count(llm_.IdeaText(t, angle)); ++k) {
        angle = angle % kIdeaAngles + 1;
      }
      reply.ideas.push_back({llm_.IdeaText(t, angle), "expected to cut runtime"});
    }
    return reply;
  }

  pe::ClassificationReply Classify(const pe::StageRequest& r) const {
    const int t = llm_.ParseIdea(r.proposal->description);
    for (const pe::Idea& idea : r.ideas) {
      if (llm_.ParseIdea(idea.description) == t) return {true, idea.id, idea.description};
    }
    return {false, std::nullopt, r.proposal->description};
  }

  // What the model reads in the idea pool: each recorded hypothesis as an
  // attempt at its idea's technique, and a summarised idea as its best result.
  std::vector<SeenAttempt> SeenPool(const std::vector<pe::Idea>& ideas) const {
    std::vector<const pe::Hypothesis*> all;
    std::map<const pe::Hypothesis*, int> technique;
    std::vector<SeenAttempt> seen;
    for (const pe::Idea& idea : ideas) {
      const int t = llm_.ParseIdea(idea.description);
      if (t < 0) continue;
      if (idea.summarized_hypotheses > 0 && idea.best_runtime_ms) {
        seen.push_back({t, 0, true, std::log(land_.baseline_ms() / *idea.best_runtime_ms), 0});
      }
      for (const pe::Hypothesis& h : idea.hypotheses) {
        all.push_back(&h);
        technique[&h] = t;
      }
    }
    std::sort(all.begin(), all.end(), [](auto* a, auto* b) { return a->iteration < b->iteration; });
    double running = land_.baseline_ms();
    for (const pe::Hypothesis* h : all) {
      SeenAttempt a{technique[h], 0, false, 0.0, 0};
      if (const std::optional<Edit> e = llm_.ParseExperiment(h->description)) a.level = e->level;
      if (h->accepted && h->runtime_ms && *h->runtime_ms < running) {
        a.improved = true;
        a.gain = std::log(running / *h->runtime_ms);
        running = *h->runtime_ms;
      }
      seen.push_back(a);
    }
    return seen;
  }

  pe::SelectionReply Select(const pe::StageRequest& r) {
    const Program parent = ProgramOf(r.parent.candidate_id);
    const std::vector<double> tw = llm_.TechniqueWeights(parent, SeenPool(r.ideas), 1.0, {});
    std::vector<double> w;
    for (const pe::Idea& idea : r.ideas) {
      const int t = llm_.ParseIdea(idea.description);
      double p = t < 0 ? 0.0 : tw[t];
      if (r.attempt > 0 && idea.id == last_selected_[r.island]) p = 0.0;  // told it was wrong
      w.push_back(p);
    }
    if (std::all_of(w.begin(), w.end(), [](double x) { return x <= 0.0; })) w.assign(w.size(), 1.0);
    std::set<std::string> failed;
    for (const pe::FailureEntry& f : r.failures) failed.insert(f.text);

    // It reads the failure log: an idea whose every change of this program
    // already failed is set aside for another one.
    for (size_t tries = 0; tries < r.ideas.size(); ++tries) {
      const size_t k = llm_.rng().Categorical(w);
      const pe::Idea& idea = r.ideas[k];
      last_selected_[r.island] = idea.id;
      const int t = llm_.ParseIdea(idea.description);
      std::vector<int> open;
      for (int level = 0; level < land_.Levels(t); ++level) {
        if (level != parent[t] && !failed.count(llm_.ExperimentText({t, level}, parent))) {
          open.push_back(level);
        }
      }
      if (!open.empty()) {
        Edit e{t, llm_.ProposeLevel(parent, t)};
        if (std::find(open.begin(), open.end(), e.level) == open.end()) {
          e.level = open[llm_.rng().UniformIndex(open.size())];
        }
        return {idea.id, llm_.ExperimentText(e, parent)};
      }
      w[k] = 0.0;
      if (std::all_of(w.begin(), w.end(), [](double x) { return x <= 0.0; })) break;
    }
    // Everything in the pool was tried on this program. Like a model that
    // re-words a known failure with new details, it proposes a variant (a
    // different implementation, so a fresh outcome).
    const pe::Idea& idea = r.ideas[llm_.rng().UniformIndex(r.ideas.size())];
    const int t = llm_.ParseIdea(idea.description);
    const Edit e{t, llm_.ProposeLevel(parent, t)};
    return {idea.id, fmt::format("{}, variant {}", llm_.ExperimentText(e, parent), ++variants_)};
  }

  std::string ImplementAndEvaluate(const pe::StageRequest& r, RunResult& result) {
    const Program parent = ProgramOf(r.parent.candidate_id);
    Edit e;
    if (search_.options().hcm) {
      const std::optional<Edit> parsed = llm_.ParseExperiment(r.experiment);
      if (!parsed) return "unparseable experiment: " + r.experiment;
      e = *parsed;
    } else {
      e = llm_.ProposeEdit(parent, SeenHistory(r), kAnchoring, ExemplarBoost(r));
    }
    const Implemented impl = llm_.Implement(parent, e);
    const std::string id = fmt::format("c{}", ++candidates_);
    if (Status s = search_.ObserveSubmitted(r.id, id); !s.ok()) return s.error().message;
    pe::EvaluationOutcome o;
    o.description = llm_.ExperimentText(e, parent);
    if (impl.failed) {
      o.summary = "compile or correctness failure";
    } else {
      const double m = land_.Measure(impl.program, noise_);
      o.accepted = true;
      o.runtime_ms = m;
      o.source = land_.Signature(impl.program);
      programs_[id] = impl.program;
      best_.Offer(impl.program, m);
    }
    ++result.evaluations;
    if (std::getenv("KFORGE_SIM_TRACE") != nullptr) {
      std::fprintf(stderr, "island %d gen %lld parent [%s] %s -> %s\n", r.island,
                   static_cast<long long>(r.generation), land_.Signature(parent).c_str(),
                   o.description.c_str(),
                   impl.failed ? "FAILED" : fmt::format("{:.4f} ms", *o.runtime_ms).c_str());
    }
    if (Status s = search_.ObserveEvaluation(id, o); !s.ok()) return s.error().message;
    return {};
  }

  // The flat history as the model reads it (HCM off).
  std::vector<SeenAttempt> SeenHistory(const pe::StageRequest& r) const {
    std::vector<SeenAttempt> seen;
    double running = land_.baseline_ms();
    for (const pe::Hypothesis& h : r.history) {
      const std::optional<Edit> e = llm_.ParseExperiment(h.description);
      if (!e) continue;
      SeenAttempt a{e->technique, e->level, false, 0.0, 0};
      const size_t at = h.description.find(" on program p");
      if (at != std::string::npos) {
        a.parent = std::stoull(h.description.substr(at + 13, 12), nullptr, 16);
      }
      if (h.accepted && h.runtime_ms && *h.runtime_ms < running) {
        a.improved = true;
        a.gain = std::log(running / *h.runtime_ms);
        running = *h.runtime_ms;
      }
      seen.push_back(a);
    }
    return seen;
  }

  pe::SummaryReply Summarize(const pe::StageRequest& r) const {
    for (const pe::Idea& idea : r.ideas) {
      if (idea.id != r.idea_id) continue;
      return {fmt::format("{} experiments; best {:.4f} ms", idea.TotalHypotheses(),
                          idea.best_runtime_ms.value_or(land_.baseline_ms()))};
    }
    return {"no findings"};
  }

  pe::PruningReply Prune(const pe::StageRequest& r) const {
    std::vector<const pe::Idea*> order;
    for (const pe::Idea& idea : r.ideas) order.push_back(&idea);
    std::stable_sort(order.begin(), order.end(),
                     [&](auto* a, auto* b) { return Promise(*a, r.ideas) > Promise(*b, r.ideas); });
    pe::PruningReply reply;
    for (size_t i = static_cast<size_t>(r.max_ideas); i < order.size(); ++i) {
      reply.drop_idea_ids.push_back(order[i]->id);
    }
    reply.rationale = "lowest best result for the effort spent";
    return reply;
  }

  const Landscape& land_;
  SyntheticLlm llm_;
  Rng noise_;
  pe::PacEvolveSearch& search_;
  BestTracker best_;
  std::map<std::string, Program> programs_;
  std::map<int, int> last_selected_;
  int64_t candidates_ = 0;
  int64_t variants_ = 0;
};

}  // namespace

RunResult RunPacEvolve(const Landscape& land, uint64_t seed, const Budget& budget,
                       const pe::PacEvolveOptions& options, std::string* error) {
  RunResult r;
  Result<pe::PacEvolveSearch> created =
      pe::PacEvolveSearch::Create(options, land.baseline_ms(), land.floor_ms(), seed);
  if (!created.ok()) {
    *error = created.error().message;
    return r;
  }
  pe::PacEvolveSearch& search = *created;
  PacEvolveDriver driver(land, seed, search);
  while (WithinBudget(budget, r.evaluations, r.llm_calls)) {
    std::optional<pe::StageRequest> req = search.NextRequest();
    if (!req) {
      *error = "no request although nothing is being evaluated";
      return r;
    }
    ++r.llm_calls;
    if (std::string e = driver.Answer(*req, r); !e.empty()) {
      *error = e;
      return r;
    }
  }
  for (int i = 0; i < search.num_islands(); ++i) {
    r.backtracks += search.island(i).backtracks;
    r.crossovers += search.island(i).crossovers;
  }
  r.best_true_ms = driver.best().true_ms;
  r.best_measured_ms = driver.best().measured;
  if (std::getenv("KFORGE_SIM_TRACE_END") != nullptr) {
    for (int i = 0; i < search.num_islands(); ++i) {
      std::fprintf(stderr, "END island %d best %.4f pool:", i, search.island(i).best_runtime_ms);
      for (const pe::Idea& idea : search.island(i).pool.ideas()) {
        std::fprintf(stderr, " [%s|%d]", idea.description.c_str(), idea.TotalHypotheses());
      }
      std::fprintf(stderr, "\n");
    }
    std::fprintf(stderr, "END failures %zu best [%s]\n", search.failure_log().size(),
                 search.BestProgram() ? search.BestProgram()->source.c_str() : "-");
  }
  return r;
}

}  // namespace kforge::bench
