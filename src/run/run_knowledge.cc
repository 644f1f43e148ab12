#include "run/run_knowledge.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <regex>

#include "common/files.h"
#include "common/line_printer.h"
#include "kb/kb_store.h"
#include "kb/ncu_profiler.h"
#include "kb/textual_gradient.h"

namespace kforge::run {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kSectionName = "knowledge_base";
// Dropped whole after the history (10) and the last attempt (50), before the task.
constexpr int kSectionPriority = 60;
constexpr size_t kShortId = 8;
constexpr size_t kMaxOutcomeLogChars = 600;

// `name` as an executable: a path, or a file found on $PATH.
bool ExecutableFound(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string dirs = path;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::string Short(const std::string& id) {
  return id.substr(0, kShortId);
}

json OptionalNumber(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// The evaluation in words, for the textual-gradient stages.
std::string OutcomeText(const EvaluationRecord& e, std::optional<double> parent_speedup) {
  json eval = json::parse(e.eval_json, nullptr, false);
  if (!eval.is_object()) eval = json::object();
  std::string out;
  if (!eval.value("compiled", false)) {
    std::string log;
    if (auto c = eval.find("compile"); c != eval.end() && c->is_object()) {
      log = c->value("log", "");
    }
    if (log.size() > kMaxOutcomeLogChars) log = log.substr(log.size() - kMaxOutcomeLogChars);
    out = "did not compile or load." + (log.empty() ? "" : "\nBuild log (tail):\n" + log);
  } else if (!eval.value("correct", false)) {
    out = "compiled, but the output was wrong.";
  } else {
    out = fmt::format("compiled and correct; integrity verdict {}{}.", e.verdict,
                      e.accepted ? "" : ", not accepted");
  }
  if (auto i = eval.find("integrity"); i != eval.end() && i->is_object()) {
    for (const json& f : i->value("flags", json::array())) {
      out += fmt::format("\nIntegrity flag {} ({}): {}", f.value("check", "?"),
                         f.value("severity", "?"), f.value("detail", ""));
    }
  }
  if (e.speedup_eager) {
    out += fmt::format("\nSpeedup over eager PyTorch: {:.3f}x", *e.speedup_eager);
    if (parent_speedup) out += fmt::format(" (the parent: {:.3f}x)", *parent_speedup);
    out += ".";
  }
  if (auto err = eval.find("error"); err != eval.end() && err->is_string()) {
    out += "\nError: " + err->get<std::string>();
  }
  return out;
}

llm::Prompt StagePrompt(const std::string& text) {
  llm::Prompt p;
  p.System("role",
           "You maintain kforge's knowledge base of kernel optimizations, keyed by "
           "performance states. Answer with the JSON object asked for.");
  p.Text("stage", text);
  return p;
}

}  // namespace

std::string KnowledgeArch(const std::string& device, const std::string& hardware) {
  if (device != "cuda") return "cpu";
  static const std::regex kArch(R"(sm_(\d+))");
  std::smatch m;
  if (std::regex_search(hardware, m, kArch)) return "sm_" + m[1].str();
  return "cuda";
}

Result<std::string> KnowledgeSectionText(const search::PromptTemplates& templates,
                                         const kb::KbAdvice& advice) {
  return templates.Render(
      kKbTemplate, {{"state", advice.state},
                    {"state_description",
                     advice.state_description.empty() ? "" : " (" + advice.state_description + ")"},
                    {"profile_of", advice.profile_of},
                    {"details", advice.details},
                    {"techniques", kb::OffersText(advice)}});
}

void InsertKnowledgeSection(llm::Prompt& prompt, const std::string& text) {
  llm::PromptSection section;
  section.name = kSectionName;
  section.priority = kSectionPriority;
  section.trim = llm::TrimPolicy::kDropWhole;
  section.items = {text};
  llm::Prompt out;
  bool inserted = false;
  for (const llm::PromptSection& s : prompt.sections()) {
    if (!inserted && s.name == "answer") {
      out.Add(section);
      inserted = true;
    }
    out.Add(s);
  }
  if (!inserted) out.Add(section);
  prompt = std::move(out);
}

RunKnowledge::RunKnowledge(KnowledgeSetup setup, kb::KnowledgeBase kb,
                           search::PromptTemplates templates, bool profile)
    : setup_(std::move(setup)),
      options_(setup_.options),
      kb_(std::move(kb)),
      templates_(std::move(templates)),
      profile_(profile) {}

Result<std::unique_ptr<RunKnowledge>> RunKnowledge::Open(Store& store, KnowledgeSetup setup,
                                                         const search::PromptTemplates& templates) {
  const KbRunOptions& o = setup.options;
  bool profile = false;
  if (o.profile == "ncu") {
    if (setup.device != "cuda") {
      return Error::BadInput("kb.profile=ncu needs a GPU run (--device cuda)");
    }
    if (!ExecutableFound(o.ncu)) {
      return Error::BadInput(fmt::format(
          "kb.profile=ncu: Nsight Compute ('{}', config key kb.ncu) is not found", o.ncu));
    }
    profile = true;
  } else if (o.profile == "auto") {
    profile = setup.device == "cuda" && ExecutableFound(o.ncu);
  }
  // A broken template stops the run before its first call, like the strategies' own.
  if (auto text = KnowledgeSectionText(templates, kb::KbAdvice{}); !text) return text.error();
  auto kb = kb::LoadKnowledgeBase(store, KnowledgeArch(setup.device, setup.hardware));
  if (!kb) return kb.error();
  return std::unique_ptr<RunKnowledge>(
      new RunKnowledge(std::move(setup), std::move(kb).value(), templates, profile));
}

void RunKnowledge::Rebuild(const std::vector<EventRecord>& events) {
  for (const EventRecord& e : events) {
    if (e.type != kKbTechniqueEvent && e.type != kKbUpdateEvent) continue;
    json detail = json::parse(e.detail_json, nullptr, false);
    if (!detail.is_object() || !detail.value("candidate_id", json()).is_string()) continue;
    std::string id = detail["candidate_id"].get<std::string>();
    if (e.type == kKbUpdateEvent) {
      updated_.insert(id);
      if (detail.value("state_refined", json()).is_string()) {
        refined_state_[id] = detail["state_refined"].get<std::string>();
      }
      continue;
    }
    auto advice = kb::KbAdvice::FromJson(detail.value("advice", json()));
    if (!advice || !detail.value("technique", json()).is_string()) continue;
    Applied a{std::move(advice).value(), detail["technique"].get<std::string>(), std::nullopt};
    if (detail.value("parent_id", json()).is_string()) {
      a.parent_id = detail["parent_id"].get<std::string>();
    }
    applied_[id] = std::move(a);
  }
}

void RunKnowledge::NoteEvaluation(const CandidateRecord& c, const EvaluationRecord& e, bool live) {
  if (!e.accepted || e.verdict != "ok" || !e.speedup_eager) return;
  speedup_[c.id] = *e.speedup_eager;
  if (best_speedup_ && *e.speedup_eager <= *best_speedup_) return;
  best_speedup_ = *e.speedup_eager;
  if (!profile_ || !options_.enabled || (setup_.native_candidates && !native_build_)) return;
  // The new best is what the next proposals build on: its state matters most.
  source_[c.id] = c.source;
  if (live) {
    profile_queue_.push_back(c.id);
  } else {
    rebuilt_best_ = c.id;
  }
}

std::string ProfileResultText(const ProfileResult& result) {
  if (!result.state) return "";
  const kb::StateClassification& s = *result.state;
  std::string out = fmt::format("State `{}`: {}", s.state, s.primary);
  if (!s.secondary.empty()) out += "; then " + s.secondary;
  return out + ".\n" + result.summary;
}

std::string RunKnowledge::ProfileText(const std::string& key) const {
  auto it = profiles_.find(key);
  return it == profiles_.end() ? "" : ProfileResultText(it->second);
}

void RunKnowledge::Decorate(search::Proposal& proposal, int64_t slot) {
  // Code prompts and agent briefs; a structured stage writes no candidate.
  if (!options_.enabled || proposal.kind == search::ReplyKind::kStructured) return;
  std::string state = kb::kUnknown;
  std::string profile_of = "The program to improve";
  std::string details;
  std::optional<std::string> parent;
  if (!proposal.parent_ids.empty()) parent = proposal.parent_ids.front();
  auto profiled = [&](const std::string& key) {
    auto it = profiles_.find(key);
    return it != profiles_.end() && it->second.state ? &it->second : nullptr;
  };
  if (const ProfileResult* p = parent ? profiled(*parent) : nullptr) {
    state = p->state->state;
    profile_of = fmt::format("The parent candidate {}", Short(*parent));
    details = ProfileText(*parent);
    if (auto r = refined_state_.find(*parent);
        options_.refine_states && r != refined_state_.end() && kb_.states().count(r->second) > 0) {
      details += fmt::format(
          "\nThe knowledge base's gap analysis of this candidate places it in state `{}` "
          "(the rules above say `{}`).",
          r->second, state);
      state = r->second;
    }
  } else if (const ProfileResult* r = profiled(kReferenceKey)) {
    state = r->state->state;
    profile_of = parent ? "The reference program (its profile stands in for the unprofiled parent)"
                        : "The reference program";
    details = ProfileText(kReferenceKey);
  } else if (profile_) {
    details = "No profile yet: Nsight Compute runs between evaluations, so the state is unknown.";
  } else if (setup_.device == "cuda") {
    details =
        "No profile: Nsight Compute is off (kb.profile) or not found, so the state is unknown.";
  } else {
    details =
        "No profile: kforge profiles with Nsight Compute on a GPU only, so on the CPU the state "
        "is unknown. Reason from the program and its measurements instead.";
  }
  kb::SelectionOptions selection{static_cast<size_t>(options_.top_k), options_.temperature};
  uint64_t seed = kb::SelectionSeed(setup_.seed, slot, draws_[slot]++);
  kb::KbAdvice advice = kb::Advise(kb_, state, profile_of, details, selection, seed);
  if (advice.offers.empty()) return;
  auto text = KnowledgeSectionText(templates_, advice);
  if (!text) return;  // Open() rendered the template: only a vanished file gets here
  InsertKnowledgeSection(proposal.prompt, *text);
  advice_[proposal.id] = std::move(advice);
}

std::optional<EventRecord> RunKnowledge::OnCandidate(const search::Proposal& proposal,
                                                     const CandidateRecord& candidate,
                                                     const std::string& reply_text) {
  auto it = advice_.find(proposal.id);
  if (it == advice_.end()) return std::nullopt;
  kb::KbAdvice advice = std::move(it->second);
  advice_.erase(it);
  std::vector<std::string> offered;
  for (const kb::TechniqueOffer& o : advice.offers) offered.push_back(o.technique);
  std::optional<std::string> technique = kb::ParseTechnique(reply_text, offered);
  if (!technique) return std::nullopt;
  const kb::TechniqueOffer* offer = advice.Find(*technique);
  std::optional<std::string> parent;
  if (!candidate.parent_ids.empty()) parent = candidate.parent_ids.front();
  EventRecord event;
  event.run_id = setup_.run_id;
  event.type = kKbTechniqueEvent;
  event.island = candidate.island;
  event.iteration = candidate.iteration;
  event.detail_json =
      llm::DumpJson({{"candidate_id", candidate.id},
                     {"technique", *technique},
                     {"state", advice.state},
                     {"offered", offer != nullptr},
                     {"predicted_gain", offer ? json(offer->predicted_gain) : json(nullptr)},
                     {"parent_id", parent ? json(*parent) : json(nullptr)},
                     {"advice", advice.ToJson()}});
  applied_[candidate.id] = {std::move(advice), *technique, parent};
  return event;
}

std::optional<KnowledgeUpdate> RunKnowledge::UpdateFor(const CandidateRecord& c,
                                                       const EvaluationRecord& e) {
  auto it = applied_.find(c.id);
  if (!options_.enabled || it == applied_.end() || updated_.count(c.id) > 0) return std::nullopt;
  updated_.insert(c.id);
  const Applied& a = it->second;
  KnowledgeUpdate u;
  u.candidate_id = c.id;
  u.island = static_cast<int>(c.island);
  u.iteration = c.iteration;
  u.parent_id = a.parent_id;
  u.technique = a.technique;
  const kb::TechniqueOffer* offer = a.advice.Find(a.technique);
  // A technique the model named itself starts from a neutral expectation.
  u.offer = offer ? *offer : kb::TechniqueOffer{a.technique, "", "", 1.0};
  std::optional<double> parent_speedup;
  if (a.parent_id) {
    if (auto p = speedup_.find(*a.parent_id); p != speedup_.end()) parent_speedup = p->second;
  }
  // Suspect results teach nothing: only a clean acceptance counts as a measured gain.
  bool usable = e.accepted && e.verdict == "ok" && e.speedup_eager && *e.speedup_eager > 0;
  kb::AppliedStep& s = u.step;
  s.state = a.advice.state;
  s.technique = a.technique;
  s.predicted_gain = u.offer.predicted_gain;
  s.accepted = usable;
  s.speedup = usable ? *e.speedup_eager / parent_speedup.value_or(1.0) : 1.0;
  s.outcome = OutcomeText(e, parent_speedup);
  s.profile_before = a.advice.details;
  s.profile_after = ProfileText(c.id);
  u.snapshot = kb_;
  u.snapshot.Record(s.state, s.technique, {s.accepted, s.speedup});
  if (std::find(profile_queue_.begin(), profile_queue_.end(), c.id) != profile_queue_.end()) {
    awaiting_profile_[c.id] = std::move(u);
    return std::nullopt;
  }
  return u;
}

StageReplies RunKnowledge::RunStages(ModelClient& model, const KnowledgeUpdate& u) {
  StageReplies r;
  const char* stages[] = {kb::kStagePolicyEvaluation, kb::kStagePerfGapAnalysis,
                          kb::kStageParameterUpdate};
  for (const char* stage : stages) r.status[stage] = "skipped";
  auto ask = [&](const char* stage, const std::string& text, const json& schema) -> json {
    try {
      auto reply = model.AskStructured(stage, StagePrompt(text), {stage, "", schema});
      if (!reply) {
        r.status[stage] = "failed: " + reply.error().Describe();
        return nullptr;
      }
      r.status[stage] = "ok";
      return reply->value;
    } catch (const std::exception& e) {
      r.status[stage] = fmt::format("failed: {}", e.what());
      return nullptr;
    }
  };
  // Each stage reads the earlier ones' replies: a failed stage ends the chain.
  r.evaluation = ask(kb::kStagePolicyEvaluation, kb::PolicyEvaluationPrompt(u.snapshot, u.step),
                     kb::PolicyEvaluationSchema());
  if (r.evaluation.is_null()) return r;
  r.gap =
      ask(kb::kStagePerfGapAnalysis, kb::PerfGapAnalysisPrompt(u.snapshot, u.step, r.evaluation),
          kb::PerfGapAnalysisSchema());
  if (r.gap.is_null()) return r;
  r.update = ask(kb::kStageParameterUpdate,
                 kb::ParameterUpdatePrompt(u.snapshot, u.step, r.evaluation, r.gap),
                 kb::ParameterUpdateSchema());
  return r;
}

Result<json> RunKnowledge::Apply(Store& store, const KnowledgeUpdate& u,
                                 const StageReplies& replies) {
  // A fresh copy: another run on this architecture may have learned meanwhile.
  auto fresh = kb::LoadKnowledgeBase(store, kb_.arch());
  if (!fresh) return fresh.error();
  kb::KnowledgeBase& base = *fresh;
  const kb::AppliedStep& s = u.step;
  std::optional<double> old_gain;
  if (const kb::Optimization* o = base.Find(s.state, s.technique)) old_gain = o->PredictedGain();
  const kb::Optimization& recorded = base.Record(s.state, s.technique, {s.accepted, s.speedup});
  double new_gain = recorded.PredictedGain();
  json numbers = {{"attempts", recorded.attempts}, {"successes", recorded.successes}};
  json text_update = nullptr;
  std::string text_error;
  if (replies.update.is_object()) {
    auto changed = kb::ApplyParameterUpdate(base, s, replies.update);
    if (changed) {
      text_update = std::move(changed).value();
    } else {
      text_error = changed.error().message;
    }
  }
  // The LLM refinement of the classification: only for a candidate whose
  // profile the analysis read, and only to a state the base knows (the rules'
  // six, or one a ParameterUpdate discovered, this one included).
  json state_refined = nullptr;
  if (options_.refine_states && !s.profile_after.empty() && replies.gap.is_object() &&
      replies.gap.value("state_after", json()).is_string()) {
    std::string named = replies.gap["state_after"].get<std::string>();
    auto profiled = profiles_.find(u.candidate_id);
    bool differs = profiled == profiles_.end() || !profiled->second.state ||
                   profiled->second.state->state != named;
    if (base.states().count(named) > 0 && differs) state_refined = named;
  }
  json detail = {
      {"candidate_id", u.candidate_id},
      {"parent_id", u.parent_id ? json(*u.parent_id) : json(nullptr)},
      {"technique", s.technique},
      {"state", s.state},
      {"accepted", s.accepted},
      {"speedup_over_parent", s.accepted ? json(s.speedup) : json(nullptr)},
      {"predicted_gain",
       {{"at_selection", u.offer.predicted_gain},
        {"old", OptionalNumber(old_gain)},
        {"new", new_gain}}},
      {"statistics", numbers},
      {"verdict", replies.evaluation.is_object()
                      ? replies.evaluation.value("verdict", json(nullptr))
                      : json(nullptr)},
      {"state_after",
       replies.gap.is_object() ? replies.gap.value("state_after", json(nullptr)) : json(nullptr)},
      {"state_refined", state_refined},
      {"text_update", text_update},
      {"stages", replies.status}};
  if (!text_error.empty()) detail["text_update_error"] = text_error;
  EventRecord event;
  event.run_id = setup_.run_id;
  event.type = kKbUpdateEvent;
  event.island = u.island;
  event.iteration = u.iteration;
  event.detail_json = llm::DumpJson(detail);
  // The event first: it is what a resumed run checks (see the header).
  if (auto seq = store.RecordEvent(event); !seq) return seq.error();
  if (Status st = kb::SaveKnowledgeBase(store, base); !st) return st.error();
  kb_ = std::move(base);
  if (state_refined.is_string()) refined_state_[u.candidate_id] = state_refined.get<std::string>();
  return detail;
}

std::optional<ProfileJob> RunKnowledge::NextProfileJob() {
  if (!profile_ || !options_.enabled) return std::nullopt;
  if (!profiles_started_) {
    profiles_started_ = true;
    std::vector<std::string> first = {kReferenceKey};
    if (!rebuilt_best_.empty()) first.push_back(rebuilt_best_);
    profile_queue_.insert(profile_queue_.begin(), first.begin(), first.end());
  }
  if (profile_queue_.empty()) return std::nullopt;
  ProfileJob job;
  job.key = profile_queue_.front();
  profile_queue_.erase(profile_queue_.begin());
  if (auto it = source_.find(job.key); it != source_.end()) job.source = it->second;
  return job;
}

ProfileResult RunKnowledge::RunProfile(const ProfileJob& job) const {
  ProfileResult r;
  r.key = job.key;
  kb::ProfileRequest req;
  req.task = setup_.task_path;
  req.gpu = job.gpu.value_or(setup_.gpu);
  req.ncu = options_.ncu;
  req.timeout = std::chrono::seconds(options_.profile_timeout_s);
  req.work_dir = setup_.scratch / "kb-profile" / job.key;
  std::error_code ec;
  fs::create_directories(req.work_dir, ec);
  if (!job.source.empty() && setup_.native_candidates) {
    if (!native_build_) {
      r.error = "no way to build native candidates for their profile";
      return r;
    }
    auto library = native_build_(job.source);
    if (!library) {
      r.error = library.error().message;
      return r;
    }
    // A copy: the cache may evict its entry while ncu runs.
    fs::path copy = req.work_dir / "kernel.so";
    fs::copy_file(*library, copy, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      r.error = fmt::format("copying {} for its profile: {}", library->string(), ec.message());
      return r;
    }
    req.native_library = copy;
  } else if (!job.source.empty()) {
    fs::path file = req.work_dir / "candidate.py";
    if (Status st = WriteFileAtomic(file, job.source); !st) {
      r.error = st.error().message;
      return r;
    }
    req.candidate = file;
  }
  try {
    auto profile = kb::ProfileProgram(req);
    if (!profile) {
      r.error = profile.error().message;
      return r;
    }
    r.state = profile->state;
    r.summary = kb::SummarizeProfiles(profile->kernels);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::vector<KnowledgeUpdate> RunKnowledge::OnProfile(const ProfileResult& result) {
  if (!result.error.empty()) {
    LinePrinter::Get().Warn(
        fmt::format("kb: profiling {} failed (the knowledge base goes on "
                    "without its state): {}",
                    result.key == kReferenceKey ? result.key : Short(result.key), result.error));
  }
  profiles_[result.key] = result;
  std::vector<KnowledgeUpdate> ready;
  if (auto it = awaiting_profile_.find(result.key); it != awaiting_profile_.end()) {
    it->second.step.profile_after = ProfileText(result.key);
    ready.push_back(std::move(it->second));
    awaiting_profile_.erase(it);
  }
  return ready;
}

std::vector<KnowledgeUpdate> RunKnowledge::DropProfiles() {
  profile_queue_.clear();
  std::vector<KnowledgeUpdate> ready;
  for (auto& [id, u] : awaiting_profile_) ready.push_back(std::move(u));
  awaiting_profile_.clear();
  return ready;
}

}  // namespace kforge::run
