#include "agent/check_report.h"

#include <fmt/format.h>

namespace kforge::agent {

using nlohmann::json;

namespace {

// A compiler log's useful part is its end (the errors, the summary); the
// episode clips long results again, so this only bounds what one check says.
constexpr size_t kMaxLogChars = 6000;

std::string Tail(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return fmt::format("[... {} characters cut ...]\n", text.size() - max_chars) +
         text.substr(text.size() - max_chars);
}

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& Obj(const json& j, const char* key) {
  static const json kEmpty = json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

std::string Ms(const json& timing, const char* key) {
  const json& t = Obj(timing, key);
  auto it = t.find("median");
  return it != t.end() && it->is_number() ? fmt::format("{:.4f} ms", it->get<double>()) : "-";
}

std::string Resources(const json& compile) {
  auto it = compile.find("resources");
  if (it == compile.end() || !it->is_array() || it->empty()) return "";
  std::string out = "kernels (ptxas):";
  for (const json& k : *it) {
    out += fmt::format("\n  {}: {} registers, {} B shared, spills {} B stored / {} B loaded",
                       Str(k, "name"), k.value("registers", 0), k.value("shared_bytes", 0),
                       k.value("spill_store_bytes", 0), k.value("spill_load_bytes", 0));
  }
  return out;
}

std::string Flags(const json& eval, bool* rejected) {
  const json& integrity = Obj(eval, "integrity");
  auto it = integrity.find("flags");
  if (it == integrity.end() || !it->is_array() || it->empty()) return "";
  std::string out = "integrity checks:";
  for (const json& f : *it) {
    std::string severity = Str(f, "severity");
    if (severity == "reject") *rejected = true;
    out += fmt::format("\n  {} ({}): {}", Str(f, "check"), severity, Str(f, "detail"));
  }
  return out;
}

// The draft's Nsight Compute profile, when the run profiles (a GPU with ncu).
std::string NcuProfile(const json& eval) {
  const json& p = Obj(eval, "agent_profile");
  if (p.empty()) return "";
  if (p.contains("error")) return "Nsight Compute: not profiled: " + Str(p, "error");
  return "Nsight Compute profile (one call):\n" + Str(p, "text");
}

}  // namespace

const char* CheckKindName(CheckKind kind) {
  switch (kind) {
    case CheckKind::kCompile:
      return "compile";
    case CheckKind::kVerify:
      return "verify";
    case CheckKind::kProfile:
      return "profile";
  }
  return "compile";
}

CheckReport CheckReportFromEvaluation(CheckKind kind, const json& eval) {
  CheckReport report;
  report.detail = eval;
  std::vector<std::string> parts;
  auto add = [&](std::string text) {
    if (!text.empty()) parts.push_back(std::move(text));
  };
  const json& compile = Obj(eval, "compile");
  bool rejected = false;
  std::string flags = Flags(eval, &rejected);
  if (!eval.value("compiled", false)) {
    add("it did not build or load:");
    add(Tail(Str(compile, "log"), kMaxLogChars));
    add(Str(eval, "error"));
    add(flags);
  } else if (kind == CheckKind::kCompile) {
    report.ok = !rejected;
    add(fmt::format("built and loaded ({:.1f} s)", compile.value("seconds", 0.0)));
    add(Resources(compile));
    add(flags);
  } else {
    const json& c = Obj(eval, "correctness");
    const bool correct = eval.value("correct", false);
    if (correct) {
      add(fmt::format(
          "outputs match the reference ({} trials; max abs error {:.3g}, max rel error {:.3g})",
          c.value("trials", 0), c.value("max_abs_err", 0.0), c.value("max_rel_err", 0.0)));
    } else {
      std::string why = Str(c, "detail");
      if (why.empty()) why = Str(eval, "error");
      add("outputs do not match the reference: " + (why.empty() ? std::string("no detail") : why));
    }
    add(flags);
    if (kind == CheckKind::kVerify) {
      report.ok = correct && !rejected;
    } else {
      const json& timing = Obj(eval, "timing");
      const json& speedup = Obj(eval, "speedup");
      report.ok = eval.value("accepted", false);
      if (report.ok) {
        auto x = [&](const char* key) {
          auto it = speedup.find(key);
          return it != speedup.end() && it->is_number() ? fmt::format("{:.2f}x", it->get<double>())
                                                        : std::string("-");
        };
        add(
            fmt::format("candidate {}, eager PyTorch {}, torch.compile {}; speedup {} over eager, "
                        "{} over torch.compile",
                        Ms(timing, "candidate_ms"), Ms(timing, "eager_ms"),
                        Ms(timing, "compile_ms"), x("eager"), x("compile")));
      } else {
        add(fmt::format("not accepted (integrity verdict {}), so not timed as a result",
                        Str(Obj(eval, "integrity"), "verdict")));
      }
      add(Resources(compile));
      add(NcuProfile(eval));
    }
  }
  std::string text;
  for (const std::string& p : parts) text += (text.empty() ? "" : "\n") + p;
  report.summary = std::move(text);
  return report;
}

}  // namespace kforge::agent
