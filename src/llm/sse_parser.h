// Server-sent events (the WHATWG "text/event-stream" format) as OpenAI and
// Anthropic stream them. Bytes arrive in arbitrary pieces (a network read can
// split a line, or a CRLF, anywhere); the parser buffers partial lines and
// hands out one event per blank line.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kforge::llm {

struct SseEvent {
  std::string event;  // the "event:" field; empty means "message"
  std::string data;   // "data:" lines joined with '\n'
  std::string id;     // the "id:" field, when sent
};

class SseParser {
 public:
  using EventFn = std::function<void(const SseEvent&)>;

  // Parses the next piece of the stream, calling `on_event` for each event
  // completed by it.
  void Feed(std::string_view bytes, const EventFn& on_event);
  // End of stream. Per the spec an event not closed by a blank line is
  // discarded; returns true when such a partial event (or line) was pending,
  // which tells the caller the stream was cut.
  bool Finish();

 private:
  void ProcessLine(std::string_view line, const EventFn& on_event);

  std::string line_;          // the current, incomplete line
  bool last_was_cr_ = false;  // a '\r' ended the previous piece: skip a following '\n'
  bool bom_checked_ = false;
  SseEvent pending_;
  bool has_data_ = false;        // a data field was seen for the pending event
  bool pending_fields_ = false;  // any field was seen for the pending event
};

}  // namespace kforge::llm
