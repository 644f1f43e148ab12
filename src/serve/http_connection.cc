#include "serve/http_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <strings.h>
#include <cerrno>
#include <cstring>

namespace kforge::serve {

namespace {

using Clock = std::chrono::steady_clock;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    int ms = RemainingMs(deadline);
    if (ms == 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, ms);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

// The end of the head: the index just past its blank line and the head's
// length, or npos. Bare "\n" line ends count too.
std::pair<size_t, size_t> FindHeadEnd(const std::string& buf) {
  size_t crlf = buf.find("\r\n\r\n");
  size_t lf = buf.find("\n\n");
  if (crlf != std::string::npos && (lf == std::string::npos || crlf + 2 <= lf)) {
    return {crlf + 4, crlf};
  }
  if (lf != std::string::npos) return {lf + 2, lf};
  return {std::string::npos, std::string::npos};
}

}  // namespace

HttpConnection::HttpConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {
  // A blocking send() gives up after this, so SendAllLocked's deadline holds.
  timeval send_timeout{10, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
}

HttpConnection::~HttpConnection() {
  if (fd_ < 0) return;
  ::shutdown(fd_, SHUT_WR);  // again when already answered: harmless
  // Lingering close: drain briefly (bounded in time and bytes).
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(250);
  char buf[16384];
  size_t drained = 0;
  while (drained < (1u << 20) && WaitFor(fd_, POLLIN, deadline)) {
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
  ::close(fd_);
}

std::variant<HttpRequest, HttpFailure> HttpConnection::ReadRequest(const ReadLimits& limits) {
  Clock::time_point deadline = Clock::now() + limits.deadline;
  std::string buf;
  char chunk[65536];
  size_t body_start = std::string::npos, head_len = 0;
  while (true) {
    std::tie(body_start, head_len) = FindHeadEnd(buf);
    if (body_start != std::string::npos) break;
    if (buf.size() > limits.max_head_bytes) {
      return HttpFailure{431, "request head is over the limit of " +
                                  std::to_string(limits.max_head_bytes) + " bytes"};
    }
    if (!WaitFor(fd_, POLLIN, deadline)) {
      if (buf.empty()) return HttpFailure{0, "no request before the deadline"};
      return HttpFailure{408, "request head not complete before the deadline"};
    }
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return HttpFailure{buf.empty() ? 0 : 400, "connection closed inside the request head"};
    }
    buf.append(chunk, static_cast<size_t>(n));
  }
  if (head_len > limits.max_head_bytes) {
    return HttpFailure{431, "request head is over the limit of " +
                                std::to_string(limits.max_head_bytes) + " bytes"};
  }
  ParsedHead parsed = ParseRequestHead(std::string_view(buf).substr(0, head_len));
  if (parsed.failure) return *parsed.failure;
  HttpRequest request = std::move(parsed.request);
  auto failed = [&request](int status, std::string message) {
    HttpFailure failure(status, std::move(message));
    failure.method = request.method;
    failure.path = request.path;
    return failure;
  };
  BodyFraming framing = BodyFramingOf(request, limits.max_body_bytes);
  if (framing.failure) return failed(framing.failure->status, framing.failure->message);
  size_t length = framing.content_length.value_or(0);
  request.body = buf.substr(body_start);
  if (request.body.size() > length) {
    // Bytes after the body: a pipelined request, which this server does not serve.
    return failed(400, "data after the request body (pipelining is not supported)");
  }
  const std::string* expect = request.Header("expect");
  if (expect != nullptr && request.body.size() < length) {
    if (::strcasecmp(expect->c_str(), "100-continue") != 0) {
      return failed(417, "only Expect: 100-continue is understood");
    }
    std::lock_guard lock(mu_);
    SendAllLocked("HTTP/1.1 100 Continue\r\n\r\n");
  }
  while (request.body.size() < length) {
    if (!WaitFor(fd_, POLLIN, deadline)) {
      return failed(408, "request body not complete before the deadline");
    }
    size_t want = std::min(sizeof chunk, length - request.body.size());
    ssize_t n = ::recv(fd_, chunk, want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failed(400, "connection closed inside the request body");
    request.body.append(chunk, static_cast<size_t>(n));
  }
  return request;
}

bool HttpConnection::SendAllLocked(const std::string& bytes) {
  Clock::time_point deadline = Clock::now() + std::chrono::seconds(10);
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && WaitFor(fd_, POLLOUT, deadline)) {
      continue;
    }
    return false;
  }
  return true;
}

bool HttpConnection::Send(const HttpResponse& response) {
  std::lock_guard lock(mu_);
  if (answered_) return false;
  answered_ = true;
  bool sent = SendAllLocked(SerializeResponse(response));
  // The client sees the end of the response now, even while the connection
  // object lives on (an abandoned evaluation still holds it).
  ::shutdown(fd_, SHUT_WR);
  return sent;
}

}  // namespace kforge::serve
