// The evaluator: EvalRequest → EvalResult. It decides every policy (seeds,
// tolerances, timing rule, integrity verdict); the harness processes only
// execute. See docs/architecture.md ("The evaluator").
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "candidate/candidate.h"
#include "common/config.h"
#include "compile/native_compiler.h"
#include "eval/eval_result.h"
#include "eval/evaluation_session.h"
#include "task/task.h"

namespace kforge {

// A KernelBench candidate's extensions, built ahead of its evaluation in a
// sandboxed process with the environment its candidate process will have.
struct ExtensionPrebuild {
  bool ok = false;            // the entry can be used (built, or failed to build)
  bool build_failed = false;  // the extension does not compile: a failed build
  std::string error;          // why (one line), when !ok or build_failed
  std::string log;            // the build's output, tail
  double seconds = 0;         // build time (0 on a hit)
  bool cached = false;
  // Environment of the evaluation's candidate process (TORCH_EXTENSIONS_DIR,
  // TORCH_CUDA_ARCH_LIST): there it finds the build done.
  std::map<std::string, std::string> env;
};

// More spares than this would only crowd the host.
inline constexpr int kMaxSpareCandidates = 8;

// How far an evaluation goes. The agent's tools check a draft without the
// cost of a timing window: `compile` builds and loads it, `verify` also runs
// the correctness trials and input variants. A partial evaluation is never
// accepted (no timing, no speedup); it only answers the tool.
enum class EvalDepth {
  kFull,         // build, trials, timing, integrity: the evaluation of record
  kBuild,        // static checks, build and load
  kCorrectness,  // and the correctness trials and input variants
};
const char* EvalDepthName(EvalDepth depth);

struct EvalOptions {
  EvalDepth depth = EvalDepth::kFull;
  std::string device = "auto";  // auto | cuda | cpu
  int gpu = 0;
  Policy policy = Policy::kStrict;
  int trials = 5;
  uint64_t seed = 42;
  bool use_baseline_cache = true;
  std::optional<std::string> dtype;  // float32 | float16 | bfloat16
  std::vector<std::string> allowlist;

  // Correctness tolerances (|c − r| ≤ atol + rtol·|r| for every element).
  double atol_fp32 = 1e-4, rtol_fp32 = 1e-4;
  double atol_half = 1e-2, rtol_half = 1e-2;

  // Timing: warm up, then alternate batches in random order until the
  // relative error of every median is below target_noise, or the cap.
  int warmup_samples = 3;
  int min_samples = 10;
  int max_samples = 5000;
  int batch_samples = 5;
  double target_noise = 0.005;
  double max_timing_seconds = 20;
  double min_timing_seconds = 1.0;
  // Racing: a candidate whose speedup over eager is this many standard
  // errors below the best accepted one of its session (and whose reward
  // milestones are settled) stops being timed after min_timing_seconds,
  // noise target or not: more samples cannot make it the best. 0: never.
  double race_sigmas = 3;
  // GPU samples of short programs repeat the call (each after its own flush)
  // until a sample lasts min_sample_ms: the handshake's fixed cost and jitter
  // are then spread over many calls.
  double min_sample_ms = 1.0;
  int max_calls_per_sample = 64;
  // GPU: before each batch, move the program's inputs, flush buffer and
  // (through the allocator) outputs to new addresses, so no process keeps
  // one lucky or unlucky placement for the whole window.
  bool relocate_between_batches = true;
  // GPU: for the timing window, both harness processes share one CPU local
  // to the GPU and kforge's timer thread takes another (cpu_placement.h),
  // so a launch and a synchronisation cost the same in both processes.
  bool pin_cpus = true;
  bool time_compile = true;

  // Sandbox.
  double compile_timeout_s = 900;
  double run_timeout_floor_s = 60;
  double run_timeout_factor = 50;
  uint64_t memory_limit_bytes = 0;  // 0: half of physical memory
  bool isolate_network = true;

  // Integrity thresholds.
  double suspect_speedup = 50;     // speedup above this is marked suspect
  double sol_margin = 0.9;         // below margin × floor is flagged
  double side_stream_ratio = 0.5;  // event time under ratio × host time
  // Input-distribution variants (common.py VARIANTS) checked after the
  // trials, with the task's tolerance times this factor.
  std::vector<std::string> input_variants = {"normal", "scaled"};
  double variant_tolerance_factor = 10;

  // Native candidates (.cu): nvcc, and the content-addressed cache of its
  // builds (default $KFORGE_CACHE_DIR/native; 0 MB: no cap).
  std::string nvcc = "nvcc";
  std::filesystem::path native_cache_dir;
  uint64_t native_cache_max_bytes = compile::CompileCache::kDefaultMaxBytes;
  // How a native candidate gets built: empty means a NativeCompiler over the
  // cache above, synchronously; a compile farm passes its own (a build
  // submitted earlier is then already done or under way).
  std::function<compile::NativeBuildResult(const compile::NativeBuildRequest&)> native_build;
  // KernelBench candidates: their load_inline extensions built ahead of time
  // (ExtensionBuildQueue). Empty: the candidate process builds them itself,
  // in its own scratch directory.
  std::function<ExtensionPrebuild(const Candidate&)> extension_build;
  // Whether runs of many candidates (optimize, bench) build KernelBench
  // candidates' extensions ahead through an ExtensionBuildQueue (cuda only).
  bool prebuild_extensions = true;

  std::filesystem::path scratch_root;  // default: $TMPDIR/kforge

  // Runs of many candidates (optimize, bench, throughput) keep one
  // EvaluationSession per worker; its kept outputs stay under this cap.
  bool reuse_reference = true;
  // Candidate processes started ahead (Python, torch, CUDA context): a
  // warm-up lasts longer than one candidate's checks, so several warm at
  // once, each stopped for every timing window (evaluation_session.h).
  int spare_candidates = 3;
  uint64_t reference_cache_max_bytes = uint64_t{4096} << 20;
};

// options.scratch_root, or $TMPDIR/kforge.
std::filesystem::path ScratchRoot(const EvalOptions& options);

// The memory a candidate process may use: options.memory_limit_bytes, or
// half of physical memory when that is 0.
uint64_t CandidateMemoryLimit(const EvalOptions& options);

// The nvcc target for a CUDA compute capability ("9.0" → sm_90a: on Hopper
// the arch-specific target unlocks wgmma and TMA; "8.6" → sm_86).
std::string NativeArchFor(const std::string& capability);

// A NativeCompiler over the options' nvcc and cache (default
// $KFORGE_CACHE_DIR/native). kBadInput when nvcc cannot be run.
Result<compile::NativeCompiler> NativeCompilerFor(const EvalOptions& options);

// Builds with a NativeCompiler over the options' cache (created once per
// process and nvcc). A compiler that cannot be run is kBadInput.
Result<compile::NativeBuildResult> BuildNativeDefault(const EvalOptions& options,
                                                      const compile::NativeBuildRequest& request);

void RegisterEvalConfig(ConfigSchema& schema);
EvalOptions EvalOptionsFromConfig(const Config& config);

class Evaluator {
 public:
  explicit Evaluator(EvalOptions options) : options_(std::move(options)) {}

  // Bad input (malformed task) ends the operation with OperationError
  // (kBadInput); everything the candidate does wrong is a failed result.
  // `session`: the reference side kept across a task's candidates (see
  // evaluation_session.h); nullptr: a one-off for this evaluation.
  EvalResult Evaluate(const Task& task, const Candidate& candidate,
                      EvaluationSession* session = nullptr);

  // The reference side alone, measured afresh (`kforge baseline`): trials
  // for degeneracy, the timing window of eager and torch.compile, the
  // speed-of-light floor. `record` is what the baseline cache keeps for the
  // task on this device (also written there); `result` carries the device,
  // the timings and any error, with no candidate fields.
  struct Baseline {
    EvalResult result;
    nlohmann::json record;
  };
  Baseline MeasureBaseline(const Task& task);

 private:
  EvalOptions options_;
};

}  // namespace kforge
