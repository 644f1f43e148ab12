#include "eval/evaluator.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <utility>

#include "common/files.h"
#include "common/line_printer.h"
#include "eval/baseline_cache.h"
#include "eval/cpu_placement.h"
#include "eval/evaluation_session.h"
#include "eval/harness_process.h"
#include "eval/trial_seed.h"

namespace kforge {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

void RegisterEvalConfig(ConfigSchema& s) {
  EvalOptions d;
  s.Add({"eval.trials", int64_t{d.trials}, "correctness trials with fresh seeds (at least 5)"});
  s.Add({"eval.atol_fp32", d.atol_fp32, "absolute tolerance for fp32 outputs"});
  s.Add({"eval.rtol_fp32", d.rtol_fp32, "relative tolerance for fp32 outputs"});
  s.Add({"eval.atol_half", d.atol_half, "absolute tolerance for fp16/bf16 outputs"});
  s.Add({"eval.rtol_half", d.rtol_half, "relative tolerance for fp16/bf16 outputs"});
  s.Add({"eval.timing.warmup_samples", int64_t{d.warmup_samples},
         "untimed warm-up runs per program"});
  s.Add({"eval.timing.min_samples", int64_t{d.min_samples}, "fewest timed samples per program"});
  s.Add({"eval.timing.max_samples", int64_t{d.max_samples}, "most timed samples per program"});
  s.Add({"eval.timing.batch_samples", int64_t{d.batch_samples}, "samples per interleaved batch"});
  s.Add({"eval.timing.target_noise", d.target_noise,
         "stop when every median's relative standard error is below this"});
  s.Add({"eval.timing.min_seconds", d.min_timing_seconds,
         "shortest timing window (seconds), even when the noise target is met"});
  s.Add({"eval.timing.max_seconds", d.max_timing_seconds, "cap on one timing window (seconds)"});
  s.Add({"eval.timing.race_sigmas", d.race_sigmas,
         "end a candidate's window early once its speedup is this many standard errors below "
         "the best of its session (0: never)"});
  s.Add({"eval.timing.min_sample_ms", d.min_sample_ms,
         "GPU: enough calls per sample that one sample lasts this long (ms)"});
  s.Add({"eval.timing.max_calls_per_sample", int64_t{d.max_calls_per_sample},
         "GPU: most calls in one sample"});
  s.Add({"eval.timing.relocate", d.relocate_between_batches,
         "GPU: new addresses for the timed inputs and outputs before every batch"});
  s.Add(
      {"eval.timing.pin_cpus", d.pin_cpus,
       "GPU: while timing, both harness processes on one CPU near the GPU, the timer on another"});
  s.Add(
      {"eval.timing.compile", d.time_compile, "also time torch.compile (inductor, default mode)"});
  s.Add({"eval.sandbox.compile_timeout_s", d.compile_timeout_s,
         "limit on building/loading a candidate"});
  s.Add({"eval.sandbox.run_timeout_floor_s", d.run_timeout_floor_s,
         "least time allowed per candidate call"});
  s.Add({"eval.sandbox.run_timeout_factor", d.run_timeout_factor,
         "candidate call limit as a multiple of the reference's time"});
  s.Add({"eval.sandbox.memory_limit_mb", int64_t{0}, "candidate memory limit (0: half of RAM)"});
  s.Add({"eval.sandbox.isolate_network", d.isolate_network,
         "run candidates in a fresh network namespace"});
  s.Add({"eval.reuse_reference", d.reuse_reference,
         "keep the reference process, its trial outputs and torch.compile program from one "
         "candidate of a task to the next (optimize, bench)"});
  s.Add({"eval.spare_candidates", int64_t{d.spare_candidates},
         "candidate processes started ahead and warming up (with eval.reuse_reference; each is "
         "stopped during timing windows)"});
  s.Add({"eval.reference_cache_mb", int64_t(d.reference_cache_max_bytes >> 20),
         "device memory the kept reference outputs may take (beyond it they are recomputed)"});
  s.Add({"compile.nvcc", d.nvcc, "CUDA compiler for native (.cu) candidates"});
  s.Add({"compile.prebuild_extensions", d.prebuild_extensions,
         "cuda: build KernelBench candidates' load_inline extensions ahead of their timing, "
         "in parallel, through a cache"});
  s.Add({"compile.cache_max_mb", int64_t(d.native_cache_max_bytes >> 20),
         "size cap of each build cache (native objects, torch extensions), least recently used out "
         "first (0: none)"});
  s.Add({"eval.integrity.suspect_speedup", d.suspect_speedup,
         "speedups above this are marked suspect"});
  s.Add({"eval.integrity.sol_margin", d.sol_margin,
         "flag times below margin × speed-of-light floor"});
  s.Add({"eval.integrity.side_stream_ratio", d.side_stream_ratio,
         "flag when current-stream event time < ratio × device-synchronised time"});
  s.Add({"eval.integrity.allow", std::string(""), "comma-separated extra allowed torch calls"});
  s.Add({"eval.integrity.input_variants", std::string("normal,scaled"),
         "input-distribution variants checked after the trials (comma-separated; empty: none)"});
  s.Add({"eval.integrity.variant_tolerance_factor", d.variant_tolerance_factor,
         "tolerance on an input variant, as a multiple of the task's"});
}

EvalOptions EvalOptionsFromConfig(const Config& c) {
  EvalOptions o;
  o.trials = static_cast<int>(c.GetInt("eval.trials"));
  o.atol_fp32 = c.GetDouble("eval.atol_fp32");
  o.rtol_fp32 = c.GetDouble("eval.rtol_fp32");
  o.atol_half = c.GetDouble("eval.atol_half");
  o.rtol_half = c.GetDouble("eval.rtol_half");
  o.warmup_samples = static_cast<int>(c.GetInt("eval.timing.warmup_samples"));
  o.min_samples = static_cast<int>(c.GetInt("eval.timing.min_samples"));
  o.max_samples = static_cast<int>(c.GetInt("eval.timing.max_samples"));
  o.batch_samples = static_cast<int>(c.GetInt("eval.timing.batch_samples"));
  o.target_noise = c.GetDouble("eval.timing.target_noise");
  o.max_timing_seconds = c.GetDouble("eval.timing.max_seconds");
  o.min_timing_seconds = c.GetDouble("eval.timing.min_seconds");
  o.race_sigmas = c.GetDouble("eval.timing.race_sigmas");
  if (o.race_sigmas < 0) {
    throw OperationError{Error::BadInput("eval.timing.race_sigmas must be >= 0")};
  }
  o.min_sample_ms = c.GetDouble("eval.timing.min_sample_ms");
  o.max_calls_per_sample = static_cast<int>(c.GetInt("eval.timing.max_calls_per_sample"));
  if (o.min_sample_ms < 0 || o.max_calls_per_sample < 1 || o.max_calls_per_sample > 1024) {
    throw OperationError{Error::BadInput(
        "eval.timing: min_sample_ms must be >= 0 and max_calls_per_sample in 1..1024")};
  }
  o.relocate_between_batches = c.GetBool("eval.timing.relocate");
  o.pin_cpus = c.GetBool("eval.timing.pin_cpus");
  o.time_compile = c.GetBool("eval.timing.compile");
  o.compile_timeout_s = c.GetDouble("eval.sandbox.compile_timeout_s");
  o.run_timeout_floor_s = c.GetDouble("eval.sandbox.run_timeout_floor_s");
  o.run_timeout_factor = c.GetDouble("eval.sandbox.run_timeout_factor");
  o.memory_limit_bytes = static_cast<uint64_t>(c.GetInt("eval.sandbox.memory_limit_mb")) << 20;
  o.isolate_network = c.GetBool("eval.sandbox.isolate_network");
  o.reuse_reference = c.GetBool("eval.reuse_reference");
  o.spare_candidates = static_cast<int>(c.GetInt("eval.spare_candidates"));
  if (o.spare_candidates < 0 || o.spare_candidates > kMaxSpareCandidates) {
    throw OperationError{Error::BadInput(
        fmt::format("eval.spare_candidates must be in 0..{}", kMaxSpareCandidates))};
  }
  if (int64_t mb = c.GetInt("eval.reference_cache_mb"); mb >= 0) {
    o.reference_cache_max_bytes = static_cast<uint64_t>(mb) << 20;
  } else {
    throw OperationError{Error::BadInput("eval.reference_cache_mb must be >= 0")};
  }
  o.nvcc = c.GetString("compile.nvcc");
  o.prebuild_extensions = c.GetBool("compile.prebuild_extensions");
  if (int64_t mb = c.GetInt("compile.cache_max_mb"); mb >= 0) {
    o.native_cache_max_bytes = static_cast<uint64_t>(mb) << 20;
  } else {
    throw OperationError{Error::BadInput("compile.cache_max_mb must be >= 0")};
  }
  o.suspect_speedup = c.GetDouble("eval.integrity.suspect_speedup");
  o.sol_margin = c.GetDouble("eval.integrity.sol_margin");
  o.side_stream_ratio = c.GetDouble("eval.integrity.side_stream_ratio");
  auto split = [](const std::string& text) {
    std::vector<std::string> items;
    for (size_t pos = 0; pos < text.size();) {
      size_t comma = text.find(',', pos);
      std::string item =
          text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (!item.empty()) items.push_back(item);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return items;
  };
  o.allowlist = split(c.GetString("eval.integrity.allow"));
  o.input_variants = split(c.GetString("eval.integrity.input_variants"));
  for (const auto& v : o.input_variants) {
    if (v != "normal" && v != "scaled") {
      throw OperationError{Error::BadInput(
          fmt::format("eval.integrity.input_variants: unknown variant '{}' (normal|scaled)", v))};
    }
  }
  o.variant_tolerance_factor = c.GetDouble("eval.integrity.variant_tolerance_factor");
  return o;
}

std::filesystem::path ScratchRoot(const EvalOptions& options) {
  return options.scratch_root.empty() ? fs::temp_directory_path() / "kforge" : options.scratch_root;
}

uint64_t CandidateMemoryLimit(const EvalOptions& options) {
  if (options.memory_limit_bytes) return options.memory_limit_bytes;
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page = ::sysconf(_SC_PAGESIZE);
  uint64_t physical = pages > 0 && page > 0
                          ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                          : (8ULL << 30);
  return physical / 2;
}

namespace {

std::chrono::milliseconds Seconds(double s) {
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000.0));
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One program taking part in a timing window.
struct TimedProgram {
  HarnessProcess* process;
  std::string name;
  std::vector<double> host_ms;  // per sample, all its calls
  std::vector<double> event_ms;
  int calls = 1;  // calls per sample
  bool is_noop = false;
  // The calibration program (the reference process's noop), sampled with
  // the same calls per sample: the handshake and the flushes, without the
  // program.
  TimedProgram* noop = nullptr;

  double OverheadMs() const { return noop ? Median(noop->host_ms) : 0; }

  // Per-call times: (sample − overhead) / calls.
  std::vector<double> Corrected() const {
    double overhead = OverheadMs();
    std::vector<double> out;
    out.reserve(host_ms.size());
    for (double h : host_ms) out.push_back(std::max(h - overhead, 0.0) / calls);
    return out;
  }
};

// A warm-up's estimate of one call: the larger of the noop-corrected host
// time and the current-stream event time. A single-call warm-up sample is
// mostly handshake, so its corrected time alone can come out near zero; the
// events bound it from below for work on the current stream.
double WarmupPerCallMs(const TimedProgram& p) {
  auto corrected = p.Corrected();
  double host = corrected.empty() ? 0 : Median(corrected);
  double events = 0;
  if (!p.event_ms.empty() && p.event_ms.front() >= 0) events = Median(p.event_ms);
  return std::max(host, events);
}

// Calls per sample so that one sample lasts about `min_sample_ms`.
int CallsPerSample(double per_call_ms, double min_sample_ms, int max_calls) {
  if (per_call_ms <= 0) return max_calls;
  double calls = std::ceil(min_sample_ms / per_call_ms);
  return static_cast<int>(std::clamp(calls, 1.0, static_cast<double>(max_calls)));
}

// The evaluation of one candidate, step by step. Holds the two processes and
// everything measured so far; Evaluate() is the only entry point.
class EvaluationRun {
 public:
  EvaluationRun(const EvalOptions& o, const Task& t, const Candidate& c, EvaluationSession& session)
      : opt_(o), task_(t), cand_(c), session_(session) {}

  EvalResult Run();
  // No candidate: the reference's trials, timing window and floor, always
  // measured (the cache is written, not read); the cache record lands in
  // *record.
  EvalResult RunBaselineOnly(json* record);

 private:
  void StartReference();
  void RunStaticChecks();
  void StartCandidate();
  // The candidate process's sandbox and role (its scratch dir is set later).
  HarnessProcess::Options CandidateProcessOptions() const {
    HarnessProcess::Options o;
    o.role = HarnessProcess::Role::kCandidate;
    o.label = "candidate process";
    o.sandbox.rss_limit_bytes = CandidateMemoryLimit(opt_);
    o.sandbox.isolate_network = opt_.isolate_network;
    return o;
  }
  // The candidate's build, before any process: a native object (its path in
  // `*native_library`) or a KernelBench extension (its environment into
  // `o.env`). False when the build failed (r_ says why): the evaluation's answer.
  bool BuildAhead(HarnessProcess::Options& o, std::filesystem::path* native_library,
                  double* seconds);
  bool BuildNative(fs::path* library);
  void RunTrials();
  bool RunCandidateTrial(int k, const json& ref_trial, const fs::path& input_file,
                         const std::optional<int>& reuse, const std::string& poison,
                         bool shift_allocator, fs::path* out_file);
  bool AccumulateComparison(const json& cmp, const std::string& what);
  void CheckReplayedOutput(int k, const json& reply, bool passed, const std::optional<int>& reuse);
  void AssessDegeneracy();
  void RunInputVariants();
  void RerunTimedProgram();
  void TimeWindow(bool with_candidate);
  bool RacedOut(const TimedProgram* eager, const TimedProgram* compiled,
                const TimedProgram* cand) const;
  void CheckTimedOutput();
  void FinalRuntimeChecks();
  void SpeedOfLight();
  void Conclude();

  void Flag(const std::string& check, Severity sev, std::string detail) {
    for (const auto& f : r_.flags) {
      if (f.check == check) return;  // one flag per check id
    }
    // Runtime ids take their severity from the table (integrity.cc).
    sev = RuntimeCheckSeverity(check, opt_.policy).value_or(sev);
    r_.flags.push_back({check, sev, std::move(detail)});
  }
  void CandidateFailed(const std::string& message) {
    r_.correct = false;
    if (!r_.correctness_detail) r_.correctness_detail = message;
    if (!r_.error) r_.error = message;
  }
  [[noreturn]] void TaskFailed(const HarnessError& e) {
    if (e.failure == HarnessFailure::kBadTask) {
      throw OperationError{
          Error::BadInput(fmt::format("task {}: {}", task_.path.string(), e.message))};
    }
    throw OperationError{
        Error::Internal(fmt::format("reference process failed on {}: {}", task_.name, e.message))};
  }
  json RefCall(const json& cmd, std::chrono::milliseconds timeout) {
    auto reply = ref_->Call(cmd, timeout);
    if (auto* e = std::get_if<HarnessError>(&reply)) {
      HarnessError error = *e;
      session_.Discard();  // nothing it kept is trusted after a failure
      TaskFailed(error);
    }
    return std::get<json>(std::move(reply));
  }
  std::chrono::milliseconds RunTimeout() const {
    return Seconds(std::max(opt_.run_timeout_floor_s, opt_.run_timeout_factor * ref_seconds_));
  }
  void ObserveRun(const json& reply, int k);

  const EvalOptions& opt_;
  const Task& task_;
  const Candidate& cand_;
  EvaluationSession& session_;
  EvalResult r_;
  fs::path scratch_;
  HarnessProcess* ref_ = nullptr;  // the session's
  json phases_ = json::object();   // seconds per step of Run()
  // Runs one step of the evaluation and records its wall time.
  template <typename Step>
  void Timed(const char* name, Step step) {
    auto t0 = Clock::now();
    step();
    phases_[name] =
        phases_.value(name, 0.0) + std::chrono::duration<double>(Clock::now() - t0).count();
  }
  std::optional<HarnessProcess> cand_proc_;
  fs::path cand_scratch_;
  std::string gpu_pci_slot_;  // sysfs's name for the GPU, "" when not known
  std::string capability_;    // "9.0"; "" on the CPU
  StaticReport static_;
  bool static_rejected_ = false;
  double atol_ = 0, rtol_ = 0;
  double ref_seconds_ = 0;
  // The candidate's speedup over eager and its error, from the window.
  std::optional<RatioEstimate> speedup_estimate_;
  uint64_t output_bytes_ = 0;
  std::string out_dtype_;
  json ref_trial0_;
  std::vector<json> profiles_;
  int same_as_first_count_ = 0;
  int compared_trials_ = 0;
  std::optional<json> baseline_;
  BaselineKey baseline_key_;
  bool baseline_only_ = false;       // no candidate: kforge baseline
  json* baseline_record_ = nullptr;  // where RunBaselineOnly wants the record
  json extra_ = json::object();
  int thread_baseline_native_ = -1;
  // Per correctness trial: the candidate's output fingerprints and input
  // addresses, whether it passed, and whether the reference's answer equalled
  // trial 0's (the replay checks compare them).
  struct CandidateTrial {
    json fingerprints;
    json input_ptrs;
    bool passed = false;
  };
  std::map<int, CandidateTrial> cand_trials_;
  std::map<int, bool> ref_same_as_first_;
};

void EvaluationRun::StartReference() {
  // Everything the reference's answers depend on: a session loaded for
  // another task (by content: serve writes each request's copy elsewhere) or
  // other options starts afresh.
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", task_.sha256, opt_.device, opt_.gpu, opt_.seed,
                  opt_.dtype.value_or(""), opt_.atol_fp32, opt_.rtol_fp32, opt_.atol_half,
                  opt_.rtol_half, opt_.reference_cache_max_bytes);
  ref_ = session_.Adopt(key);
  if (ref_ == nullptr) {
    HarnessProcess::Options o;
    o.role = HarnessProcess::Role::kReference;
    o.scratch_dir = session_.dir() / "reference";
    o.label = "reference process";
    std::error_code ec;
    fs::create_directories(o.scratch_dir, ec);
    auto p = HarnessProcess::Start(o);
    if (!p) throw OperationError{Error::Internal(p.error().message)};
    ref_ = session_.Install(std::move(p).value(), key);
    json load = {{"cmd", "load"},
                 {"path", task_.path.string()},
                 {"device", opt_.device},
                 {"index", opt_.gpu},
                 {"seed", TrialSeed(opt_.seed, -1)},
                 {"dtype", opt_.dtype ? json(*opt_.dtype) : json(nullptr)},
                 {"reuse", session_.reuse()},
                 {"cache_max_bytes", opt_.reference_cache_max_bytes}};
    json reply = RefCall(load, Seconds(opt_.compile_timeout_s));
    session_.set_load_reply(reply);
    // torch.compile's build (seconds to a minute) runs while the candidate
    // is built and loaded, not after its trials; the first reference call
    // after that waits for it. Only in a session that keeps the program for
    // later candidates, and not for a baseline-only run, which reaches its
    // window straight away.
    if (opt_.time_compile && session_.reuse() && !baseline_only_) {
      if (auto e = ref_->SendAhead({{"cmd", "compile_ahead"}, {"seed", TrialSeed(opt_.seed, 0)}},
                                   Seconds(opt_.compile_timeout_s))) {
        session_.Discard();
        TaskFailed(*e);
      }
    }
  }
  extra_["session"] = {{"reuse", session_.reuse()}, {"reference_evaluation", session_.uses()}};
  const json& dev = session_.load_reply()["device"];
  r_.device_kind = dev.value("kind", "cpu");
  r_.device_name = dev.value("name", "");
  r_.device_index = dev.value("index", 0);
  r_.torch_version = dev.value("torch_version", "");
  capability_ = dev.value("capability", "");
  gpu_pci_slot_ = dev.value("pci_slot", json(nullptr)).is_string()
                      ? dev["pci_slot"].get<std::string>()
                      : std::string();
  ref_->set_spin_for_samples(r_.device_kind == "cuda");
  baseline_key_ = {task_.sha256, r_.device_name, r_.torch_version, opt_.dtype.value_or("default")};
  if (opt_.use_baseline_cache) baseline_ = BaselineCache::Default().Load(baseline_key_);
}

void EvaluationRun::RunStaticChecks() {
  auto report = kforge::RunStaticChecks(cand_, opt_.allowlist, task_.path);
  if (!report) {
    throw OperationError{Error::Internal("static checks: " + report.error().message)};
  }
  static_ = std::move(report).value();
  // A run in fp16/bf16 (--dtype) expects the casts a downcast check looks for.
  const bool half_run = opt_.dtype && (*opt_.dtype == "float16" || *opt_.dtype == "bfloat16");
  for (const auto& f : static_.findings) {
    if (StaticCheckAllowed(f.check, opt_.policy)) continue;
    if (half_run && f.check == "precision_downcast") continue;
    Severity sev = StaticCheckSeverity(f.check, opt_.policy);
    std::string detail = f.line > 0 ? fmt::format("line {}: {}", f.line, f.detail) : f.detail;
    Flag(f.check, sev, detail);
    if (sev == Severity::kReject) static_rejected_ = true;
  }
}

// The untrusted process loads a native object from its own scratch copy.
fs::path CopyIntoScratch(const fs::path& library, const fs::path& scratch) {
  fs::path local = scratch / "kernel.so";
  std::error_code ec;
  fs::create_directories(scratch, ec);
  fs::copy_file(library, local, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    throw OperationError{Error::Internal(fmt::format("copying {} into the candidate's scratch: {}",
                                                     library.string(), ec.message()))};
  }
  return local;
}

void EvaluationRun::StartCandidate() {
  if (!static_.parse_error.empty()) {
    r_.compiled = false;
    r_.error = "candidate does not parse: " + static_.parse_error;
    r_.compile_log = static_.parse_error;
    return;
  }
  HarnessProcess::Options o = CandidateProcessOptions();
  // Built before a process is taken or started: a build that fails is the
  // evaluation's answer, and no process is spent on it or waited for.
  double build_seconds = 0;
  json build_fields = json::object();
  fs::path native_library;
  if (!BuildAhead(o, &native_library, &build_seconds)) return;
  // A process started ahead by the session (Python, torch and the device
  // warmed up, nothing loaded), or a new one.
  std::optional<HarnessProcess> spare = session_.TakeSpareCandidate(&cand_scratch_);
  if (!spare) {
    cand_scratch_ = scratch_ / "candidate";
  }
  o.scratch_dir = cand_scratch_;
  if (!native_library.empty()) {
    build_fields["native_library"] = CopyIntoScratch(native_library, o.scratch_dir).string();
  }
  if (spare) {
    cand_proc_.emplace(std::move(*spare));
  } else {
    auto p = HarnessProcess::Start(o);
    if (!p) throw OperationError{Error::Internal(p.error().message)};
    cand_proc_.emplace(std::move(p).value());
  }
  cand_proc_->set_spin_for_samples(r_.device_kind == "cuda");
  extra_["session"]["spare_candidate"] = spare.has_value();
  extra_["sandbox"] = {{"network_isolated", cand_proc_->network_isolated()},
                       {"memory_limit_bytes", o.sandbox.rss_limit_bytes.value_or(0)},
                       {"process_group", true},
                       {"scratch_dir", o.scratch_dir.string()}};
  if (opt_.isolate_network && !cand_proc_->network_isolated()) {
    LinePrinter::Get().Warn(
        "could not give the candidate a fresh network namespace (no permission): it runs WITH "
        "network access");
  }
  json load = {{"cmd", "load"},
               {"task_path", task_.path.string()},
               {"candidate_path", cand_.path.string()},
               {"format", CandidateFormatName(cand_.format)},
               {"device", r_.device_kind},
               {"index", r_.device_index},
               {"seed", TrialSeed(opt_.seed, -1)},
               {"dtype", opt_.dtype ? json(*opt_.dtype) : json(nullptr)},
               // A spare process was started before its build was known.
               {"env", o.env}};
  load.update(build_fields);
  auto t0 = Clock::now();
  auto reply = cand_proc_->Call(load, Seconds(opt_.compile_timeout_s));
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  r_.compile_seconds = build_seconds + waited;
  if (auto* e = std::get_if<HarnessError>(&reply)) {
    if (e->failure == HarnessFailure::kBadTask) TaskFailed(*e);
    r_.compiled = false;
    r_.error =
        fmt::format("build/load failed ({}): {}", HarnessFailureName(e->failure), e->message);
    r_.compile_log = cand_proc_->StderrTail(8000);
    cand_proc_->Stop();
    return;
  }
  const json& j = std::get<json>(reply);
  r_.compiled = true;
  r_.compile_seconds = build_seconds + j.value("compile_seconds", waited);
  // A native build's log is nvcc's (kept by BuildNative); otherwise the import's.
  if (cand_.format != CandidateFormat::kNative) r_.compile_log = cand_proc_->StderrTail(4000);
  for (const auto& name : j.value("identity_changed", json::array())) {
    Flag("timer_patched", Severity::kReject,
         fmt::format("importing the candidate replaced {}", name.get<std::string>()));
  }
}

bool EvaluationRun::BuildAhead(HarnessProcess::Options& o, fs::path* native_library,
                               double* seconds) {
  if (cand_.format == CandidateFormat::kNative) {
    // Built by kforge's compiler (nvcc only reads the source).
    if (!BuildNative(native_library)) return false;
    *seconds = r_.compile_seconds;
    return true;
  }
  if (cand_.format != CandidateFormat::kKernelBench || !opt_.extension_build) return true;
  ExtensionPrebuild pb = opt_.extension_build(cand_);
  if (!pb.ok) {
    extra_["extension_prebuild"] = {{"error", pb.error}};  // the process builds it instead
    return true;
  }
  *seconds = pb.seconds;
  r_.compile_cached = pb.cached;
  extra_["extension_prebuild"] = {{"seconds", pb.seconds}, {"cached", pb.cached}};
  if (pb.build_failed) {
    // The same source fails the same way in the candidate process.
    r_.compiled = false;
    r_.compile_seconds = pb.seconds;
    r_.error = "build/load failed (candidate_error): " + pb.error;
    r_.compile_log = pb.log;
    return false;
  }
  o.env = pb.env;
  return true;
}

bool EvaluationRun::BuildNative(fs::path* library) {
  if (r_.device_kind != "cuda") {
    r_.compiled = false;
    r_.error = "native (.cu) candidates run on a cuda device only";
    return false;
  }
  compile::NativeBuildRequest request;
  request.source = cand_.source;
  request.arch = NativeArchFor(capability_);
  compile::NativeBuildResult built;
  if (opt_.native_build) {
    built = opt_.native_build(request);
  } else {
    auto b = BuildNativeDefault(opt_, request);
    if (!b) throw OperationError{b.error()};
    built = std::move(b).value();
  }
  constexpr size_t kLogTail = 8000;
  r_.compile_seconds = built.seconds;
  r_.compile_cached = built.cache_hit;
  r_.compile_log =
      built.log.size() > kLogTail ? built.log.substr(built.log.size() - kLogTail) : built.log;
  r_.compile_resources = json::array();
  for (const auto& k : built.resources) r_.compile_resources.push_back(k.ToJson());
  extra_["native_build"] = {{"key", built.key}, {"arch", request.arch}};
  if (!built.ok) {
    r_.compiled = false;
    r_.error =
        "nvcc failed: " + (built.error.empty() ? std::string("see compile.log") : built.error);
    return false;
  }
  *library = built.library;
  return true;
}

void EvaluationRun::ObserveRun(const json& reply, int k) {
  for (const auto& name : reply.value("identity_changed", json::array())) {
    Flag("timer_patched", Severity::kReject,
         fmt::format("running the candidate replaced {}", name.get<std::string>()));
  }
  for (const auto& o : reply.value("outputs", json::array())) {
    int i = o.value("index", 0);
    if (!o.value("exact_tensor", true)) {
      Flag("output_not_tensor", Severity::kReject,
           fmt::format("output {} is a {}, not exactly torch.Tensor", i, o.value("type", "?")));
    }
    if (o.value("aliases_input", false)) {
      Flag("output_aliases_input", Severity::kReject,
           fmt::format("output {} shares storage with an input", i));
    }
    if (o.value("aliases_parameter", false)) {
      Flag("output_aliases_parameter", Severity::kReject,
           fmt::format("output {} shares storage with a parameter or buffer", i));
    }
  }
  if (!reply.value("inputs_changed", json::array()).empty()) {
    Flag("inputs_mutated", Severity::kReject,
         fmt::format("trial {}: the candidate changed input(s) {}", k,
                     reply["inputs_changed"].dump()));
  }
  const json& before = reply["threads_before"];
  const json& after = reply["threads_after"];
  if (before.is_object() && after.is_object()) {
    if (after.value("python", 0) > before.value("python", 0)) {
      Flag("thread_spawned", Severity::kReject,
           fmt::format("trial {}: Python threads {} → {} across the call", k,
                       before.value("python", 0), after.value("python", 0)));
    }
    // Native thread pools (OpenMP, the CUDA runtime) start on first use; a
    // count that still grows after the first call is the candidate's doing.
    int native = after.value("native", -1);
    if (thread_baseline_native_ >= 0 && native > thread_baseline_native_) {
      Flag("thread_spawned", Severity::kReject,
           fmt::format("trial {}: native threads grew {} → {} after warm-up", k,
                       thread_baseline_native_, native));
    }
    thread_baseline_native_ = std::max(thread_baseline_native_, native);
  }
}

bool EvaluationRun::RunCandidateTrial(int k, const json& ref_trial, const fs::path& input_file,
                                      const std::optional<int>& reuse, const std::string& poison,
                                      bool shift_allocator, fs::path* out_file) {
  *out_file = scratch_ / "io" / fmt::format("cand_out_{}_{}.pt", k, poison.empty() ? "x" : poison);
  json run = {{"cmd", "run"},
              {"trial", k},
              {"input_file", input_file.string()},
              {"out_file", out_file->string()},
              {"poison", poison.empty() ? json(nullptr) : json(poison)},
              {"poison_bytes", output_bytes_},
              {"shift_allocator", shift_allocator},
              {"reuse_buffers_of", reuse ? json(*reuse) : json(nullptr)},
              {"retain", k == 0 && poison == "nan"},
              {"keep_inputs", k <= 1}};
  auto reply = cand_proc_->Call(run, RunTimeout());
  if (auto* e = std::get_if<HarnessError>(&reply)) {
    CandidateFailed(
        fmt::format("trial {}: {} ({})", k, e->message, HarnessFailureName(e->failure)));
    if (e->failure == HarnessFailure::kCandidateError) {
      extra_["candidate_traceback"] = cand_proc_->StderrTail(3000);
    }
    cand_proc_->Stop();
    return false;
  }
  const json& ran = std::get<json>(reply);
  ObserveRun(ran, k);
  json cmp = RefCall({{"cmd", "compare"},
                      {"trial", k},
                      {"file", out_file->string()},
                      {"atol", atol_},
                      {"rtol", rtol_}},
                     RunTimeout());
  bool passed = AccumulateComparison(cmp, fmt::format("trial {}", k));
  // The repeat of trial 0 under other poison has the same inputs by design.
  if (poison != "big") CheckReplayedOutput(k, ran, passed, reuse);
  (void)ref_trial;
  return true;
}

void EvaluationRun::CheckReplayedOutput(int k, const json& reply, bool passed,
                                        const std::optional<int>& reuse) {
  CandidateTrial now{reply.value("fingerprints", json::array()),
                     reply.value("input_ptrs", json::array()), passed};
  for (const auto& [j, before] : cand_trials_) {
    if (before.fingerprints.empty() || before.fingerprints != now.fingerprints) continue;
    // Bitwise the same output as trial j. It is a replay when the reference's
    // answer changed: one trial passed and the other failed, or trial 0's
    // answer differs from this one's.
    auto same = ref_same_as_first_.find(k);
    bool answer_changed = before.passed != now.passed ||
                          (j == 0 && same != ref_same_as_first_.end() && !same->second);
    if (!answer_changed) continue;
    bool same_address = (reuse && *reuse == j) || before.input_ptrs == now.input_ptrs;
    if (same_address) {
      Flag("result_caching", Severity::kReject,
           fmt::format("trial {} put new values at the addresses of trial {}'s inputs and got "
                       "trial {}'s output back, bit for bit: the result is cached by address",
                       k, j, j));
    } else {
      Flag("input_independent_output", Severity::kReject,
           fmt::format("trial {}'s output is bit for bit trial {}'s, although the inputs and the "
                       "reference's answer changed: the output does not depend on the inputs",
                       k, j));
    }
    break;
  }
  cand_trials_.emplace(k, std::move(now));
}

bool EvaluationRun::AccumulateComparison(const json& cmp, const std::string& what) {
  ++compared_trials_;
  if (!cmp.value("count_ok", false)) {
    CandidateFailed(fmt::format("{}: {}", what, cmp.value("detail", "output count differs")));
    return false;
  }
  bool passed = true;
  for (size_t i = 0; i < cmp["outputs"].size(); ++i) {
    const json& o = cmp["outputs"][i];
    if (!o.value("shape_ok", false) || !o.value("dtype_ok", false)) {
      CandidateFailed(fmt::format("{}: output {}: {}", what, i, o.value("detail", "mismatch")));
      passed = false;
      continue;
    }
    r_.max_abs_err = std::max(r_.max_abs_err, o.value("max_abs_err", 0.0));
    r_.max_rel_err = std::max(r_.max_rel_err, o.value("max_rel_err", 0.0));
    r_.normwise_rel_err = std::max(r_.normwise_rel_err, o.value("normwise_rel_err", 0.0));
    int64_t nonfinite = o.value("cand_nonfinite", int64_t{0});
    int64_t bad = o.value("mismatched", int64_t{0});
    if (nonfinite > 0) {
      CandidateFailed(fmt::format("{}: output {} has {} NaN/Inf element(s)", what, i, nonfinite));
      passed = false;
    } else if (bad > 0) {
      CandidateFailed(fmt::format(
          "{}: output {}: {} of {} elements outside atol={:g} rtol={:g} (max abs err {:.3g})", what,
          i, bad, o.value("numel", int64_t{0}), atol_, rtol_, o.value("max_abs_err", 0.0)));
      passed = false;
    }
  }
  return passed;
}

void EvaluationRun::RunTrials() {
  fs::create_directories(scratch_ / "io");
  fs::create_directories(session_.io_dir());
  const int trials = std::max(opt_.trials, 1);
  bool cand_ok = r_.compiled && cand_proc_ && cand_proc_->alive();
  r_.correct = cand_ok;
  fs::path first_out;
  // After the first failed trial one more runs: a replayed or constant output
  // shows itself only across two trials (CheckReplayedOutput).
  int diagnostic_trials_left = 1;
  // Trial index `trials` is the extra same-address trial.
  for (int k = 0; k <= trials; ++k) {
    fs::path input_file = session_.io_dir() / fmt::format("inputs_{}.pt", k);
    bool need_inputs = cand_ok && (r_.correct || diagnostic_trials_left > 0);
    if (need_inputs && !r_.correct) --diagnostic_trials_left;
    // Written by the reference for an earlier candidate and untouched since.
    const bool write_inputs = need_inputs && !session_.FileIntact(input_file);
    // Tolerances depend on the output dtype, known after the first trial; the
    // first trial uses fp32 tolerances for its own statistics, then we fix them.
    json trial = RefCall({{"cmd", "trial"},
                          {"trial", k},
                          {"seed", TrialSeed(opt_.seed, k)},
                          {"input_file", write_inputs ? json(input_file.string()) : json(nullptr)},
                          {"atol", atol_ ? atol_ : opt_.atol_fp32},
                          {"rtol", rtol_ ? rtol_ : opt_.rtol_fp32},
                          {"keep", k == 0 || k == 1}},
                         Seconds(std::max(opt_.compile_timeout_s, 600.0)));
    if (write_inputs) session_.RecordFile(input_file);
    if (k == 0) {
      ref_trial0_ = trial;
      ref_seconds_ = trial.value("seconds", 0.0);
      output_bytes_ = 0;
      for (const auto& o : trial["outputs"]) output_bytes_ += o.value("bytes", uint64_t{0});
      out_dtype_ = trial["outputs"].empty() ? "torch.float32"
                                            : trial["outputs"][0].value("dtype", "torch.float32");
      bool half = out_dtype_ == "torch.float16" || out_dtype_ == "torch.bfloat16";
      atol_ = half ? opt_.atol_half : opt_.atol_fp32;
      rtol_ = half ? opt_.rtol_half : opt_.rtol_fp32;
    }
    profiles_.push_back(trial["profile"]);
    if (trial.contains("same_as_first") && trial["same_as_first"].is_boolean()) {
      ref_same_as_first_[k] = trial["same_as_first"].get<bool>();
      if (ref_same_as_first_[k]) ++same_as_first_count_;
    }
    if (need_inputs) {
      fs::path out;
      if (k == 0) {
        // Poisoned first run, then the same inputs again under a different
        // poison and allocator state: the two outputs must agree.
        if (RunCandidateTrial(0, trial, input_file, std::nullopt, "nan", false, &out)) {
          first_out = out;
          const bool first_passed = r_.correct;
          fs::path again;
          // Also after a failed first run: if NaNs it returned were the NaN
          // poison showing through, the repeat under finite poison says so,
          // and the verdict can name the cause.
          if (cand_proc_ && cand_proc_->alive() &&
              RunCandidateTrial(0, trial, input_file, 0, "big", true, &again)) {
            json pair = RefCall({{"cmd", "compare_pair"},
                                 {"file_a", first_out.string()},
                                 {"file_b", again.string()},
                                 {"atol", atol_},
                                 {"rtol", rtol_}},
                                RunTimeout());
            bool same = pair.value("count_ok", false);
            int64_t first_nonfinite = 0, again_nonfinite = 0;
            for (const auto& o : pair.value("outputs", json::array())) {
              same = same && o.value("shape_ok", false) && o.value("mismatched", int64_t{1}) == 0 &&
                     o.value("cand_nonfinite", int64_t{0}) == 0;
              first_nonfinite += o.value("ref_nonfinite", int64_t{0});
              again_nonfinite += o.value("cand_nonfinite", int64_t{0});
            }
            // A wrong candidate that makes the same NaNs every time is wrong,
            // not memory-dependent: only NaNs that vanish with the poison count.
            bool depends = first_passed ? !same : first_nonfinite > again_nonfinite;
            if (depends) {
              Flag("output_depends_on_memory_state", Severity::kReject,
                   "the same inputs gave different outputs under different poison and allocator "
                   "state: the output reads memory it never wrote");
            }
            fs::remove(again);
          }
        }
      } else if (k == trials) {
        // New values at the addresses of trial 1: defeats caching by pointer.
        RunCandidateTrial(k, trial, input_file, 1, "", false, &out);
        extra_["same_address_trial"] = true;
      } else {
        RunCandidateTrial(k, trial, input_file, std::nullopt, "", false, &out);
      }
      if (k != 0) fs::remove(out);
      if (k != 0 && k != 1) session_.DropFile(input_file);
    }
    if (k > 1) RefCall({{"cmd", "drop"}, {"trial", k}}, Seconds(60));
    cand_ok = cand_proc_ && cand_proc_->alive();
    if (!cand_ok && r_.compiled) r_.correct = false;
  }
  RefCall({{"cmd", "drop"}, {"trial", 1}}, Seconds(60));
  r_.trials = trials;
  if (!first_out.empty()) fs::remove(first_out);
}

void EvaluationRun::AssessDegeneracy() {
  std::vector<std::vector<OutputProfile>> profiles;
  for (const auto& trial : profiles_) {
    auto& seed = profiles.emplace_back();
    for (const auto& o : trial) seed.push_back(ParseOutputProfile(o));
  }
  auto d = JudgeDegeneracy(profiles, same_as_first_count_, atol_, rtol_);
  if (!d) return;
  r_.degenerate = true;
  r_.degenerate_kind = d->kind;
  r_.degenerate_reason = d->reason;
  // Nothing is accepted on a degenerate task; the flag says why in the
  // candidate's own verdict (suspect: kept, shown, left out of aggregates).
  Flag("degenerate_task", Severity::kWarn, "the task is degenerate: " + d->reason);
}

namespace {

// Trial ids of the extra reference computations (kept apart from the
// correctness trials 0..trials).
constexpr int kRerunTrial = 1000;
constexpr int kVariantTrialBase = 2000;

// Why an input variant cannot judge the candidate, or "" when it can.
std::string VariantSkipReason(const json& ref) {
  std::vector<OutputProfile> outs;
  for (const auto& o : ref.value("profile", json::array())) outs.push_back(ParseOutputProfile(o));
  return kforge::VariantSkipReason(
      ref.value("changed_inputs", 0), outs,
      ref.value("same_as_base", json(false)).is_boolean() && ref["same_as_base"].get<bool>());
}

bool ComparisonPassed(const json& cmp) {
  bool ok = cmp.value("count_ok", false);
  for (const auto& o : cmp.value("outputs", json::array())) {
    ok = ok && o.value("shape_ok", false) && o.value("dtype_ok", false) &&
         o.value("mismatched", int64_t{1}) == 0 && o.value("cand_nonfinite", int64_t{1}) == 0;
  }
  return ok;
}

}  // namespace

void EvaluationRun::RunInputVariants() {
  if (opt_.input_variants.empty() || r_.degenerate || !r_.correct || !cand_proc_ ||
      !cand_proc_->alive()) {
    return;
  }
  json report = json::array();
  int v = 0;
  for (const auto& variant : opt_.input_variants) {
    const int id = kVariantTrialBase + v++;
    fs::path input_file = session_.io_dir() / fmt::format("variant_{}.pt", variant);
    const bool write_inputs = !session_.FileIntact(input_file);
    fs::path out_file = scratch_ / "io" / fmt::format("variant_out_{}.pt", variant);
    json ref = RefCall({{"cmd", "variant"},
                        {"trial", id},
                        {"base_trial", 0},
                        {"variant", variant},
                        {"seed", TrialSeed(opt_.seed, id)},
                        {"input_file", write_inputs ? json(input_file.string()) : json(nullptr)},
                        {"atol", atol_},
                        {"rtol", rtol_}},
                       Seconds(std::max(opt_.compile_timeout_s, 600.0)));
    if (write_inputs && ref.value("changed_inputs", 0) > 0) session_.RecordFile(input_file);
    json entry = {{"variant", variant}, {"used", false}};
    if (std::string skip = VariantSkipReason(ref); !skip.empty()) {
      entry["skipped"] = skip;
      report.push_back(entry);
      RefCall({{"cmd", "drop"}, {"trial", id}}, Seconds(60));
      session_.DropFile(input_file);
      continue;
    }
    // The task's tolerance, widened: a shortcut is wrong by far more, and the
    // honest kernel's rounding grows with the output's magnitude.
    double scale = 1;
    const json& prof = ref["profile"];
    const json& base = ref.value("base_profile", json::array());
    for (size_t i = 0; i < prof.size() && i < base.size(); ++i) {
      double b = base[i].value("max_abs", 0.0);
      if (b > 0) scale = std::max(scale, prof[i].value("max_abs", 0.0) / b);
    }
    const double atol = opt_.variant_tolerance_factor * atol_ * scale;
    const double rtol = opt_.variant_tolerance_factor * rtol_;
    json run = {{"cmd", "run"},
                {"trial", id},
                {"input_file", input_file.string()},
                {"out_file", out_file.string()},
                {"poison", nullptr},
                {"poison_bytes", output_bytes_},
                {"shift_allocator", false},
                {"reuse_buffers_of", nullptr},
                {"retain", false},
                {"keep_inputs", false}};
    auto reply = cand_proc_->Call(run, RunTimeout());
    entry["used"] = true;
    entry["atol"] = atol;
    entry["rtol"] = rtol;
    if (auto* e = std::get_if<HarnessError>(&reply)) {
      Flag("input_distribution_shortcut", Severity::kReject,
           fmt::format("correct on the task's inputs, but failed on the '{}' input variant: {}",
                       variant, e->message));
      entry["error"] = e->message;
      report.push_back(entry);
      session_.DropFile(input_file);
      break;
    }
    ObserveRun(std::get<json>(reply), id);
    json cmp = RefCall({{"cmd", "compare"},
                        {"trial", id},
                        {"file", out_file.string()},
                        {"atol", atol},
                        {"rtol", rtol}},
                       RunTimeout());
    bool ok = ComparisonPassed(cmp);
    entry["passed"] = ok;
    int64_t bad = 0, numel = 0;
    double err = 0;
    for (const auto& o : cmp.value("outputs", json::array())) {
      bad += o.value("mismatched", int64_t{0});
      numel += o.value("numel", int64_t{0});
      err = std::max(err, o.value("max_abs_err", 0.0));
    }
    entry["max_abs_err"] = err;
    if (!ok) {
      Flag("input_distribution_shortcut", Severity::kReject,
           fmt::format("correct on the task's inputs, wrong on the '{}' input variant ({} of {} "
                       "elements outside atol={:g} rtol={:g}, max abs err {:.3g}): the kernel "
                       "relies on the task's input distribution",
                       variant, bad, numel, atol, rtol, err));
    }
    report.push_back(entry);
    RefCall({{"cmd", "drop"}, {"trial", id}}, Seconds(60));
    session_.DropFile(input_file);
    fs::remove(out_file);
  }
  extra_["input_variants"] = report;
}

void EvaluationRun::RerunTimedProgram() {
  fs::path in = session_.io_dir() / "rerun_inputs.pt";
  const bool write_inputs = !session_.FileIntact(in);
  fs::path out = scratch_ / "io" / "rerun_out.pt";
  RefCall({{"cmd", "trial"},
           {"trial", kRerunTrial},
           {"seed", TrialSeed(opt_.seed, kRerunTrial)},
           {"input_file", write_inputs ? json(in.string()) : json(nullptr)},
           {"atol", atol_},
           {"rtol", rtol_},
           {"keep", false}},
          Seconds(std::max(opt_.compile_timeout_s, 600.0)));
  if (write_inputs) session_.RecordFile(in);
  auto reply = cand_proc_->Call({{"cmd", "rerun_timed"},
                                 {"trial", 0},
                                 {"input_file", in.string()},
                                 {"out_file", out.string()}},
                                RunTimeout());
  if (auto* e = std::get_if<HarnessError>(&reply)) {
    Flag("timed_output_mismatch", Severity::kReject,
         "the timed program failed on new values at its inputs' addresses: " + e->message);
  } else {
    json cmp = RefCall({{"cmd", "compare"},
                        {"trial", kRerunTrial},
                        {"file", out.string()},
                        {"atol", atol_},
                        {"rtol", rtol_}},
                       RunTimeout());
    if (!ComparisonPassed(cmp)) {
      Flag("timed_output_mismatch", Severity::kReject,
           "after the timing window, new values at the timed inputs' addresses gave a wrong "
           "output: the timed program returns a stale answer");
    }
  }
  RefCall({{"cmd", "drop"}, {"trial", kRerunTrial}}, Seconds(60));
  session_.DropFile(in);
  fs::remove(out);
}

namespace {

// What a timing window changes on the host, undone however the window ends:
// the CPU placement (cpu_placement.h) and the frozen candidate. While the
// reference's batches run, the candidate's whole process group is stopped,
// so nothing it left running (a thread, a child) competes with the
// reference for a CPU, shared or not.
class WindowHostState {
 public:
  WindowHostState(HarnessProcess* reference, HarnessProcess* candidate)
      : reference_(reference), candidate_(candidate) {}
  WindowHostState(const WindowHostState&) = delete;
  WindowHostState& operator=(const WindowHostState&) = delete;

  ~WindowHostState() {
    Thaw();
    for (HarnessProcess* p : pinned_) {
      if (p->alive()) p->Call({{"cmd", "pin"}, {"cpus", nullptr}}, kPinTimeout);
    }
  }

  // Places the harness processes and this thread; the record for extra.
  json Place(const std::string& pci_slot, int gpu_index) {
    std::set<int> allowed = AllowedCpus();
    auto local = ReadGpuLocalCpus("/sys", pci_slot);
    auto plan = PlanCpuPlacement(allowed, local.value_or(std::set<int>{}), gpu_index);
    if (!plan.ok()) return {{"skipped", plan.error().message}};
    json record = {{"harness_cpu", plan->harness_cpu},
                   {"timer_cpu", plan->timer_cpu},
                   {"gpu_local_known", local.has_value()}};
    for (HarnessProcess* p : {reference_, candidate_}) {
      if (p == nullptr) continue;
      auto reply = p->Call({{"cmd", "pin"}, {"cpus", {plan->harness_cpu}}}, kPinTimeout);
      if (auto* e = std::get_if<HarnessError>(&reply)) {
        return {{"skipped", "a harness process could not be bound: " + e->message}};
      }
      pinned_.push_back(p);
      if (std::get<json>(reply).value("cpus", json()) != json::array({plan->harness_cpu})) {
        record["binding_refused"] = true;  // a cpuset narrower than the mask said
      }
    }
    timer_.emplace(plan->timer_cpu);
    if (!timer_->ok()) record["timer_binding_refused"] = true;
    return record;
  }

  // Before a batch of `p`: the candidate is frozen while the reference runs.
  void BeforeBatchOf(const HarnessProcess* p) {
    if (candidate_ == nullptr) return;
    if (p == reference_) {
      if (!frozen_) candidate_->Freeze();
      frozen_ = true;
    } else {
      Thaw();
    }
  }

  void Thaw() {
    if (frozen_ && candidate_ != nullptr) candidate_->Thaw();
    frozen_ = false;
  }

 private:
  static constexpr std::chrono::milliseconds kPinTimeout{10000};
  HarnessProcess* reference_;
  HarnessProcess* candidate_;
  std::vector<HarnessProcess*> pinned_;
  std::optional<ThreadCpuBinding> timer_;
  bool frozen_ = false;
};

}  // namespace

void EvaluationRun::TimeWindow(bool with_candidate) {
  std::vector<std::unique_ptr<TimedProgram>> programs;
  auto add = [&](HarnessProcess* p, const std::string& name, bool noop) {
    auto tp = std::make_unique<TimedProgram>();
    tp->process = p;
    tp->name = name;
    tp->is_noop = noop;
    programs.push_back(std::move(tp));
    return programs.back().get();
  };
  json setup = RefCall({{"cmd", "setup_timing"}, {"trial", 0}, {"compile", opt_.time_compile}},
                       Seconds(opt_.compile_timeout_s));
  // One noop, in the reference process, corrects every program: the
  // harness's rounds are the same code in both processes. A noop per
  // process let each process's own overhead estimate into its result: on
  // the H100, L1 12's raw samples agreed within 1% while the two noops
  // differed by 6%, which came out as a speedup of 1.066 (0.987 with the
  // reference's noop for both; twelve runs 0.977–1.020 against 0.978–1.066).
  // It also keeps the candidate from shrinking its own result by slowing
  // its own noop.
  TimedProgram* ref_noop = add(ref_, "noop", true);
  auto add_timed = [&](HarnessProcess* p, const std::string& name) {
    TimedProgram* prog = add(p, name, false);
    prog->noop = ref_noop;
    return prog;
  };
  extra_["reference_threads_at_timing"] = setup.value("threads", json());
  TimedProgram* eager = add_timed(ref_, "eager");
  TimedProgram* compiled = nullptr;
  if (setup["compile"].is_object()) {
    if (setup["compile"].value("ok", false)) {
      compiled = add_timed(ref_, "compile");
      extra_["torch_compile_seconds"] = setup["compile"].value("seconds", 0.0);
      // Built for an earlier candidate of the task in this session.
      if (setup["compile"].value("reused", false)) extra_["torch_compile_reused"] = true;
      // Built while the candidate was built and loaded (its seconds overlapped).
      if (setup["compile"].value("ahead", false)) extra_["torch_compile_ahead"] = true;
    } else {
      extra_["torch_compile_error"] = setup["compile"].value("error", "");
    }
  }
  TimedProgram* cand = nullptr;
  if (with_candidate) {
    auto reply = cand_proc_->Call({{"cmd", "setup_timing"}, {"trial", 0}}, RunTimeout());
    if (auto* e = std::get_if<HarnessError>(&reply)) {
      CandidateFailed("timing setup: " + e->message);
      with_candidate = false;
    } else {
      cand = add_timed(&*cand_proc_, "candidate");
    }
  }
  WindowHostState host(ref_, with_candidate ? &*cand_proc_ : nullptr);
  if (opt_.pin_cpus && r_.device_kind == "cuda") {
    extra_["cpu_placement"] = host.Place(gpu_pci_slot_, r_.device_index);
  }
  extra_["candidate_frozen_during_reference"] = with_candidate;
  std::mt19937_64 rng(opt_.seed ^ 0x5eedULL);
  // A failure inside the window: the reference's ends the operation, the
  // candidate's is a failed evaluation (false).
  auto window_failed = [&](TimedProgram* p, const HarnessError& e, const std::string& while_) {
    if (p->process == ref_) TaskFailed(e);
    CandidateFailed(while_ + ": " + e.message);
    return false;
  };
  auto sample = [&](TimedProgram* p) -> bool {
    auto s = p->process->Sample(p->name, p->calls, RunTimeout());
    if (auto* e = std::get_if<HarnessError>(&s)) return window_failed(p, *e, "while timed");
    p->host_ms.push_back(std::get<SampleTiming>(s).host_ms);
    p->event_ms.push_back(std::get<SampleTiming>(s).event_ms);
    return true;
  };
  // Warm-up: module loading, autotuning and allocator growth stay out. It
  // also measures one call, which sets the calls per sample on a GPU (a CPU
  // sample stays one call: its host clock needs no amortising).
  for (auto& p : programs) {
    host.BeforeBatchOf(p->process);
    for (int i = 0; i < opt_.warmup_samples; ++i) {
      if (!sample(p.get())) return;
    }
  }
  // One calls-per-sample for the whole window, set by its fastest program:
  // programs that are compared then have samples of the same shape (the same
  // number of flushes, syncs and handshake rounds), so whatever the noop
  // correction leaves behind is alike for both. Per-call times from separate
  // warm-ups (17 vs 33 calls for one kernel, seen on an H100) put a bias of
  // several percent between a reference and an identical candidate.
  if (r_.device_kind == "cuda") {
    double fastest = 0;
    for (auto& p : programs) {
      if (p->is_noop) continue;
      double per_call = WarmupPerCallMs(*p);
      if (per_call > 0 && (fastest == 0 || per_call < fastest)) fastest = per_call;
    }
    int calls = CallsPerSample(fastest, opt_.min_sample_ms, opt_.max_calls_per_sample);
    for (auto& p : programs) p->calls = calls;
  }
  for (auto& p : programs) {
    p->host_ms.clear();
    p->event_ms.clear();
  }
  // A placement per batch (see timing.py): both processes draw from the same
  // distribution of addresses, so neither keeps a lucky one for the window.
  const bool relocate = opt_.relocate_between_batches && r_.device_kind == "cuda";
  int relocations = 0, relocations_skipped = 0;
  auto relocate_for = [&](TimedProgram* p) -> bool {
    auto reply = p->process->Call({{"cmd", "relocate"}, {"seed", rng()}}, RunTimeout());
    if (auto* e = std::get_if<HarnessError>(&reply)) {
      return window_failed(p, *e, "while relocating timed inputs");
    }
    (std::get<json>(reply).value("moved", false) ? relocations : relocations_skipped)++;
    return true;
  };
  auto batch = [&](TimedProgram* p) -> bool {
    host.BeforeBatchOf(p->process);
    if (relocate && !p->is_noop && !relocate_for(p)) return false;
    for (int i = 0; i < opt_.batch_samples; ++i) {
      if (!sample(p)) return false;
    }
    return true;
  };
  auto start = Clock::now();
  std::vector<TimedProgram*> order;
  for (auto& p : programs) order.push_back(p.get());
  for (;;) {
    std::shuffle(order.begin(), order.end(), rng);
    bool candidate_failed = false;
    for (TimedProgram* p : order) {
      if (candidate_failed && p->process == &*cand_proc_) continue;
      // A reference failure ends the operation inside batch(); a false
      // return is the candidate's.
      if (!batch(p)) candidate_failed = true;
    }
    if (candidate_failed) {
      // Drop the candidate from the window; finish the baselines.
      cand = nullptr;
      std::erase_if(order, [&](TimedProgram* q) { return q->process == &*cand_proc_; });
    }
    bool enough = true, capped = false;
    for (TimedProgram* p : order) {
      if (p->is_noop) continue;
      auto c = p->Corrected();
      if (static_cast<int>(c.size()) < opt_.min_samples ||
          BatchedMedianError(c, opt_.batch_samples) > opt_.target_noise) {
        enough = false;
      }
      if (static_cast<int>(c.size()) >= opt_.max_samples) capped = true;
    }
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    // A few quiet samples are not enough: clock and thermal drift act over
    // tenths of a second, and only a window that long, of many shuffled
    // batches, lets them hit every program alike.
    const bool long_enough = elapsed >= opt_.min_timing_seconds;
    if (!long_enough) enough = false;
    const bool raced = !enough && long_enough && cand != nullptr && RacedOut(eager, compiled, cand);
    if (enough || raced || capped || elapsed > opt_.max_timing_seconds) {
      extra_["timing_window"] = {{"seconds", elapsed},
                                 {"stopped_by", enough   ? "noise_target"
                                                : raced  ? "clear_of_best"
                                                : capped ? "max_samples"
                                                         : "time_cap"},
                                 {"relocations", relocations},
                                 {"relocations_skipped", relocations_skipped}};
      // Each program's noise when the window ended: which one kept a long
      // window open is then read off the result, not guessed.
      json noise = json::object();
      for (TimedProgram* p : order) {
        auto c = p->Corrected();
        noise[p->name] = {
            {"samples", c.size()},
            {"median_ms", c.empty() ? 0.0 : Median(c)},
            {"rel_error",
             p->is_noop ? json(nullptr) : json(BatchedMedianError(c, opt_.batch_samples))}};
      }
      extra_["timing_window"]["programs"] = std::move(noise);
      if (cand != nullptr) {
        speedup_estimate_ = MedianRatio(eager->Corrected(), cand->Corrected(), opt_.batch_samples);
        extra_["timing_window"]["speedup_rel_error"] = speedup_estimate_->rel_error;
      }
      if (const auto& best = session_.best_speedup(); best && cand != nullptr) {
        extra_["timing_window"]["session_best_speedup"] = best->value;
      }
      break;
    }
  }
  auto summarize = [&](TimedProgram* p) {
    TimingSummary t;
    t.stats = Summarize(p->Corrected());
    t.overhead_ms = p->OverheadMs();
    t.calls_per_sample = p->calls;
    if (!p->event_ms.empty() && p->event_ms.front() >= 0) t.event_median_ms = Median(p->event_ms);
    return t;
  };
  r_.eager_ms = summarize(eager);
  if (compiled) r_.compile_ms = summarize(compiled);
  if (cand) r_.candidate_ms = summarize(cand);
}

// The racing rule (sample_stats.h ClearlyBelowBest) against the session's
// best: the reward milestones drawn from the window must be settled as well.
bool EvaluationRun::RacedOut(const TimedProgram* eager, const TimedProgram* compiled,
                             const TimedProgram* cand) const {
  const auto& best = session_.best_speedup();
  if (!best || opt_.race_sigmas <= 0) return false;
  auto c = cand->Corrected();
  if (static_cast<int>(c.size()) < opt_.min_samples) return false;
  RatioEstimate over_eager = MedianRatio(eager->Corrected(), c, opt_.batch_samples);
  std::vector<RatioDecision> decisions = {{over_eager, kMilestoneMargin}};
  if (compiled != nullptr) {
    decisions.push_back(
        {MedianRatio(compiled->Corrected(), c, opt_.batch_samples), kMilestoneMargin});
  }
  return ClearlyBelowBest(over_eager, *best, opt_.race_sigmas, decisions);
}

void EvaluationRun::CheckTimedOutput() {
  fs::path out = scratch_ / "io" / "timed_out.pt";
  auto reply = cand_proc_->Call({{"cmd", "dump_timed"}, {"out_file", out.string()}}, RunTimeout());
  if (auto* e = std::get_if<HarnessError>(&reply)) {
    Flag("timed_output_mismatch", Severity::kReject,
         "no output from the timed runs: " + e->message);
    return;
  }
  json cmp = RefCall(
      {{"cmd", "compare"}, {"trial", 0}, {"file", out.string()}, {"atol", atol_}, {"rtol", rtol_}},
      RunTimeout());
  bool ok = cmp.value("count_ok", false);
  for (const auto& o : cmp.value("outputs", json::array())) {
    ok = ok && o.value("shape_ok", false) && o.value("mismatched", int64_t{1}) == 0 &&
         o.value("cand_nonfinite", int64_t{1}) == 0;
  }
  if (!ok) {
    Flag("timed_output_mismatch", Severity::kReject,
         "the output produced while timed differs from the reference");
  }
  fs::remove(out);
  RerunTimedProgram();
}

void EvaluationRun::FinalRuntimeChecks() {
  auto reply = cand_proc_->Call({{"cmd", "final_checks"}}, RunTimeout());
  if (auto* e = std::get_if<HarnessError>(&reply)) {
    CandidateFailed("final checks: " + e->message);
    return;
  }
  const json& j = std::get<json>(reply);
  if (!j.value("outputs_mutated_later", json::array()).empty()) {
    Flag("output_mutated_later", Severity::kReject,
         fmt::format("outputs of trial(s) {} changed after later calls",
                     j["outputs_mutated_later"].dump()));
  }
  for (const auto& name : j.value("identity_changed", json::array())) {
    Flag("timer_patched", Severity::kReject,
         fmt::format("the candidate replaced {}", name.get<std::string>()));
  }
}

void EvaluationRun::SpeedOfLight() {
  json sol;
  if (baseline_ && baseline_->contains("sol") && (*baseline_)["sol"].is_object()) {
    sol = (*baseline_)["sol"];
  } else {
    // Measured ceilings (bandwidth, matmul rate): timed like a window, so
    // nothing of the spares runs beside them (on a small CPU host a spare
    // importing torch halves the measured bandwidth).
    SparesPaused paused(session_);
    sol = RefCall({{"cmd", "sol"}, {"trial", 0}}, Seconds(600));
    sol.erase("ok");
  }
  double bw = sol.value("bandwidth_bytes_per_s", 0.0);
  double peak = sol.value("matmul_flops_per_s", 0.0);
  double bytes = sol.value("bytes", 0.0);
  double mem_ms = bw > 0 ? bytes / bw * 1e3 : 0;
  double flop_ms = 0;
  if (sol.contains("flops") && sol["flops"].is_number() && peak > 0) {
    flop_ms = sol["flops"].get<double>() / peak * 1e3;
  }
  double floor_ms = std::max(mem_ms, flop_ms);
  sol["memory_floor_ms"] = mem_ms;
  sol["compute_floor_ms"] = flop_ms;
  r_.sol_detail = sol;
  if (floor_ms > 0) r_.sol_floor_ms = floor_ms;
}

void EvaluationRun::Conclude() {
  if (r_.candidate_ms && r_.eager_ms && r_.candidate_ms->stats.median > 0) {
    r_.speedup_eager = r_.eager_ms->stats.median / r_.candidate_ms->stats.median;
    if (r_.compile_ms)
      r_.speedup_compile = r_.compile_ms->stats.median / r_.candidate_ms->stats.median;
  }
  if (r_.candidate_ms && r_.sol_floor_ms) {
    double t = r_.candidate_ms->stats.median;
    r_.sol_fraction = t > 0 ? *r_.sol_floor_ms / t : 0;
    if (t < opt_.sol_margin * *r_.sol_floor_ms) {
      Flag("below_sol_floor", Severity::kWarn,
           fmt::format("median {:.4f} ms is below {:.0f}% of the speed-of-light floor {:.4f} ms", t,
                       100 * opt_.sol_margin, *r_.sol_floor_ms));
    }
  }
  if (r_.candidate_ms && r_.candidate_ms->event_median_ms) {
    double host = r_.candidate_ms->stats.median;
    double ev = *r_.candidate_ms->event_median_ms;
    // Work the current stream's events do not cover ran on another stream.
    if (host > 0.02 && ev < opt_.side_stream_ratio * host) {
      Flag("side_stream", Severity::kWarn,
           fmt::format("current-stream events saw {:.4f} ms of {:.4f} ms device-synchronised "
                       "time: work ran on another stream (it is counted in the timing)",
                       ev, host));
    }
  }
  if (r_.speedup_eager && *r_.speedup_eager > opt_.suspect_speedup) {
    Flag("implausible_speedup", Severity::kWarn,
         fmt::format("{:.1f}x over eager exceeds the plausibility threshold {:.0f}x",
                     *r_.speedup_eager, opt_.suspect_speedup));
  }
  // A check of a draft (EvalDepth) is never an evaluation of record.
  r_.accepted = r_.compiled && r_.correct && r_.verdict() != Verdict::kRejected && !r_.degenerate &&
                (baseline_only_ || opt_.depth == EvalDepth::kFull);
  if (!r_.accepted) {
    // Contract: speedups and the candidate's timing only for accepted candidates.
    extra_["unaccepted_timing"] =
        r_.candidate_ms ? json(r_.candidate_ms->stats.median) : json(nullptr);
    r_.speedup_eager.reset();
    r_.speedup_compile.reset();
    r_.candidate_ms.reset();
    r_.sol_fraction.reset();
  }
  r_.milestone = MilestoneReward(r_.accepted, r_.speedup_eager, r_.speedup_compile);
}

EvalResult EvaluationRun::Run() {
  r_.kforge_version = KFORGE_VERSION;
  r_.task_name = task_.name;
  r_.task_path = task_.path.string();
  r_.task_sha256 = task_.sha256;
  r_.candidate_path = cand_.path.string();
  r_.candidate_format = CandidateFormatName(cand_.format);
  r_.candidate_sha256 = cand_.sha256;
  r_.policy = opt_.policy;
  auto dir = MakeTempDir(ScratchRoot(opt_), "eval-");
  if (!dir) throw OperationError{dir.error()};
  scratch_ = *dir;

  Timed("reference", [&] { StartReference(); });
  if (baseline_only_) {
    baseline_.reset();  // measured afresh; the record below replaces the cached one
    r_.compiled = false;
  } else {
    Timed("static_checks", [&] { RunStaticChecks(); });
    Timed("build_and_load", [&] { StartCandidate(); });
    // Later candidates' processes start (or go on warming up) now, while
    // this one is checked (not during its timing window: the host is quiet then).
    session_.StartSpareCandidates(
        CandidateProcessOptions(),
        {{"cmd", "warm"}, {"device", r_.device_kind}, {"index", r_.device_index}},
        opt_.spare_candidates);
  }
  const EvalDepth depth = baseline_only_ ? EvalDepth::kFull : opt_.depth;
  if (depth != EvalDepth::kBuild) {
    Timed("trials", [&] { RunTrials(); });
    AssessDegeneracy();
    if (!baseline_only_) Timed("input_variants", [&] { RunInputVariants(); });
  }
  bool cand_alive = cand_proc_ && cand_proc_->alive();
  bool time_candidate = cand_alive && r_.compiled && r_.correct && !static_rejected_;
  if (depth != EvalDepth::kFull) {
    // A check of a draft: no timing window, nothing taken from the cache.
    extra_["depth"] = EvalDepthName(depth);
  } else if (time_candidate || baseline_only_ || !baseline_ || !baseline_->contains("eager_ms")) {
    try {
      // Nothing of the spares runs beside the window.
      SparesPaused paused(session_);
      extra_["session"]["spares_paused"] = paused.count();
      Timed("timing", [&] { TimeWindow(time_candidate); });
    } catch (const OperationError&) {
      // The reference failed in the window (the harness answers a failed
      // sample and lives on): as after any reference failure, nothing it
      // kept is trusted. Discarded here, once the window's state is gone.
      session_.Discard();
      throw;
    }
    if (r_.candidate_ms && cand_proc_ && cand_proc_->alive()) {
      Timed("after_timing_checks", [&] {
        CheckTimedOutput();
        FinalRuntimeChecks();
      });
    }
  } else {
    // Baselines only, from the cache: the candidate was not timed.
    auto from_cache = [](const json& j) -> std::optional<TimingSummary> {
      if (!j.is_object()) return std::nullopt;
      TimingSummary t;
      t.cached = true;
      t.stats.median = j.value("median", 0.0);
      t.stats.mean = j.value("mean", 0.0);
      t.stats.p10 = j.value("p10", 0.0);
      t.stats.p90 = j.value("p90", 0.0);
      t.stats.samples = j.value("samples", 0);
      t.stats.rel_stddev = j.value("rel_stddev", 0.0);
      return t;
    };
    r_.eager_ms = from_cache((*baseline_)["eager_ms"]);
    r_.compile_ms = from_cache((*baseline_).value("compile_ms", json(nullptr)));
  }
  if (depth == EvalDepth::kFull) SpeedOfLight();
  Conclude();
  // Only a clean, accepted result sets the pace for later candidates.
  if (r_.accepted && r_.verdict() == Verdict::kOk && speedup_estimate_) {
    session_.OfferSpeedup(*speedup_estimate_);
  }
  // The baseline cache keeps what the reference side established.
  json base = baseline_.value_or(json::object());
  auto timing_json = [](const TimingSummary& t) {
    return json{{"median", t.stats.median},   {"mean", t.stats.mean},
                {"p10", t.stats.p10},         {"p90", t.stats.p90},
                {"samples", t.stats.samples}, {"rel_stddev", t.stats.rel_stddev}};
  };
  if (r_.eager_ms && !r_.eager_ms->cached) base["eager_ms"] = timing_json(*r_.eager_ms);
  if (r_.compile_ms && !r_.compile_ms->cached) base["compile_ms"] = timing_json(*r_.compile_ms);
  base["sol"] = r_.sol_detail;
  base["degenerate"] = r_.degenerate;
  base["degenerate_reason"] = r_.degenerate_reason ? json(*r_.degenerate_reason) : json(nullptr);
  base["reference_trial_seconds"] = ref_seconds_;
  if (extra_.contains("torch_compile_seconds")) {
    base["torch_compile_seconds"] = extra_["torch_compile_seconds"];
  }
  BaselineCache::Default().Save(baseline_key_, base);
  if (baseline_record_ != nullptr) *baseline_record_ = base;

  extra_["tolerance"] = {{"atol", atol_}, {"rtol", rtol_}, {"output_dtype", out_dtype_}};
  extra_["phase_seconds"] = phases_;
  r_.extra = extra_;
  if (cand_proc_) cand_proc_->Stop();
  if (!session_.reuse()) session_.Discard();
  std::error_code ec;
  if (!cand_scratch_.empty() && std::getenv("KFORGE_KEEP_SCRATCH") == nullptr) {
    fs::remove_all(cand_scratch_, ec);
  }
  if (std::getenv("KFORGE_KEEP_SCRATCH") == nullptr) fs::remove_all(scratch_, ec);
  return r_;
}

EvalResult EvaluationRun::RunBaselineOnly(json* record) {
  baseline_only_ = true;
  baseline_record_ = record;
  return Run();
}

}  // namespace

namespace {

// A session for one evaluation only, in a fresh directory of its own.
std::unique_ptr<EvaluationSession> OneOffSession(const EvalOptions& options) {
  auto dir = MakeTempDir(ScratchRoot(options), "reference-");
  if (!dir) throw OperationError{dir.error()};
  return std::make_unique<EvaluationSession>(*dir, /*reuse=*/false);
}

}  // namespace

EvalResult Evaluator::Evaluate(const Task& task, const Candidate& candidate,
                               EvaluationSession* session) {
  std::unique_ptr<EvaluationSession> own;
  if (session == nullptr) {
    own = OneOffSession(options_);
    session = own.get();
  }
  EvaluationRun run(options_, task, candidate, *session);
  return run.Run();
}

Evaluator::Baseline Evaluator::MeasureBaseline(const Task& task) {
  Candidate none;
  auto session = OneOffSession(options_);
  EvaluationRun run(options_, task, none, *session);
  Baseline b;
  b.result = run.RunBaselineOnly(&b.record);
  return b;
}

const char* EvalDepthName(EvalDepth depth) {
  switch (depth) {
    case EvalDepth::kFull:
      return "full";
    case EvalDepth::kBuild:
      return "build";
    case EvalDepth::kCorrectness:
      return "correctness";
  }
  return "full";
}

std::string NativeArchFor(const std::string& capability) {
  auto dot = capability.find('.');
  if (dot == std::string::npos || dot == 0) return "sm_90a";  // the documented target
  std::string arch = "sm_" + capability.substr(0, dot) + capability.substr(dot + 1);
  return arch == "sm_90" ? "sm_90a" : arch;
}

Result<compile::NativeCompiler> NativeCompilerFor(const EvalOptions& options) {
  fs::path dir =
      options.native_cache_dir.empty() ? CacheDir() / "native" : options.native_cache_dir;
  auto cache = compile::CompileCache::Open(dir, options.native_cache_max_bytes);
  if (!cache) return cache.error();
  return compile::NativeCompiler::Create(
      options.nvcc, std::move(cache).value(),
      std::chrono::seconds(static_cast<int64_t>(options.compile_timeout_s)));
}

Result<compile::NativeBuildResult> BuildNativeDefault(const EvalOptions& options,
                                                      const compile::NativeBuildRequest& request) {
  // One compiler per (nvcc, cache) for the process: Create runs nvcc --version.
  static std::mutex mu;
  static std::map<std::string, compile::NativeCompiler> compilers;
  std::string id = fmt::format("{}\n{}\n{}", options.nvcc, options.native_cache_dir.string(),
                               options.native_cache_max_bytes);
  const compile::NativeCompiler* compiler = nullptr;
  {
    std::lock_guard lock(mu);
    auto it = compilers.find(id);
    if (it == compilers.end()) {
      auto c = NativeCompilerFor(options);
      if (!c) return c.error();
      it = compilers.emplace(id, std::move(c).value()).first;
    }
    compiler = &it->second;
  }
  return compiler->Build(request);
}

}  // namespace kforge
