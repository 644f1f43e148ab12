#include "llm/sse_parser.h"

namespace kforge::llm {

void SseParser::Feed(std::string_view bytes, const EventFn& on_event) {
  if (!bom_checked_) {
    // A UTF-8 byte order mark may start the stream; it can itself arrive split.
    static constexpr std::string_view kBom = "\xEF\xBB\xBF";
    std::string probe = line_ + std::string(bytes.substr(0, kBom.size()));
    if (probe.size() < kBom.size() && kBom.substr(0, probe.size()) == probe) {
      line_ = probe;
      return;
    }
    bom_checked_ = true;
    if (probe.compare(0, kBom.size(), kBom) == 0) {
      size_t from_bytes = kBom.size() - line_.size();
      line_.clear();
      bytes.remove_prefix(from_bytes);
    } else if (!line_.empty()) {
      // Held-back bytes were not a BOM after all: replay them.
      std::string held = std::move(line_);
      line_.clear();
      Feed(held, on_event);
    }
  }
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    char c = bytes[i];
    if (c == '\n' && last_was_cr_ && i == start && line_.empty()) {
      // The '\n' of a CRLF split across pieces (or right after a CR-ended line).
      last_was_cr_ = false;
      start = i + 1;
      continue;
    }
    last_was_cr_ = false;
    if (c == '\r' || c == '\n') {
      line_.append(bytes.substr(start, i - start));
      ProcessLine(line_, on_event);
      line_.clear();
      if (c == '\r') {
        if (i + 1 < bytes.size()) {
          if (bytes[i + 1] == '\n') ++i;
        } else {
          last_was_cr_ = true;
        }
      }
      start = i + 1;
    }
  }
  line_.append(bytes.substr(start));
}

void SseParser::ProcessLine(std::string_view line, const EventFn& on_event) {
  if (line.empty()) {
    if (has_data_) {
      if (on_event) on_event(pending_);
    }
    pending_ = SseEvent();
    has_data_ = false;
    pending_fields_ = false;
    return;
  }
  if (line.front() == ':') return;  // a comment (keep-alive)
  std::string_view field = line;
  std::string_view value;
  if (size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  pending_fields_ = true;
  if (field == "data") {
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    pending_.event = std::string(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) pending_.id = std::string(value);
  }
  // "retry" and unknown fields are ignored, as the spec says.
}

bool SseParser::Finish() {
  bool cut = !line_.empty() || pending_fields_;
  line_.clear();
  pending_ = SseEvent();
  has_data_ = false;
  pending_fields_ = false;
  last_was_cr_ = false;
  return cut;
}

}  // namespace kforge::llm
