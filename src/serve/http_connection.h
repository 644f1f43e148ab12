// One accepted TCP connection carrying one HTTP request and its response.
// Reading has a deadline for the whole request, so a client that stalls
// cannot hold the accept thread longer than that; writing has one too, so
// a client that stops reading cannot hold a worker.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <variant>

#include "serve/http_message.h"

namespace kforge::serve {

struct ReadLimits {
  size_t max_head_bytes = 16 * 1024;
  size_t max_body_bytes = 4 * 1024 * 1024;
  std::chrono::milliseconds deadline{10'000};  // for the whole request
};

class HttpConnection {
 public:
  // Takes ownership of the connected socket `fd`; `peer` names it in logs.
  HttpConnection(int fd, std::string peer);
  // Closes: half-closes the write side, then reads what the client still
  // sends for a short while, so a response sent before the body was read
  // (413) is not destroyed by a reset.
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  const std::string& peer() const { return peer_; }

  // Reads one request: the head, then a Content-Length body. A failure
  // carries the status to answer; status 0 means the client closed or sent
  // nothing before the deadline, and nothing is worth answering.
  std::variant<HttpRequest, HttpFailure> ReadRequest(const ReadLimits& limits);

  // Sends the response. Only the first call sends: an evaluation that ends
  // after its request was already failed (shutdown) answers nothing. False
  // when the response was not (fully) sent.
  bool Send(const HttpResponse& response);

 private:
  bool SendAllLocked(const std::string& bytes);

  std::mutex mu_;
  int fd_;
  std::string peer_;
  bool answered_ = false;
};

}  // namespace kforge::serve
