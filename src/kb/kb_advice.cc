#include "kb/kb_advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "kb/performance_state.h"

namespace kforge::kb {

using nlohmann::json;

namespace {

constexpr size_t kMaxTechniqueChars = 64;
constexpr size_t kMaxLabelWords = 3;  // "Applied technique:", "**Technique used**:"
constexpr size_t kMaxNameWords = 6;   // a new technique named in words
constexpr size_t kMaxDetailChars = 4000;

// SplitMix64's finaliser: spreads nearby (seed, slot, draw) over the whole range.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

// Markdown and comment decoration around a label or a value.
constexpr std::string_view kDecoration = " \t\r*_`'\"#>/-.";

size_t CountWords(std::string_view s) {
  size_t words = 0;
  bool in_word = false;
  for (char c : s) {
    bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

// "Kernel Fusion", "kernel-fusion", "`kernel_fusion`" → "kernel_fusion".
std::string Normalize(std::string_view s) {
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (c == '_' || c == '-' || std::isspace(u)) {
      if (!out.empty() && out.back() != '_') out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

// The technique of one `Technique: ...` line, or nullopt when the line is not one.
std::optional<std::optional<std::string>> TechniqueOfLine(std::string_view line,
                                                          const std::vector<std::string>& offered) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string label = Lower(Trim(line.substr(0, colon), kDecoration));
  if (label.find("technique") == std::string::npos || CountWords(label) > kMaxLabelWords) {
    return std::nullopt;
  }
  std::string_view value = Trim(line.substr(colon + 1), kDecoration);
  // What follows the name is explanation: "kernel_fusion (one pass)", "x - because".
  for (std::string_view cut : {" (", " - ", " — ", ",", ";", ": "}) {
    size_t at = value.find(cut);
    if (at != std::string_view::npos) value = value.substr(0, at);
  }
  value = Trim(value, kDecoration);
  std::string name = Normalize(value);
  if (name.empty() || name == "none" || name == "n_a" || name == "na" || name == "no") {
    return std::optional<std::string>{};
  }
  for (const std::string& id : offered) {
    if (Normalize(id) == name) return std::optional<std::string>{id};
  }
  // The first word alone may be an offered id followed by prose.
  size_t space = value.find_first_of(" \t");
  if (space != std::string_view::npos) {
    std::string first = Normalize(value.substr(0, space));
    for (const std::string& id : offered) {
      if (Normalize(id) == first) return std::optional<std::string>{id};
    }
  }
  if (name.size() > kMaxTechniqueChars || CountWords(value) > kMaxNameWords ||
      !std::isalpha(static_cast<unsigned char>(name.front()))) {
    return std::optional<std::string>{};
  }
  return std::optional<std::string>{name};
}

}  // namespace

json KbAdvice::ToJson() const {
  json offers_json = json::array();
  for (const TechniqueOffer& o : offers) {
    offers_json.push_back({{"technique", o.technique},
                           {"description", o.description},
                           {"notes", o.notes},
                           {"predicted_gain", o.predicted_gain}});
  }
  return {{"state", state},
          {"state_description", state_description},
          {"profile_of", profile_of},
          {"details", details.substr(0, kMaxDetailChars)},
          {"offers", offers_json}};
}

Result<KbAdvice> KbAdvice::FromJson(const json& j) {
  if (!j.is_object() || !j.contains("state") || !j["state"].is_string() ||
      !j.value("offers", json()).is_array()) {
    return Error::BadInput("not a knowledge-base advice object");
  }
  try {
    KbAdvice a;
    a.state = j["state"].get<std::string>();
    a.state_description = j.value("state_description", "");
    a.profile_of = j.value("profile_of", "");
    a.details = j.value("details", "");
    for (const json& o : j["offers"]) {
      TechniqueOffer offer;
      offer.technique = o.at("technique").get<std::string>();
      offer.description = o.value("description", "");
      offer.notes = o.value("notes", "");
      offer.predicted_gain = o.value("predicted_gain", 1.0);
      a.offers.push_back(std::move(offer));
    }
    return a;
  } catch (const json::exception& e) {
    return Error::BadInput(fmt::format("knowledge-base advice: {}", e.what()));
  }
}

const TechniqueOffer* KbAdvice::Find(const std::string& technique) const {
  for (const TechniqueOffer& o : offers) {
    if (o.technique == technique) return &o;
  }
  return nullptr;
}

uint64_t SelectionSeed(uint64_t run_seed, int64_t slot, int64_t draw) {
  return Mix(Mix(Mix(run_seed) ^ static_cast<uint64_t>(slot)) ^ static_cast<uint64_t>(draw));
}

KbAdvice Advise(const KnowledgeBase& kb, const std::string& state, std::string profile_of,
                std::string details, const SelectionOptions& options, uint64_t seed) {
  KbAdvice a;
  a.state = kb.states().count(state) > 0 ? state : std::string(kUnknown);
  a.profile_of = std::move(profile_of);
  a.details = std::move(details);
  auto it = kb.states().find(a.state);
  if (it == kb.states().end()) return a;  // a base without even "unknown": nothing to offer
  a.state_description = it->second.description;
  std::mt19937_64 rng(seed);
  for (const Optimization* o : kb.Select(a.state, options, rng)) {
    a.offers.push_back({o->technique, o->description, o->notes, o->PredictedGain()});
  }
  return a;
}

std::string OffersText(const KbAdvice& advice) {
  std::string out;
  for (const TechniqueOffer& o : advice.offers) {
    out += fmt::format("- `{}` (predicted gain {:.2f}x): {}", o.technique, o.predicted_gain,
                       o.description);
    if (!o.notes.empty()) out += fmt::format("\n  Learned so far: {}", o.notes);
    out += "\n";
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::optional<std::string> ParseTechnique(std::string_view reply,
                                          const std::vector<std::string>& offered) {
  std::optional<std::optional<std::string>> outside, inside;
  bool in_fence = false;
  size_t pos = 0;
  while (pos <= reply.size()) {
    size_t end = reply.find('\n', pos);
    if (end == std::string_view::npos) end = reply.size();
    std::string_view line = reply.substr(pos, end - pos);
    pos = end + 1;
    if (Trim(line, " \t\r").substr(0, 3) == "```") {
      in_fence = !in_fence;
      continue;
    }
    auto found = TechniqueOfLine(line, offered);
    if (!found) continue;
    (in_fence ? inside : outside) = std::move(found);
  }
  if (outside) return *outside;
  if (inside) return *inside;
  return std::nullopt;
}

}  // namespace kforge::kb
