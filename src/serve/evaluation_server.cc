#include "serve/evaluation_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <strings.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>

#include "common/hash.h"

namespace kforge::serve {

namespace {

using Clock = std::chrono::steady_clock;

std::string PeerName(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
    return fmt::format("{}:{}", host, port);
  }
  if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
    return fmt::format("[{}]:{}", host, port);
  }
  return "?";
}

// A short summary of an evaluation for the request log.
std::string ResultNote(const nlohmann::json& result) {
  auto text = [&](const char* key) -> std::string {
    auto it = result.find(key);
    return it == result.end() ? "?" : it->dump();
  };
  std::string milestone = "?";
  if (auto r = result.find("reward"); r != result.end() && r->is_object()) {
    if (auto m = r->find("milestone"); m != r->end()) milestone = m->dump();
  }
  return fmt::format(" accepted={} milestone={}", text("accepted"), milestone);
}

HttpResponse WithHeader(HttpResponse response, std::string name, std::string value) {
  response.headers.emplace_back(std::move(name), std::move(value));
  return response;
}

}  // namespace

bool TokensEqual(const std::string& given, const std::string& expected) {
  std::string a = Sha256Hex(given), b = Sha256Hex(expected);
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0 && a.size() == b.size();
}

EvaluationServer::EvaluationServer(ServerOptions options, EvaluationService& service)
    : options_(std::move(options)), service_(service), queue_(options_.queue_capacity) {}

EvaluationServer::~EvaluationServer() {
  Shutdown();
  Wait();
  for (int fd : wake_fds_) {
    if (fd >= 0) ::close(fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status EvaluationServer::Start() {
  if (service_.workers() < 1) return Error::BadInput("the evaluation service has no workers");
  if (::pipe2(wake_fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Error::Io(fmt::format("pipe: {}", std::strerror(errno)));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(options_.port);
  if (int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Error::BadInput(
        fmt::format("cannot resolve --host {}: {}", options_.host, ::gai_strerror(rc)));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      last_error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    listen_fd_ = fd;
    break;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    return Error::BadInput(
        fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, last_error));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  for (int w = 0; w < service_.workers(); ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return Status::Ok();
}

void EvaluationServer::Shutdown() {
  if (stopping_.exchange(true)) return;
  if (wake_fds_[1] >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fds_[1], &c, 1);
  }
  // Never started: nothing else would close the queue for the workers.
  if (!acceptor_.joinable()) queue_.CloseAndDrain();
}

void EvaluationServer::Wait() {
  std::lock_guard lock(wait_mu_);
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

void EvaluationServer::AbandonInFlight() {
  std::vector<std::shared_ptr<HttpConnection>> connections;
  {
    std::lock_guard lock(in_flight_mu_);
    for (auto& [id, connection] : in_flight_) connections.push_back(connection);
  }
  for (auto& connection : connections) {
    if (connection->Send(ErrorResponse(503, "server shutting down: evaluation abandoned"))) {
      Log(fmt::format("serve: {} 503 evaluation abandoned at shutdown", connection->peer()));
    }
  }
}

nlohmann::json EvaluationServer::Health() const {
  return {{"status", stopping_ ? "stopping" : "ok"},
          {"version", KFORGE_VERSION},
          {"queue", {{"depth", queue_.size()}, {"capacity", queue_.capacity()}}},
          {"workers", service_.workers()},
          {"busy", busy_.load()},
          {"answered", answered_.load()},
          {"device", service_.DeviceJson()}};
}

Routed EvaluationServer::Route(const HttpRequest& request) const {
  if (options_.token) {
    const std::string* auth = request.Header("authorization");
    std::string given;
    if (auth != nullptr && auth->size() > 7 && ::strncasecmp(auth->c_str(), "Bearer ", 7) == 0) {
      given = auth->substr(7);
      while (!given.empty() && given.front() == ' ') given.erase(0, 1);
    }
    if (given.empty() || !TokensEqual(given, *options_.token)) {
      return WithHeader(ErrorResponse(401, auth == nullptr ? "missing Authorization: Bearer token"
                                                           : "invalid bearer token"),
                        "WWW-Authenticate", "Bearer");
    }
  }
  if (request.path == "/v1/health") {
    if (request.method != "GET") {
      return WithHeader(ErrorResponse(405, "/v1/health takes GET"), "Allow", "GET");
    }
    return JsonResponse(200, Health());
  }
  if (request.path == "/v1/evaluate") {
    if (request.method != "POST") {
      return WithHeader(ErrorResponse(405, "/v1/evaluate takes POST"), "Allow", "POST");
    }
    if (request.Header("content-length") == nullptr) {
      return ErrorResponse(411, "POST /v1/evaluate needs a Content-Length body");
    }
    auto parsed = ParseEvaluateRequest(request.body);
    if (!parsed) return ErrorResponse(400, parsed.error().message);
    return std::move(*parsed);
  }
  return ErrorResponse(
      404, fmt::format("no endpoint {} (POST /v1/evaluate, GET /v1/health)", request.path));
}

void EvaluationServer::Log(const std::string& line) {
  if (options_.log) {
    options_.log(line);
    return;
  }
  std::lock_guard lock(log_mu_);
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void EvaluationServer::Answer(HttpConnection& connection, const HttpResponse& response,
                              const std::string& line, Clock::time_point received,
                              const std::string& note) {
  bool sent = connection.Send(response);
  ++answered_;
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - received).count();
  Log(fmt::format("serve: {} {} {:.0f}ms{}{}", line, response.status, ms, note,
                  sent ? "" : " (not delivered)"));
}

void EvaluationServer::AcceptLoop() {
  while (!stopping_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    int n = ::poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      Log(fmt::format("serve: poll failed: {}", std::strerror(errno)));
      break;
    }
    if (fds[1].revents != 0) break;
    if ((fds[0].revents & POLLIN) == 0) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: back off instead of spinning on the same error.
        Log(fmt::format("serve: accept failed: {}", std::strerror(errno)));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      continue;
    }
    try {
      HandleConnection(std::make_shared<HttpConnection>(fd, PeerName(addr)));
    } catch (const std::exception& e) {
      // One request's failure (out of memory on a huge head) never ends the server.
      Log(fmt::format("serve: request failed: {}", e.what()));
    }
  }
  ::close(listen_fd_);
  listen_fd_ = -1;
  for (Job& job : queue_.CloseAndDrain()) {
    Answer(*job.connection, ErrorResponse(503, "server shutting down"), job.line, job.received, "");
  }
}

void EvaluationServer::HandleConnection(std::shared_ptr<HttpConnection> connection) {
  Clock::time_point received = Clock::now();
  auto read = connection->ReadRequest(options_.limits);
  if (auto* failure = std::get_if<HttpFailure>(&read)) {
    std::string line =
        fmt::format("{} {} {}", connection->peer(), failure->method.empty() ? "-" : failure->method,
                    failure->path.empty() ? "-" : failure->path);
    if (failure->status == 0) {
      Log(fmt::format("serve: {} no request ({})", line, failure->message));
      return;
    }
    Answer(*connection, ErrorResponse(failure->status, failure->message), line, received,
           " " + failure->message);
    return;
  }
  HttpRequest& request = std::get<HttpRequest>(read);
  std::string line = fmt::format("{} {} {}", connection->peer(), request.method, request.path);
  Routed routed = Route(request);
  if (auto* response = std::get_if<HttpResponse>(&routed)) {
    std::string note;
    if (response->status >= 400) {
      auto body = nlohmann::json::parse(response->body, nullptr, false);
      if (body.is_object() && body.contains("error")) note = " " + body["error"].get<std::string>();
    }
    Answer(*connection, *response, line, received, note);
    return;
  }
  Job job{next_id_++, std::move(std::get<EvaluateRequest>(routed)), connection, line, received};
  if (stopping_) {
    Answer(*connection, ErrorResponse(503, "server shutting down"), line, received, "");
    return;
  }
  EvaluateRequest queued = job.request;  // TryPush moves the job
  if (!queue_.TryPush(job)) {
    Answer(*connection,
           WithHeader(ErrorResponse(503, fmt::format("queue full ({} evaluations waiting); "
                                                     "retry later",
                                                     queue_.capacity())),
                      "Retry-After", "5"),
           line, received, " queue full");
    return;
  }
  service_.Prepare(queued);  // its build runs while the workers evaluate earlier requests
}

void EvaluationServer::WorkerLoop(int worker) {
  while (std::optional<Job> job = queue_.Pop()) {
    {
      std::lock_guard lock(in_flight_mu_);
      in_flight_[job->id] = job->connection;
    }
    ++busy_;
    HttpResponse response;
    std::string note;
    try {
      Result<nlohmann::json> result = service_.Evaluate(worker, job->request);
      if (result) {
        response = JsonResponse(200, *result);
        note = ResultNote(*result);
      } else {
        const Error& e = result.error();
        bool bad = e.kind == ErrorKind::kBadInput || e.kind == ErrorKind::kNotFound;
        response = ErrorResponse(bad ? 422 : 500, e.message);
        note = " " + e.message;
      }
    } catch (const std::exception& e) {
      response = ErrorResponse(500, fmt::format("evaluation failed: {}", e.what()));
      note = fmt::format(" evaluation failed: {}", e.what());
    } catch (...) {
      response = ErrorResponse(500, "evaluation failed");
      note = " evaluation failed";
    }
    --busy_;
    {
      std::lock_guard lock(in_flight_mu_);
      in_flight_.erase(job->id);
    }
    Answer(*job->connection, response, job->line + fmt::format(" #{}", job->id), job->received,
           note);
  }
}

}  // namespace kforge::serve
