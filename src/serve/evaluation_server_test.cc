// The server over real loopback sockets, with a fake evaluation service so a
// load test of hundreds of requests runs in well under a second.
#include "serve/evaluation_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

namespace kforge::serve {
namespace {

using nlohmann::json;

// Answers after an optional gate opens; the task source picks the outcome
// ("bad-task" → kBadInput, "crash" → kInternal), and the answer echoes the
// candidate so each client can check it got its own result.
class FakeEvaluationService : public EvaluationService {
 public:
  explicit FakeEvaluationService(int workers, bool gated = false)
      : workers_(workers), open_(!gated) {}

  int workers() const override { return workers_; }
  json DeviceJson() const override { return {{"kind", "cpu"}, {"hardware", "fake"}}; }
  Result<json> Evaluate(int worker, const EvaluateRequest& request) override {
    {
      std::unique_lock lock(mu_);
      ++started_;
      changed_.notify_all();
      changed_.wait(lock, [this] { return open_; });
    }
    ++calls_;
    if (request.task_source == "bad-task") return Error::BadInput("task has no Model");
    if (request.task_source == "crash") return Error::Internal("harness died");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return json{{"accepted", true},
                {"reward", {{"milestone", 2}}},
                {"candidate", {{"source", request.candidate_source}}},
                {"policy", PolicyName(request.policy)},
                {"worker", worker}};
  }

  void Prepare(const EvaluateRequest& request) override {
    std::lock_guard lock(mu_);
    prepared_.push_back(request.candidate_source);
  }
  std::vector<std::string> prepared() {
    std::lock_guard lock(mu_);
    return prepared_;
  }

  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }
  void WaitStarted(int n) {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return started_ >= n; });
  }
  int calls() const { return calls_; }

 private:
  int workers_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_;
  int started_ = 0;
  std::atomic<int> calls_{0};
  std::vector<std::string> prepared_;
};

struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers;
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

Reply ReadReply(int fd) {
  std::string raw;
  char buf[8192];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) raw.append(buf, static_cast<size_t>(n));
  Reply r;
  size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(raw.substr(9, 3));
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t eol = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, eol - pos);
    size_t colon = line.find(':');
    r.headers[line.substr(0, colon)] = line.substr(colon + 2);
    pos = eol + 2;
  }
  r.body = raw.substr(end + 4);
  if (std::to_string(r.body.size()) != r.headers["Content-Length"]) r.status = -1;
  return r;
}

// Sends raw bytes on a fresh connection and reads the whole reply.
Reply Exchange(int port, const std::string& bytes) {
  int fd = Connect(port);
  if (fd < 0) return {};
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  Reply r = ReadReply(fd);
  ::close(fd);
  return r;
}

std::string Request(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& extra_headers = "") {
  std::string head =
      fmt::format("{} {} HTTP/1.1\r\nHost: localhost\r\n{}", method, path, extra_headers);
  if (method == "POST") head += fmt::format("Content-Length: {}\r\n", body.size());
  return head + "\r\n" + body;
}

std::string EvaluateBody(const std::string& candidate, const std::string& task = "T") {
  return json{{"task", task}, {"candidate", candidate}, {"format", "cpp"}, {"policy", "any"}}
      .dump();
}

struct Fixture {
  explicit Fixture(EvaluationService& service, ServerOptions options = {}) {
    options.log = [this](const std::string& line) {
      std::lock_guard lock(mu);
      log.push_back(line);
    };
    server = std::make_unique<EvaluationServer>(std::move(options), service);
    Status st = server->Start();
    EXPECT_TRUE(st) << st.error().message;
  }
  int port() const { return server->port(); }
  std::mutex mu;
  std::vector<std::string> log;
  std::unique_ptr<EvaluationServer> server;
};

TEST(EvaluationServer, EvaluatesAndReportsHealth) {
  FakeEvaluationService service(2);
  Fixture f(service);
  Reply r = Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C1")));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Json()["candidate"]["source"], "C1");
  EXPECT_EQ(r.Json()["policy"], "any");

  Reply h = Exchange(f.port(), Request("GET", "/v1/health", ""));
  ASSERT_EQ(h.status, 200);
  json health = h.Json();
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["queue"]["depth"], 0);
  EXPECT_EQ(health["queue"]["capacity"], 64);
  EXPECT_EQ(health["workers"], 2);
  EXPECT_EQ(health["device"]["kind"], "cpu");
}

TEST(EvaluationServer, AnswersBadRequestsWithJsonErrors) {
  FakeEvaluationService service(1);
  ServerOptions options;
  options.limits.max_body_bytes = 64 * 1024;
  Fixture f(service, options);
  struct Case {
    std::string bytes;
    int status;
  };
  std::string big(100 * 1024, 'x');
  for (const Case& c : std::vector<Case>{
           {Request("GET", "/nope", ""), 404},
           {Request("GET", "/v1/evaluate", ""), 405},
           {Request("DELETE", "/v1/health", ""), 405},
           {Request("POST", "/v1/evaluate", "{not json"), 400},
           {Request("POST", "/v1/evaluate", R"({"task": "T"})"), 400},
           {Request("POST", "/v1/evaluate", R"({"task": 1, "candidate": "C"})"), 400},
           {Request("POST", "/v1/evaluate", R"({"task": "T", "candidate": "C", "format": "x"})"),
            400},
           {Request("POST", "/v1/evaluate", R"({"task": "T", "candidate": "C", "policy": "x"})"),
            400},
           {Request("POST", "/v1/evaluate", big), 413},
           {"POST /v1/evaluate HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n", 413},
           {"POST /v1/evaluate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501},
           {"POST /v1/evaluate HTTP/1.1\r\n\r\n", 411},
           {"GARBAGE\r\n\r\n", 400},
           {"GET /v1/health HTTP/3\r\n\r\n", 505},
           {"GET /v1/health HTTP/1.1\r\n" + std::string(20000, 'a') + ": b\r\n\r\n", 431},
           {Request("POST", "/v1/evaluate", EvaluateBody("C", "bad-task")), 422},
           {Request("POST", "/v1/evaluate", EvaluateBody("C", "crash")), 500},
       }) {
    Reply r = Exchange(f.port(), c.bytes);
    EXPECT_EQ(r.status, c.status) << c.bytes.substr(0, 120) << " -> " << r.body;
    EXPECT_TRUE(r.Json().is_object() && r.Json()["error"].is_string())
        << c.bytes.substr(0, 80) << " -> " << r.body;
  }
  // The server is still up and serving.
  EXPECT_EQ(Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C"))).status, 200);
  // Malformed ones never reached the service.
  EXPECT_EQ(service.calls(), 3);
}

TEST(EvaluationServer, ClientsThatVanishOrStallDoNotStopIt) {
  FakeEvaluationService service(1);
  ServerOptions options;
  options.limits.deadline = std::chrono::milliseconds(200);
  Fixture f(service, options);
  int fd = Connect(f.port());
  ::close(fd);  // connects and leaves
  fd = Connect(f.port());
  std::string partial = "POST /v1/evaluate HTTP/1.1\r\nContent-Length: 10\r\n\r\n{\"t";
  ASSERT_GT(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), 0);
  Reply stalled = ReadReply(fd);  // the server gives up on the body
  ::close(fd);
  EXPECT_EQ(stalled.status, 408);
  EXPECT_EQ(Exchange(f.port(), Request("GET", "/v1/health", "")).status, 200);
}

TEST(EvaluationServer, RequiresTheBearerToken) {
  FakeEvaluationService service(1);
  ServerOptions options;
  options.token = "s3cret";
  Fixture f(service, options);
  EXPECT_EQ(Exchange(f.port(), Request("GET", "/v1/health", "")).status, 401);
  Reply wrong = Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C"),
                                           "Authorization: Bearer s3cre\r\n"));
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(wrong.headers["WWW-Authenticate"], "Bearer");
  EXPECT_EQ(Exchange(f.port(), Request("GET", "/v1/health", "", "Authorization: Basic s3cret\r\n"))
                .status,
            401);
  EXPECT_EQ(Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C"),
                                       "Authorization: Bearer s3cret\r\n"))
                .status,
            200);
  EXPECT_EQ(service.calls(), 1);
}

TEST(TokensEqual, ComparesWholeStrings) {
  EXPECT_TRUE(TokensEqual("abc", "abc"));
  EXPECT_FALSE(TokensEqual("abc", "abd"));
  EXPECT_FALSE(TokensEqual("ab", "abc"));
  EXPECT_FALSE(TokensEqual("", "abc"));
}

TEST(EvaluationServer, FullQueueIsA503AndShutdownFailsOnlyQueuedRequests) {
  FakeEvaluationService service(1, /*gated=*/true);
  ServerOptions options;
  options.queue_capacity = 2;
  Fixture f(service, options);
  std::vector<Reply> replies(3);
  std::vector<std::thread> clients;
  // One evaluation in flight, then two queued.
  clients.emplace_back([&] {
    replies[0] = Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C0")));
  });
  service.WaitStarted(1);
  for (int i = 1; i < 3; ++i) {
    clients.emplace_back([&, i] {
      replies[i] = Exchange(f.port(),
                            Request("POST", "/v1/evaluate", EvaluateBody("C" + std::to_string(i))));
    });
  }
  for (int tries = 0; tries < 500 && f.server->Health()["queue"]["depth"] != 2; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(f.server->Health()["queue"]["depth"], 2);
  // The queued candidates' builds were started while the worker was busy.
  std::vector<std::string> prepared = service.prepared();
  ASSERT_EQ(prepared.size(), 3u);
  EXPECT_EQ(std::set<std::string>(prepared.begin() + 1, prepared.end()),
            (std::set<std::string>{"C1", "C2"}));
  Reply full = Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C3")));
  EXPECT_EQ(full.status, 503);
  EXPECT_NE(full.Json()["error"].get<std::string>().find("queue full"), std::string::npos);
  EXPECT_EQ(full.headers["Retry-After"], "5");
  // Health is answered by the accept thread even while every worker is busy.
  EXPECT_EQ(Exchange(f.port(), Request("GET", "/v1/health", "")).Json()["busy"], 1);

  f.server->Shutdown();
  for (int tries = 0; tries < 500 && f.server->Health()["queue"]["depth"] != 0; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  service.Open();
  for (std::thread& t : clients) t.join();
  f.server->Wait();
  EXPECT_EQ(replies[0].status, 200);  // in flight: finished
  EXPECT_EQ(replies[1].status, 503);  // queued: failed cleanly
  EXPECT_EQ(replies[2].status, 503);
  EXPECT_EQ(service.calls(), 1);
  EXPECT_EQ(service.prepared().size(), 3u);  // not C3, which the full queue refused
  EXPECT_EQ(Connect(f.port()), -1);          // no longer listening
}

TEST(EvaluationServer, AbandonAnswersInFlightEvaluations) {
  FakeEvaluationService service(1, /*gated=*/true);
  Fixture f(service);
  Reply reply;
  std::thread client(
      [&] { reply = Exchange(f.port(), Request("POST", "/v1/evaluate", EvaluateBody("C"))); });
  service.WaitStarted(1);
  f.server->Shutdown();
  f.server->AbandonInFlight();
  client.join();
  EXPECT_EQ(reply.status, 503);
  service.Open();
  f.server->Wait();
}

// 200 requests from 16 client threads, one in five malformed or misrouted:
// every request is answered, each valid one with its own result.
TEST(EvaluationServer, LoadTestLosesNoRequest) {
  FakeEvaluationService service(2);
  Fixture f(service);
  constexpr int kClients = 16, kRequests = 200;
  std::atomic<int> next{0}, ok{0}, rejected{0}, wrong{0};
  std::mutex failures_mu;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      for (int i = next++; i < kRequests; i = next++) {
        std::string candidate = fmt::format("candidate-{}", i);
        std::string bytes;
        int expect = 200;
        switch (i % 10) {
          case 3:
            bytes = Request("POST", "/v1/evaluate", "{\"task\": 1}"), expect = 400;
            break;
          case 7:
            bytes = Request("GET", "/v1/missing", ""), expect = 404;
            break;
          default:
            bytes = Request("POST", "/v1/evaluate", EvaluateBody(candidate));
        }
        Reply r = Exchange(f.port(), bytes);
        bool good =
            r.status == expect && (expect != 200 || r.Json()["candidate"]["source"] == candidate);
        if (good) {
          ++(expect == 200 ? ok : rejected);
        } else {
          ++wrong;
          std::lock_guard lock(failures_mu);
          failures.push_back(fmt::format("#{}: {} {}", i, r.status, r.body));
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(wrong, 0) << (failures.empty() ? "" : failures.front());
  EXPECT_EQ(ok, 160);
  EXPECT_EQ(rejected, 40);
  EXPECT_EQ(service.calls(), 160);
  // The server counts and logs a request once its reply is sent, so the last
  // client can read its reply a moment before that: wait for it, boundedly.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (f.server->Health()["answered"] != kRequests &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  json health = f.server->Health();
  EXPECT_EQ(health["answered"], kRequests);
  EXPECT_EQ(health["queue"]["depth"], 0);
  std::lock_guard lock(f.mu);
  EXPECT_EQ(f.log.size(), static_cast<size_t>(kRequests));
}

}  // namespace
}  // namespace kforge::serve
