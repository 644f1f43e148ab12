// The knowledge base in a run (KernelBlaster §3, Algorithm 2), as the
// optimize loop uses it:
//
//   prompt      Decorate(): every code proposal gets a "knowledge base" section:
//               the parent's performance state and profile summary, and a
//               weighted-random top-k of the state's techniques (seeded from the
//               run seed and the proposal's slot), asking the model to apply one
//               and name it in a line `Technique: <id>`.
//   candidate   OnCandidate(): the technique the reply names is linked to the
//               candidate by a durable `kb_technique` event (so a resumed run
//               knows it too).
//   evaluation  UpdateFor(): the numeric update's input (speedup over the parent);
//               RunStages() (any thread): the three textual-gradient stages through
//               the run's model client; Apply() (scheduler): the numeric update and
//               the text update on a fresh copy of the stored knowledge base, the
//               durable `kb_update` event, then the store.
//   profiles    on cuda with ncu, the reference and each new best candidate are
//               profiled (NextProfileJob/RunProfile/OnProfile) while no
//               evaluation runs, so ncu never disturbs a timing window.
//
// Exactly-once per candidate across resumes: the `kb_update` event is the
// commit point, written before the knowledge base is saved; Rebuild() reads
// the run's events and never updates for a candidate that has one. A crash
// between the event and the save loses that one update rather than applying
// it twice.
//
// Everything but RunStages() and RunProfile() runs on the scheduler thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "kb/kb_advice.h"
#include "kb/knowledge_base.h"
#include "kb/performance_state.h"
#include "kb/textual_gradient.h"
#include "llm/prompt.h"
#include "run/model_client.h"
#include "run/run_config.h"
#include "search/baseline/prompt_templates.h"
#include "search/strategy.h"
#include "store/store.h"

namespace kforge::run {

// Event types (CONTRACT.md lists kb_update).
inline constexpr const char* kKbTechniqueEvent = "kb_technique";
inline constexpr const char* kKbUpdateEvent = "kb_update";
// The prompt template of the section (prompts/knowledge_base.txt).
inline constexpr const char* kKbTemplate = "knowledge_base";

struct KnowledgeSetup {
  std::string run_id;
  uint64_t seed = 0;
  std::string device;    // cuda | cpu
  std::string hardware;  // the run's hardware text: "NVIDIA H100 (sm_90)" names the arch
  std::filesystem::path task_path;
  std::filesystem::path scratch;  // candidate files for ncu go below it
  int gpu = 0;
  // Native (.cu) candidates: profiled from their built object (see
  // SetNativeBuild); without a way to build them, only the reference is.
  bool native_candidates = false;
  KbRunOptions options;
};

// The knowledge base's key for a run: "cpu" on the CPU (what is learned there
// says nothing about GPUs), the GPU's "sm_XY" from the hardware text on cuda,
// else "cuda".
std::string KnowledgeArch(const std::string& device, const std::string& hardware);

// The section's text from the template and the advice.
Result<std::string> KnowledgeSectionText(const search::PromptTemplates& templates,
                                         const kb::KbAdvice& advice);
// Puts a section into a prompt just before its answer format ("answer"), or at
// the end when there is none; dropped whole before the task when space runs short.
void InsertKnowledgeSection(llm::Prompt& prompt, const std::string& text);

// What the textual-gradient stages and the numeric update need of one evaluation.
struct KnowledgeUpdate {
  std::string candidate_id;
  int island = 0;
  int64_t iteration = 0;
  std::optional<std::string> parent_id;
  std::string technique;
  kb::TechniqueOffer offer;  // as offered (predicted gain at selection)
  kb::AppliedStep step;
  kb::KnowledgeBase snapshot;  // with the numeric update, for the stage prompts
};

// What the three stages answered (null: not asked or failed) and how each went.
struct StageReplies {
  nlohmann::json evaluation;
  nlohmann::json gap;
  nlohmann::json update;
  nlohmann::json status = nlohmann::json::object();  // stage -> "ok" | "failed: ..." | "skipped"
};

struct ProfileJob {
  std::string key;         // a candidate id, or kReferenceKey
  std::string source;      // the candidate's; empty for the reference
  std::optional<int> gpu;  // where to run it; unset: the run's first GPU
};

struct ProfileResult {
  std::string key;
  std::optional<kb::StateClassification> state;
  std::string summary;  // SummarizeProfiles
  std::string error;    // when it failed
};

// A profile as prompts show it: the state with its reasons, then the
// kernels' summary; empty without a state.
std::string ProfileResultText(const ProfileResult& result);

class RunKnowledge {
 public:
  static constexpr const char* kReferenceKey = "reference";

  // Loads the stored knowledge base of the run's architecture (the shipped
  // default when none) and the section template; resolves kb.profile.
  // kBadInput for kb.profile=ncu without cuda or ncu.
  static Result<std::unique_ptr<RunKnowledge>> Open(Store& store, KnowledgeSetup setup,
                                                    const search::PromptTemplates& templates);

  const std::string& arch() const { return kb_.arch(); }
  // Where candidate files for ncu go (the run's scratch directory, made after Open).
  void SetScratch(const std::filesystem::path& scratch) { setup_.scratch = scratch; }
  // How a native candidate's object is had for its profile (the run's
  // compile farm: a cache hit after its evaluation). Called from the
  // profile's thread.
  using NativeBuild = std::function<Result<std::filesystem::path>(const std::string& source)>;
  void SetNativeBuild(NativeBuild build) { native_build_ = std::move(build); }
  bool profiling() const { return profile_; }

  // Resume: techniques named and updates applied, from the run's events.
  void Rebuild(const std::vector<EventRecord>& events);
  // Every evaluation of the run, live and rebuilt, in iteration order: the
  // speedups the numeric update divides by, and which candidates to profile.
  void NoteEvaluation(const CandidateRecord& candidate, const EvaluationRecord& evaluation,
                      bool live);

  // Adds the section to a code proposal. `slot`: the iteration its candidate
  // would get. No-op for structured proposals.
  void Decorate(search::Proposal& proposal, int64_t slot);
  // The proposal's reply became `candidate`: the technique it names, as a
  // kb_technique event to record (nullopt: none named, or not decorated).
  std::optional<EventRecord> OnCandidate(const search::Proposal& proposal,
                                         const CandidateRecord& candidate,
                                         const std::string& reply_text);
  // The proposal ended without a candidate.
  void Forget(uint64_t proposal_id) { advice_.erase(proposal_id); }

  // The update an evaluation calls for: nullopt when the candidate named no
  // technique, its update was already applied (or is under way), or it waits
  // for the candidate's profile (then OnProfile or DropProfiles returns it).
  std::optional<KnowledgeUpdate> UpdateFor(const CandidateRecord& candidate,
                                           const EvaluationRecord& evaluation);
  bool textual_gradient() const { return options_.textual_gradient; }

  // The three stages, through `model` (any thread; touches nothing shared).
  static StageReplies RunStages(ModelClient& model, const KnowledgeUpdate& update);
  // Numeric and text update on the stored knowledge base, the durable
  // kb_update event, then the save. Errors are the store's.
  Result<nlohmann::json> Apply(Store& store, const KnowledgeUpdate& update,
                               const StageReplies& replies);

  // Profiles (cuda with ncu only).
  std::optional<ProfileJob> NextProfileJob();
  bool HasProfileJob() const { return !profile_queue_.empty(); }
  ProfileResult RunProfile(const ProfileJob& job) const;  // any thread
  // Records the profile; returns the updates that were waiting for it.
  std::vector<KnowledgeUpdate> OnProfile(const ProfileResult& result);
  // The run stops: queued profiles are dropped, waiting updates go ahead without.
  std::vector<KnowledgeUpdate> DropProfiles();

 private:
  RunKnowledge(KnowledgeSetup setup, kb::KnowledgeBase kb, search::PromptTemplates templates,
               bool profile);
  std::string ProfileText(const std::string& key) const;

  struct Applied {  // a candidate that named a technique
    kb::KbAdvice advice;
    std::string technique;
    std::optional<std::string> parent_id;
  };

  KnowledgeSetup setup_;
  NativeBuild native_build_;
  KbRunOptions options_;
  kb::KnowledgeBase kb_;
  search::PromptTemplates templates_;
  bool profile_ = false;
  std::map<uint64_t, kb::KbAdvice> advice_;    // by proposal id, while in flight
  std::map<int64_t, int64_t> draws_;           // draws per slot (this process)
  std::map<std::string, Applied> applied_;     // by candidate id
  std::set<std::string> updated_;              // candidates whose update is done or under way
  std::map<std::string, double> speedup_;      // accepted candidates' speedup over eager
  std::map<std::string, std::string> source_;  // accepted candidates' source, for ncu
  std::optional<double> best_speedup_;
  std::string rebuilt_best_;  // the best candidate before a resume, profiled first
  bool profiles_started_ = false;
  std::map<std::string, ProfileResult> profiles_;  // by key
  // Profiled candidates whose state the gap analysis refined (kb.refine_states).
  std::map<std::string, std::string> refined_state_;  // by candidate id
  std::vector<std::string> profile_queue_;
  std::map<std::string, KnowledgeUpdate> awaiting_profile_;  // by candidate id
};

}  // namespace kforge::run
