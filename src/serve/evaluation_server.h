// `kforge serve`: an HTTP/1.1 server in front of an EvaluationService, built
// the llama.cpp-server way. One thread accepts connections and reads and
// parses each request; anything it can answer at once (health, errors) it
// answers; an evaluation goes into a bounded queue of typed jobs, and one
// worker thread per evaluation slot (a GPU, or a CPU worker) takes jobs
// from it, evaluates and answers. A full queue is a 503 at once, never a
// stalled accept thread. See README.md and docs/rl.md for the API.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "serve/bounded_queue.h"
#include "serve/evaluate_request.h"
#include "serve/evaluation_service.h"
#include "serve/http_connection.h"
#include "serve/http_message.h"

namespace kforge::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port (port() says which)
  size_t queue_capacity = 64;
  ReadLimits limits;
  // When set, every request must carry "Authorization: Bearer <token>".
  std::optional<std::string> token;
  // One line per request; default: stderr.
  std::function<void(const std::string&)> log;
};

// True when the two strings are equal, in time independent of where they
// differ (both are hashed first, so their lengths leak nothing either).
bool TokensEqual(const std::string& given, const std::string& expected);

// What the accept thread does with one request: answer it now, or queue an
// evaluation. Pure (no sockets), so routing is tested without a network.
using Routed = std::variant<HttpResponse, EvaluateRequest>;

class EvaluationServer {
 public:
  EvaluationServer(ServerOptions options, EvaluationService& service);
  // Shuts down and waits.
  ~EvaluationServer();
  EvaluationServer(const EvaluationServer&) = delete;
  EvaluationServer& operator=(const EvaluationServer&) = delete;

  // Binds, listens and starts the threads. kBadInput when the address cannot
  // be bound (a port in use, a host that does not resolve).
  Status Start();
  // The bound port (after Start()).
  int port() const { return port_; }

  // Stops accepting, answers the requests still queued 503, and lets the
  // evaluations in flight finish and answer. Returns at once; Wait() joins.
  // Idempotent; callable from any thread (not from a signal handler).
  void Shutdown();
  // Answers the evaluations in flight 503 now; their results, when they
  // come, are dropped. For a second Ctrl-C.
  void AbandonInFlight();
  // Joins every thread (after Shutdown()).
  void Wait();

  // The /v1/health object.
  nlohmann::json Health() const;
  // Route one parsed request (auth, path, method, body).
  Routed Route(const HttpRequest& request) const;

 private:
  struct Job {
    uint64_t id = 0;
    EvaluateRequest request;
    std::shared_ptr<HttpConnection> connection;
    std::string line;  // "PEER METHOD PATH" for the log
    std::chrono::steady_clock::time_point received;
  };

  void AcceptLoop();
  void HandleConnection(std::shared_ptr<HttpConnection> connection);
  void WorkerLoop(int worker);
  void Answer(HttpConnection& connection, const HttpResponse& response, const std::string& line,
              std::chrono::steady_clock::time_point received, const std::string& note);
  void Log(const std::string& line);

  ServerOptions options_;
  EvaluationService& service_;
  BoundedQueue<Job> queue_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // a pipe: Shutdown() writes, the accept loop polls
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int> busy_{0};
  std::atomic<uint64_t> answered_{0};
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  mutable std::mutex in_flight_mu_;
  std::map<uint64_t, std::shared_ptr<HttpConnection>> in_flight_;
  std::mutex log_mu_;
  std::mutex wait_mu_;
};

}  // namespace kforge::serve
