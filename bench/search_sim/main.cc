// kforge_search_sim: a SYNTHETIC comparison of search strategies on a known,
// made-up landscape with a simulated LLM (see landscape.h, synthetic_llm.h).
// It exercises the real PACEvolve and contrastive code paths end to end; its
// numbers say how the mechanisms behave on this toy problem, nothing about
// real kernels or real models.
//
//   kforge_search_sim [--seeds N] [--budgets evals:100,calls:600] [--out DIR]
//
// Exit status 1 if a run breaks an invariant (a library error, a budget
// overrun, a result better than the exhaustive optimum).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "landscape.h"
#include "strategies.h"

namespace {

using kforge::bench::Budget;
using kforge::bench::Landscape;
using kforge::bench::RunResult;
namespace pe = kforge::search::pacevolve;

struct Variant {
  std::string name;
  std::string what;
  std::function<RunResult(const Landscape&, uint64_t, const Budget&, std::string*)> run;
};

pe::PacEvolveOptions PacEvolveDefaults() {
  return pe::PacEvolveOptions{};
}

std::vector<Variant> Variants() {
  std::vector<Variant> v;
  v.push_back({"greedy", "edit the best program; last 10 attempts in the prompt",
               [](const Landscape& l, uint64_t s, const Budget& b, std::string*) {
                 return kforge::bench::RunGreedy(l, s, b);
               }});
  v.push_back({"best-of-n", "independent one-shot programs",
               [](const Landscape& l, uint64_t s, const Budget& b, std::string*) {
                 return kforge::bench::RunBestOfN(l, s, b);
               }});
  v.push_back({"contrastive", "CUDA-L1 loop, N=2 bucket-sampled exemplars",
               [](const Landscape& l, uint64_t s, const Budget& b, std::string*) {
                 return kforge::bench::RunContrastive(l, s, b,
                                                      kforge::search::ContrastiveOptions{});
               }});
  auto pacevolve = [](std::string name, std::string what,
                      std::function<void(pe::PacEvolveOptions&)> tweak) {
    return Variant{std::move(name), std::move(what),
                   [tweak](const Landscape& l, uint64_t s, const Budget& b, std::string* err) {
                     pe::PacEvolveOptions o = PacEvolveDefaults();
                     tweak(o);
                     return kforge::bench::RunPacEvolve(l, s, b, o, err);
                   }};
  };
  v.push_back(
      pacevolve("pacevolve", "HCM + MBB + CE, 2 islands, defaults", [](pe::PacEvolveOptions&) {}));
  v.push_back(pacevolve("pacevolve -hcm", "no idea pool: one code call, flat history",
                        [](pe::PacEvolveOptions& o) { o.hcm = false; }));
  v.push_back(pacevolve("pacevolve -mbb", "no momentum trigger: no backtrack, no crossover",
                        [](pe::PacEvolveOptions& o) { o.mbb = false; }));
  v.push_back(pacevolve("pacevolve -ce", "stagnant islands always backtrack",
                        [](pe::PacEvolveOptions& o) { o.ce = false; }));
  v.push_back(pacevolve("pacevolve 1 island", "HCM + MBB, single island",
                        [](pe::PacEvolveOptions& o) { o.islands = 1; }));
  return v;
}

struct Setting {
  std::string label;
  Budget budget;
};

bool ParseBudgets(const std::string& text, std::vector<Setting>* out) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t colon = item.find(':');
    if (colon == std::string::npos) return false;
    const std::string kind = item.substr(0, colon);
    int64_t n = 0;
    try {
      n = std::stoll(item.substr(colon + 1));
    } catch (...) {
      return false;
    }
    if (n <= 0) return false;
    Setting s;
    if (kind == "evals") {
      s.budget.evaluations = n;
      s.label = fmt::format("equal evaluation budget: {} candidates evaluated per run", n);
    } else if (kind == "calls") {
      s.budget.llm_calls = n;
      s.label = fmt::format("equal LLM-call budget: {} calls per run", n);
    } else {
      return false;
    }
    out->push_back(s);
    start = end + 1;
  }
  return !out->empty();
}

double Quantile(std::vector<double> xs, double q) {
  std::sort(xs.begin(), xs.end());
  const double pos = q * static_cast<double>(xs.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (pos - static_cast<double>(lo)) * (xs[hi] - xs[lo]);
}

double Mean(const std::vector<double>& xs) {
  double s = 0.0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 20;
  std::string out_dir;
  std::vector<Setting> settings;
  std::string budgets = "evals:100,evals:300,calls:600";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kforge_search_sim: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seeds") {
      seeds = std::atoi(value().c_str());
    } else if (a == "--out") {
      out_dir = value();
    } else if (a == "--budgets") {
      budgets = value();
    } else {
      std::fprintf(stderr,
                   "usage: kforge_search_sim [--seeds N] [--budgets evals:N,calls:N,...] "
                   "[--out DIR]\n");
      return 2;
    }
  }
  if (seeds < 1 || !ParseBudgets(budgets, &settings)) {
    std::fprintf(stderr, "kforge_search_sim: bad --seeds or --budgets\n");
    return 2;
  }

  const Landscape land;
  const std::vector<Variant> variants = Variants();
  std::string md;
  md += "# Search strategies on a SYNTHETIC landscape\n\n";
  md +=
      "**Synthetic**: a made-up landscape and a simulated LLM (bench/search_sim). These numbers "
      "test the mechanics of the search code; they say nothing about real kernels or real "
      "models.\n\n";
  md += fmt::format(
      "Landscape: baseline {:.3f} ms, speed-of-light floor r = {:.4f} ms, exhaustive optimum "
      "{:.4f} ms ({:.2f}x), best program without tensor cores (the trap) {:.4f} ms ({:.2f}x). "
      "\"past trap\" counts runs whose best candidate beats the trap. Speedup = baseline / true "
      "(noise-free) runtime of the candidate the search measured fastest. {} seeds per row.\n",
      land.baseline_ms(), land.floor_ms(), land.OptimumRuntime(),
      land.baseline_ms() / land.OptimumRuntime(), land.TrapRuntime(),
      land.baseline_ms() / land.TrapRuntime(), seeds);

  std::string command = "kforge_search_sim";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  md += fmt::format("\nCommand: `{}`\n", command);
  std::string csv =
      "setting,strategy,seed,speedup,best_true_ms,best_measured_ms,evaluations,llm_calls,"
      "backtracks,crossovers\n";
  bool ok = true;
  for (const Setting& setting : settings) {
    md += fmt::format("\n## {}\n\n", setting.label);
    md +=
        "| strategy | mean speedup | median | P25 | min | max | past trap | evaluations | LLM "
        "calls | backtracks | crossovers |\n";
    md += "|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const Variant& v : variants) {
      std::vector<double> speedups, evals, calls, bts, xos;
      int past_trap = 0;
      for (int seed = 1; seed <= seeds; ++seed) {
        std::string error;
        const RunResult r = v.run(land, static_cast<uint64_t>(seed), setting.budget, &error);
        if (!error.empty()) {
          std::fprintf(stderr, "%s seed %d: %s\n", v.name.c_str(), seed, error.c_str());
          ok = false;
          continue;
        }
        if (r.best_true_ms < land.OptimumRuntime() - 1e-12 ||
            r.evaluations > setting.budget.evaluations || r.llm_calls > setting.budget.llm_calls) {
          std::fprintf(stderr, "%s seed %d: invariant broken\n", v.name.c_str(), seed);
          ok = false;
        }
        const double speedup = land.baseline_ms() / r.best_true_ms;
        speedups.push_back(speedup);
        evals.push_back(static_cast<double>(r.evaluations));
        calls.push_back(static_cast<double>(r.llm_calls));
        bts.push_back(r.backtracks);
        xos.push_back(r.crossovers);
        past_trap += r.best_true_ms < land.TrapRuntime() - 1e-12 ? 1 : 0;
        csv += fmt::format("\"{}\",{},{},{:.4f},{:.6f},{:.6f},{},{},{},{}\n", setting.label, v.name,
                           seed, speedup, r.best_true_ms, r.best_measured_ms, r.evaluations,
                           r.llm_calls, r.backtracks, r.crossovers);
      }
      if (speedups.empty()) continue;
      md += fmt::format(
          "| {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {}/{} | {:.0f} | {:.0f} | {:.1f} | "
          "{:.1f} |\n",
          v.name, Mean(speedups), Quantile(speedups, 0.5), Quantile(speedups, 0.25),
          Quantile(speedups, 0.0), Quantile(speedups, 1.0), past_trap, speedups.size(), Mean(evals),
          Mean(calls), Mean(bts), Mean(xos));
    }
  }
  md += "\nStrategies:\n\n";
  for (const Variant& v : variants) md += fmt::format("- `{}`: {}\n", v.name, v.what);

  std::fputs(md.c_str(), stdout);
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    std::ofstream(std::filesystem::path(out_dir) / "results.md") << md;
    std::ofstream(std::filesystem::path(out_dir) / "runs.csv") << csv;
  }
  return ok ? 0 : 1;
}
