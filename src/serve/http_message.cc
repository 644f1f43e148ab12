#include "serve/http_message.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kforge::serve {

namespace {

// RFC 9110 tchar: the characters of a method or a header name.
bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits on "\n", dropping one "\r" before it.
std::vector<std::string_view> Lines(std::string_view head) {
  std::vector<std::string_view> lines;
  while (true) {
    size_t end = head.find('\n');
    std::string_view line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    head.remove_prefix(end + 1);
  }
  return lines;
}

HttpFailure Bad(std::string message) {
  return {400, std::move(message)};
}

}  // namespace

const std::string* HttpRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? nullptr : &it->second;
}

HttpResponse ErrorResponse(int status, const std::string& message) {
  return JsonResponse(status, nlohmann::json{{"error", message}});
}

HttpResponse JsonResponse(int status, const nlohmann::json& value) {
  HttpResponse r;
  r.status = status;
  r.body = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return r;
}

std::string_view StatusReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string SerializeResponse(const HttpResponse& response) {
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\n", response.status, StatusReason(response.status));
  if (!response.content_type.empty()) {
    out += fmt::format("Content-Type: {}\r\n", response.content_type);
  }
  out += fmt::format("Content-Length: {}\r\nConnection: close\r\n", response.body.size());
  for (const auto& [name, value] : response.headers) out += fmt::format("{}: {}\r\n", name, value);
  out += "\r\n";
  out += response.body;
  return out;
}

ParsedHead ParseRequestHead(std::string_view head) {
  ParsedHead parsed;
  HttpRequest& r = parsed.request;
  std::vector<std::string_view> lines = Lines(head);
  // RFC 9112 §2.2: ignore at least one empty line before the request line.
  size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  if (first == lines.size()) {
    parsed.failure = Bad("empty request");
    return parsed;
  }
  std::string_view line = lines[first];
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    parsed.failure = Bad("malformed request line");
    return parsed;
  }
  r.method = std::string(line.substr(0, sp1));
  r.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  r.version = std::string(line.substr(sp2 + 1));
  if (!IsToken(r.method)) {
    parsed.failure = Bad("malformed request method");
    return parsed;
  }
  // Origin form only ("/path?query"); a server behind no proxy needs no other.
  if (r.target.empty() || r.target.front() != '/' ||
      std::any_of(r.target.begin(), r.target.end(),
                  [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; })) {
    parsed.failure = Bad("malformed request target");
    return parsed;
  }
  r.path = r.target.substr(0, r.target.find('?'));
  if (r.version != "HTTP/1.1" && r.version != "HTTP/1.0") {
    bool looks_http = r.version.rfind("HTTP/", 0) == 0;
    parsed.failure = looks_http ? HttpFailure{505, "only HTTP/1.0 and HTTP/1.1 are served"}
                                : Bad("malformed HTTP version");
    return parsed;
  }
  for (size_t i = first + 1; i < lines.size(); ++i) {
    std::string_view h = lines[i];
    if (h.empty()) continue;  // a trailing line end of the head
    if (h.front() == ' ' || h.front() == '\t') {
      parsed.failure = Bad("obsolete header line folding is not accepted");
      return parsed;
    }
    size_t colon = h.find(':');
    if (colon == std::string_view::npos || !IsToken(h.substr(0, colon))) {
      parsed.failure = Bad("malformed header line");
      return parsed;
    }
    std::string value(TrimOws(h.substr(colon + 1)));
    if (std::any_of(value.begin(), value.end(),
                    [](char c) { return c == '\0' || c == '\r' || c == '\n'; })) {
      parsed.failure = Bad("malformed header value");
      return parsed;
    }
    std::string name = Lower(h.substr(0, colon));
    auto [it, inserted] = r.headers.emplace(name, value);
    if (!inserted) it->second += ", " + value;
  }
  return parsed;
}

BodyFraming BodyFramingOf(const HttpRequest& request, size_t max_body_bytes) {
  BodyFraming framing;
  if (request.Header("transfer-encoding") != nullptr) {
    framing.failure =
        HttpFailure{501, "Transfer-Encoding is not supported; send a Content-Length body"};
    return framing;
  }
  const std::string* length = request.Header("content-length");
  if (length == nullptr) return framing;
  // Repeated headers were joined with ", ": all copies must agree.
  std::optional<size_t> value;
  std::string_view rest = *length;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view part = TrimOws(rest.substr(0, comma));
    if (part.empty() || part.size() > 18 || !std::all_of(part.begin(), part.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      framing.failure = Bad("malformed Content-Length");
      return framing;
    }
    size_t n = std::stoull(std::string(part));
    if (value && *value != n) {
      framing.failure = Bad("conflicting Content-Length headers");
      return framing;
    }
    value = n;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (*value > max_body_bytes) {
    framing.failure =
        HttpFailure{413, fmt::format("request body of {} bytes is over the limit of {} bytes",
                                     *value, max_body_bytes)};
    return framing;
  }
  framing.content_length = value;
  return framing;
}

}  // namespace kforge::serve
