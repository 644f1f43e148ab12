#include "llm/wire_protocol.h"

#include <nlohmann/json.hpp>

namespace kforge::llm {

namespace {

std::string Shorten(std::string_view s, size_t limit = 400) {
  if (s.size() <= limit) return std::string(s);
  return std::string(s.substr(0, limit)) + "...";
}

}  // namespace

bool StreamAssembler::Accepts(const HttpResponse& head) {
  auto type = head.Header("content-type");
  return !type || type->find("text/event-stream") != std::string::npos;
}

std::string ErrorBodyMessage(std::string_view body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (auto it = j.find("error"); it != j.end()) {
      if (it->is_string()) return Shorten(it->get<std::string>());
      if (it->is_object()) {
        std::string type = it->value("type", "");
        if (auto m = it->find("message"); m != it->end() && m->is_string()) {
          std::string msg = m->get<std::string>();
          return Shorten(type.empty() ? msg : type + ": " + msg);
        }
      }
    }
    for (const char* key : {"message", "detail"}) {
      if (auto it = j.find(key); it != j.end()) {
        return Shorten(it->is_string() ? it->get<std::string>() : it->dump());
      }
    }
  }
  std::string text(body);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text.empty() ? "(empty body)" : Shorten(text);
}

}  // namespace kforge::llm
