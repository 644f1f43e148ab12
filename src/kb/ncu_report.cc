#include "kb/ncu_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

namespace kforge::kb {

namespace {

constexpr size_t kMaxStallReasons = 5;
// "selected" counts the cycles a warp issued: not a stall.
constexpr std::string_view kNotAStall = "selected";

// RFC 4180 rows: quoted fields may hold commas, doubled quotes and newlines.
std::vector<std::vector<std::string>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

// ncu prints "393,216" and "n/a"; an empty or non-numeric cell is unknown.
std::optional<double> Number(std::string_view cell) {
  std::string digits;
  for (char c : cell) {
    if (c != ',' && c != ' ') digits += c;
  }
  if (digits.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> MicrosecondsPer(std::string_view unit) {
  if (unit == "ns" || unit == "nsecond") return 1e-3;
  if (unit == "us" || unit == "usecond") return 1.0;
  if (unit == "ms" || unit == "msecond") return 1e3;
  if (unit == "s" || unit == "second") return 1e6;
  return std::nullopt;
}

// Running duration-weighted sums of one kernel's launches.
struct Fold {
  KernelProfile profile;
  double total_us = 0;
  std::map<std::string, std::pair<double, double>> weighted;  // metric -> (sum v*w, sum w)
  std::map<std::string, double> stalls;                       // reason -> sum ratio*w

  void Add(const std::string& metric, std::optional<double> v, double w) {
    if (!v) return;
    auto& [sum, weight] = weighted[metric];
    sum += *v * w;
    weight += w;
  }
  double Mean(const std::string& metric) const {
    auto it = weighted.find(metric);
    if (it == weighted.end() || it->second.second <= 0) return -1;
    return it->second.first / it->second.second;
  }
};

}  // namespace

std::vector<std::string> ProfileSections() {
  return {"SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats", "MemoryWorkloadAnalysis"};
}

std::string ShortKernelName(std::string_view demangled) {
  std::string s(demangled);
  for (std::string_view anon : {"(anonymous namespace)::", "unnamed>::"}) {
    for (size_t p; (p = s.find(anon)) != std::string::npos;) s.erase(p, anon.size());
  }
  size_t end = s.find_first_of("<(");
  if (end != std::string::npos) s.resize(end);
  size_t space = s.rfind(' ');
  if (space != std::string::npos) s.erase(0, space + 1);
  return s.empty() ? std::string(demangled.substr(0, 80)) : s;
}

Result<std::vector<KernelProfile>> ParseNcuRawCsv(std::string_view csv) {
  auto rows = ParseCsv(csv);
  // ncu may print its own lines ("==PROF== ...") before the table.
  auto header = std::find_if(rows.begin(), rows.end(),
                             [](const auto& r) { return !r.empty() && r[0] == "ID"; });
  if (header == rows.end()) {
    return Error::BadInput("ncu raw CSV: no header row (expected `ncu --csv --page raw` output)");
  }
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header->size(); ++i) col.emplace((*header)[i], i);
  auto column = [&](const std::string& name) -> std::optional<size_t> {
    auto it = col.find(name);
    return it == col.end() ? std::nullopt : std::optional<size_t>(it->second);
  };
  auto name_col = column("Kernel Name");
  auto duration_col = column(kMetricDuration);
  if (!name_col || !duration_col) {
    return Error::BadInput(
        fmt::format("ncu raw CSV: no 'Kernel Name' or '{}' column", kMetricDuration));
  }
  auto data = header + 1;
  // The units row: its ID cell is empty.
  if (data == rows.end() || data->empty() || !(*data)[0].empty()) {
    return Error::BadInput("ncu raw CSV: no units row under the header");
  }
  const std::vector<std::string>& units = *data++;
  auto unit_of = [&](size_t c) { return c < units.size() ? units[c] : std::string(); };
  auto scale = MicrosecondsPer(unit_of(*duration_col));
  if (!scale) {
    return Error::BadInput(
        fmt::format("ncu raw CSV: unknown duration unit '{}'", unit_of(*duration_col)));
  }
  // Column lookups once, not per launch: (metric, column) of those present.
  std::vector<std::pair<std::string, size_t>> percent_cols;
  for (const char* m :
       {kMetricComputeSol, kMetricMemorySol, kMetricOccupancy, kMetricL2, kMetricDram}) {
    if (auto c = column(m)) percent_cols.emplace_back(m, *c);
  }
  const auto registers_col = column(kMetricRegisters);
  std::vector<std::pair<std::string, size_t>> stall_cols;
  const std::string prefix = kStallPrefix, suffix = kStallSuffix;
  for (const auto& [name, c] : col) {
    if (name.size() > prefix.size() + suffix.size() && name.starts_with(prefix) &&
        name.ends_with(suffix)) {
      std::string reason = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
      if (reason != kNotAStall) stall_cols.emplace_back(reason, c);
    }
  }
  std::vector<Fold> folds;
  std::map<std::string, size_t> by_name;
  for (; data != rows.end(); ++data) {
    const auto& r = *data;
    if (r.size() != header->size()) {
      return Error::BadInput(
          fmt::format("ncu raw CSV: a row has {} cells, the header {}", r.size(), header->size()));
    }
    auto duration = Number(r[*duration_col]);
    if (!duration) {
      return Error::BadInput(fmt::format("ncu raw CSV: launch {} has no duration", r[0]));
    }
    const std::string& full = r[*name_col];
    auto [it, added] = by_name.emplace(full, folds.size());
    if (added) {
      folds.emplace_back();
      folds.back().profile.name = ShortKernelName(full);
    }
    Fold& f = folds[it->second];
    double us = *duration * *scale;
    ++f.profile.launches;
    f.total_us += us;
    // A zero-length launch still counts for its metrics, a little.
    double w = std::max(us, 1e-6);
    for (const auto& [m, c] : percent_cols) f.Add(m, Number(r[c]), w);
    if (registers_col) {
      if (auto regs = Number(r[*registers_col])) {
        f.profile.registers_per_thread =
            std::max(f.profile.registers_per_thread, static_cast<int>(*regs));
      }
    }
    for (const auto& [reason, c] : stall_cols) {
      if (auto v = Number(r[c])) f.stalls[reason] += *v * w;
    }
  }
  std::vector<KernelProfile> out;
  out.reserve(folds.size());
  for (Fold& f : folds) {
    KernelProfile& p = f.profile;
    p.duration_us = f.total_us / p.launches;
    p.compute_sol_pct = f.Mean(kMetricComputeSol);
    p.memory_sol_pct = f.Mean(kMetricMemorySol);
    p.achieved_occupancy_pct = f.Mean(kMetricOccupancy);
    p.l2_throughput_pct = f.Mean(kMetricL2);
    p.dram_throughput_pct = f.Mean(kMetricDram);
    double total = 0;
    for (const auto& [reason, v] : f.stalls) total += v;
    if (total > 0) {
      for (const auto& [reason, v] : f.stalls) {
        if (v > 0) p.top_stalls.emplace_back(reason, 100.0 * v / total);
      }
      std::stable_sort(p.top_stalls.begin(), p.top_stalls.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      if (p.top_stalls.size() > kMaxStallReasons) p.top_stalls.resize(kMaxStallReasons);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace kforge::kb
