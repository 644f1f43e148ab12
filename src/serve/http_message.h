// HTTP/1.1 messages as the evaluation server needs them: a request head
// parsed from bytes (pure, so every malformed case is unit-tested), and a
// response serialised with Content-Length and `Connection: close` (one
// request per connection: no keep-alive, no pipelining).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kforge::serve {

struct HttpRequest {
  std::string method;                          // as sent, e.g. "POST" (methods are case-sensitive)
  std::string target;                          // as sent, e.g. "/v1/evaluate?x=1"
  std::string path;                            // target without its query
  std::string version;                         // "HTTP/1.1" or "HTTP/1.0"
  std::map<std::string, std::string> headers;  // lower-case names; repeats joined with ", "
  std::string body;

  // nullptr when absent. `name` must be lower-case.
  const std::string* Header(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  std::string body;
};

// A request that cannot be served, as the status to answer with and why.
struct HttpFailure {
  HttpFailure(int status, std::string message) : status(status), message(std::move(message)) {}
  int status;
  std::string message;
  std::string method, path;  // when the head was parsed (for the log)
};

// `{"error": message}` with the given status.
HttpResponse ErrorResponse(int status, const std::string& message);
// The JSON text of `value` with the given status (invalid UTF-8 replaced).
HttpResponse JsonResponse(int status, const nlohmann::json& value);

// "Not Found" for 404; "Unknown" for codes the server never sends.
std::string_view StatusReason(int status);

// The bytes on the wire: status line, Content-Type, Content-Length,
// Connection: close, extra headers, blank line, body.
std::string SerializeResponse(const HttpResponse& response);

// Parses a request head: everything before the blank line ("\r\n\r\n"),
// without it. Bare "\n" line ends are accepted (RFC 9112 §2.2); obsolete
// line folding, malformed header names, bad request lines and versions other
// than HTTP/1.0 and 1.1 are refused. The body is left empty.
struct ParsedHead {
  HttpRequest request;
  std::optional<HttpFailure> failure;  // set when the head is malformed
};
ParsedHead ParseRequestHead(std::string_view head);

// What the head says about the body. `content_length` nullopt: no body
// declared. A Transfer-Encoding (chunked bodies are not supported: 501), a
// Content-Length that is not a decimal number or repeats with other values
// (400), or one above `max_body_bytes` (413) is a failure.
struct BodyFraming {
  std::optional<size_t> content_length;
  std::optional<HttpFailure> failure;
};
BodyFraming BodyFramingOf(const HttpRequest& request, size_t max_body_bytes);

}  // namespace kforge::serve
