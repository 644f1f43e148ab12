// kforge bench: one optimize run per task of a suite, the suite's metrics
// at the end (CONTRACT.md). Tasks run in parallel, one worker per GPU (a CPU
// device has one worker: two timing windows on one host would disturb each
// other). Resumable: `--resume BENCH_ID` skips the tasks whose run completed,
// resumes the ones stopped or failed, and starts the rest; each task's run id
// is recorded as soon as the run exists, so a kill loses nothing recorded.
#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "cli/suite_entries.h"
#include "common/line_printer.h"
#include "llm/types.h"
#include "report/report_data.h"
#include "report/report_json.h"
#include "report/report_text.h"
#include "run/run_launcher.h"
#include "run/run_report.h"
#include "run/run_store.h"
#include "run/signal_stop.h"

namespace kforge::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitInterrupted = 130;

struct BenchArgs {
  std::string suite, llm, strategy = "greedy", device = "auto", policy = "strict", resume;
  std::string db = run::kDefaultDb;
  int64_t iterations = 10;
  int islands = 0;
  int gpu = -1;
  uint64_t seed = 0;
  bool include_suspect = false;
  bool json = false;
  ConfigFlags config;
};

// One task of the suite and what this command did with it.
struct BenchTask {
  std::string name;  // unique in the bench: the path under the suite, without .py
  fs::path path;
  int64_t position = 0;
  std::string load_error;  // the task file could not be read: never run
  std::string run_id;      // from an earlier session, or set when the run is created
  std::string outcome;     // what happened here: started | resumed | completed | error
  std::string error;
};

// A task's name: its path relative to the suite's folder without ".py"
// ("level1/12_Matmul_with_diagonal_matrices_"), which stays unique where
// file names repeat across levels.
std::string TaskNameIn(const fs::path& suite, const fs::path& task) {
  std::error_code ec;
  fs::path base = fs::is_directory(suite, ec) ? suite : suite.parent_path();
  fs::path rel = fs::relative(task, base, ec);
  if (ec || rel.empty() || rel.native().starts_with("..")) rel = task.filename();
  rel.replace_extension();
  return rel.generic_string();
}

// Each run's lines, prefixed with its task (the runs of several workers
// interleave); the live status line is left to single runs.
class BenchTaskProgress : public run::ProgressReporter {
 public:
  explicit BenchTaskProgress(std::string task) : prefix_("[" + std::move(task) + "] ") {}
  void Event(const std::string& line, const run::ProgressSnapshot&) override {
    LinePrinter::Get().Line(prefix_ + line);
  }
  void Tick(const run::ProgressSnapshot&) override {}

 private:
  std::string prefix_;
};

run::OptimizeRequest RequestFor(const BenchArgs& a, const BenchRecord& bench, const Config& config,
                                const fs::path& task, int gpu) {
  run::OptimizeRequest r;
  r.task_path = task.string();
  r.llm_spec = bench.llm_spec;
  r.strategy = bench.strategy;
  r.iterations = bench.iterations_target;
  r.islands = a.islands;
  r.device = bench.device;
  r.gpu = gpu;
  r.policy = a.policy;
  r.seed = a.seed;
  r.config = config;
  return r;
}

int RunBench(BenchArgs a) {
  Config config = LoadConfig(a.config);
  auto store = run::OpenRunStore(a.db, /*create=*/true, config);
  if (!store) throw OperationError{store.error()};
  Store& db = **store;

  // The bench: a new one from the flags, or the recorded one.
  BenchRecord bench;
  std::map<std::string, BenchRunRecord> recorded;
  if (!a.resume.empty()) {
    if (!a.suite.empty()) {
      throw OperationError{
          Error::BadInput("--resume takes the suite from the bench: drop --suite")};
    }
    auto got = db.GetBench(a.resume);
    if (!got) throw OperationError{got.error()};
    bench = std::move(got).value();
    // The recorded settings, not the flags: every task of a bench runs alike.
    json settings = json::parse(bench.config_json, nullptr, false);
    if (settings.is_object()) {
      a.policy = settings.value("policy", a.policy);
      a.seed = settings.value("seed", a.seed);
      a.islands = settings.value("islands", a.islands);
    }
    auto runs = db.ListBenchRuns(bench.id);
    if (!runs) throw OperationError{runs.error()};
    for (auto& r : *runs) recorded[r.task] = r;
  } else {
    if (a.suite.empty()) throw OperationError{Error::BadInput("give --suite or --resume BENCH_ID")};
    bench.suite = fs::absolute(a.suite).lexically_normal().string();
    bench.strategy = a.strategy;
    bench.llm_spec = a.llm.empty() ? config.GetString("llm.spec") : a.llm;
    bench.device = a.device;
    bench.iterations_target = a.iterations;
  }
  std::vector<SuiteEntry> entries = ReadSuite(bench.suite);
  if (entries.empty()) {
    throw OperationError{Error::BadInput(fmt::format("no task files in {}", bench.suite))};
  }

  // Everything a run would reject for all tasks alike, before anything is written.
  run::OptimizeRequest probe = RequestFor(a, bench, config, entries.front().path, a.gpu);
  auto device = run::CheckOptimizeRequest(probe);
  if (!device) throw OperationError{device.error()};
  if (a.resume.empty()) {
    bench.device = device->kind;
    bench.config_json =
        llm::DumpJson({{"policy", a.policy}, {"seed", a.seed}, {"islands", a.islands}});
    auto id = db.CreateBench(bench);
    if (!id) throw OperationError{id.error()};
    bench.id = *id;
  }

  std::vector<BenchTask> tasks;
  std::map<std::string, int> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    BenchTask t;
    t.name = TaskNameIn(bench.suite, entries[i].path);
    if (int n = seen[t.name]++; n > 0) t.name += fmt::format("#{}", n + 1);
    t.path = entries[i].path;
    t.position = static_cast<int64_t>(i);
    if (!entries[i].task) t.load_error = entries[i].error;
    if (auto it = recorded.find(t.name); it != recorded.end()) t.run_id = it->second.run_id;
    tasks.push_back(std::move(t));
  }

  // Workers: one per GPU (or the one --gpu names); one on a CPU.
  std::vector<int> gpus;
  if (device->kind == "cuda" && a.gpu < 0) {
    for (int g = 0; g < std::max(1, device->visible_gpus); ++g) gpus.push_back(g);
  } else {
    gpus.push_back(device->kind == "cuda" ? a.gpu : -1);
  }
  auto& printer = LinePrinter::Get();
  printer.Line(fmt::format("kforge: bench {}: {} tasks, {} worker{} ({}), {} evaluations per task",
                           bench.id, tasks.size(), gpus.size(), gpus.size() == 1 ? "" : "s",
                           device->hardware, bench.iterations_target));

  run::StopRequest stop;
  run::SignalStop signals(stop);
  std::atomic<size_t> next{0};
  std::atomic<bool> bad_input{false};
  std::atomic<bool> abandoned{false};
  // A run that could not start or failed for a reason not the task's own (exit 1).
  std::atomic<bool> internal_failure{false};
  std::mutex mu;  // guards tasks[i].run_id / outcome / error across workers
  auto work = [&](int gpu) {
    for (;;) {
      if (stop.requested() || bad_input) return;
      size_t i = next++;
      if (i >= tasks.size()) return;
      BenchTask& t = tasks[i];
      if (!t.load_error.empty()) {
        std::lock_guard<std::mutex> lock(mu);
        t.outcome = "error";
        t.error = t.load_error;
        continue;
      }
      if (!t.run_id.empty()) {
        auto run = db.GetRun(t.run_id);
        if (run && run->status == RunStatus::kCompleted) {
          std::lock_guard<std::mutex> lock(mu);
          t.outcome = "completed";
          continue;
        }
      }
      BenchTaskProgress progress(t.name);
      Result<run::RunEnd> end = Error::Internal("not run");
      if (!t.run_id.empty()) {
        end = run::ResumeRun(db, {t.run_id, {}}, stop, progress);
      } else {
        run::OptimizeRequest request = RequestFor(a, bench, config, t.path, gpu);
        request.on_created = [&](const std::string& run_id) {
          {
            std::lock_guard<std::mutex> lock(mu);
            t.run_id = run_id;
          }
          BenchRunRecord rec;
          rec.bench_id = bench.id;
          rec.task = t.name;
          rec.task_path = t.path.string();
          rec.position = t.position;
          rec.run_id = run_id;
          if (Status st = db.AddBenchRun(rec); !st) {
            printer.Warn(fmt::format("bench {}: could not record task {}: {}", bench.id, t.name,
                                     st.error().message));
          }
        };
        end = run::StartOptimize(db, std::move(request), stop, progress);
      }
      std::lock_guard<std::mutex> lock(mu);
      if (!end) {
        t.outcome = "error";
        t.error = end.error().message;
        if (end.error().kind == ErrorKind::kBadInput && t.run_id.empty()) {
          // Not this task's fault alone (a key, the database): stop handing out tasks.
          bad_input = true;
        } else {
          internal_failure = true;
        }
        printer.Line(fmt::format("[{}] error: {}", t.name, t.error));
        continue;
      }
      t.outcome = std::string(RunStatusName(end->outcome.status));
      // A run that failed on its task (a malformed file: exit 2 for `optimize`)
      // is that task's result; the bench did its job for the rest.
      if (run::RunExitCode(end->outcome) == 1) internal_failure = true;
      if (end->outcome.abandoned) abandoned = true;
    }
  };
  std::vector<std::thread> workers;
  for (int g : gpus) workers.emplace_back(work, g);
  for (auto& w : workers) w.join();
  (void)db.Flush();

  report::MetricsOptions options;
  options.include_suspect = a.include_suspect;
  auto rep = report::LoadBenchReport(db, bench.id, options);
  if (!rep) throw OperationError{rep.error()};

  std::map<std::string, const report::TaskOutcome*> by_name;
  for (const auto& o : rep->tasks) by_name[o.task] = &o;
  json list = json::array();

  for (const auto& t : tasks) {
    auto it = by_name.find(t.name);
    json row;
    if (it != by_name.end()) {
      row = report::TaskOutcomeJson(*it->second, options);
    } else {
      row = {{"task", t.name}, {"run_id", nullptr}, {"best", nullptr}, {"degenerate", false}};
      row["status"] = t.outcome == "error" ? "error" : "pending";
    }
    if (!t.error.empty()) {
      row["error"] = t.error;
    }
    list.push_back(std::move(row));
  }
  json metrics = report::SuiteMetricsJson(rep->metrics);
  if (a.json) {
    std::cout << llm::DumpJson({{"bench_id", bench.id}, {"tasks", list}, {"metrics", metrics}})
              << std::endl;
  } else {
    std::cout << report::BenchReportText(*rep);
  }

  bool unfinished = false;
  for (const auto& row : list) unfinished = unfinished || row.value("status", "") != "completed";
  if (unfinished) {
    printer.Line(
        fmt::format("kforge: continue this bench with: kforge bench --resume {}", bench.id));
  }
  int code = 0;
  if (bad_input) {
    code = 2;
  } else if (stop.requested() && run::SignalStop::last_signal() != 0) {
    code = kExitInterrupted;
  } else if (internal_failure) {
    code = 1;
  }
  if (abandoned) {
    // A run's threads are still working: they must not see the store go.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  return code;
}

}  // namespace

void AddBenchCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = root.add_subcommand(
      "bench", "Optimize every task of a suite (one run each) and report the suite's metrics");
  cmd->add_option("--suite", args->suite,
                  "Directory of task files (searched recursively) or a file listing them");
  cmd->add_option("--resume", args->resume,
                  "Continue a bench: completed tasks are kept, stopped runs resumed, the rest "
                  "started");
  cmd->add_option("--llm", args->llm,
                  "Model spec: openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL], replay:RUN_ID "
                  "(default: config llm.spec)");
  cmd->add_option("--strategy", args->strategy, "pacevolve|contrastive|greedy|best-of-n")
      ->default_val("greedy");
  cmd->add_option("--iterations", args->iterations, "Candidates evaluated per task")
      ->default_val(10);
  cmd->add_option("--islands", args->islands, "Islands per run (0: the strategy's default)")
      ->default_val(0);
  cmd->add_option("--device", args->device, "auto|cuda|cpu")
      ->envname("KFORGE_DEVICE")
      ->default_val("auto");
  cmd->add_option("--gpu", args->gpu, "Use this GPU only (default: one worker per GPU)")
      ->envname("KFORGE_GPU");
  cmd->add_option("--policy", args->policy, "strict|any")->default_val("strict");
  cmd->add_option("--seed", args->seed, "Seed of each run's search strategy")->default_val(0);
  cmd->add_flag("--include-suspect", args->include_suspect,
                "Count suspect results in the metrics (they are shown either way)");
  AddDbOption(cmd, args->db);
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout (CONTRACT.md)");
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunBench(*args); }; });
}

}  // namespace kforge::cli
