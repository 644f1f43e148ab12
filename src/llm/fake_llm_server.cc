#include "llm/fake_llm_server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace kforge::llm::testing {

Result<std::unique_ptr<FakeLlmServer>> FakeLlmServer::Start(const std::string& replies_file) {
  std::string script = std::string(KFORGE_SOURCE_DIR) + "/tests/fixtures/fake_llm_server.py";
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Error::Io("pipe failed");
  std::vector<std::string> args = {"python3", script, "--port", "0"};
  if (!replies_file.empty()) {
    args.push_back("--replies");
    args.push_back(replies_file);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return Error::Io("fork failed");
  if (pid == 0) {
    // Its own process group, so a wrapper (a pyenv shim) and the server die together.
    ::setpgid(0, 0);
    ::dup2(out[1], STDOUT_FILENO);
    ::execvp("python3", argv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists whichever side runs first
  ::close(out[1]);
  std::unique_ptr<FakeLlmServer> server(new FakeLlmServer());
  server->pid_ = pid;

  // The first stdout line is the port.
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (line.find('\n') == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) break;
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
    char buf[64];
    ssize_t n = ::read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  if (line.find('\n') == std::string::npos) {
    return Error::Io(fmt::format("{} did not print its port", script));
  }
  server->port_ = std::atoi(line.c_str());
  if (server->port_ <= 0) return Error::Io(fmt::format("{} printed '{}'", script, line));
  return server;
}

FakeLlmServer::~FakeLlmServer() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string FakeLlmServer::base_url() const {
  return fmt::format("http://127.0.0.1:{}", port_);
}

std::string FakeLlmServer::OpenAiSpec(const std::string& model) const {
  return fmt::format("openai:{}@{}/v1", model, base_url());
}

std::string FakeLlmServer::AnthropicSpec(const std::string& model) const {
  return fmt::format("anthropic:{}@{}", model, base_url());
}

Result<std::string> FakeLlmServer::Call(const std::string& method, const std::string& path,
                                        const std::string& body) {
  HttpRequest request;
  request.method = method;
  request.url = base_url() + path;
  request.body = body;
  request.headers.emplace_back("Content-Type", "application/json");
  request.timeouts.total_ms = 10000;
  auto response = transport_.Send(request, nullptr);
  if (!response) return Error::Io(response.error().Describe());
  if (response->status != 200) {
    return Error::Io(
        fmt::format("{} {}: HTTP {}: {}", method, path, response->status, response->body));
  }
  return response->body;
}

Status FakeLlmServer::Script(const nlohmann::json& behaviours) {
  // A lone behaviour is welcome too ({x} in a braced list can collapse to x).
  nlohmann::json queue = behaviours.is_array() ? behaviours : nlohmann::json::array({behaviours});
  nlohmann::json body = nlohmann::json::object();
  body["queue"] = std::move(queue);
  auto r = Call("POST", "/_script", body.dump());
  if (!r) return r.error();
  return {};
}

Status FakeLlmServer::Reset() {
  auto r = Call("POST", "/_reset", "{}");
  if (!r) return r.error();
  return {};
}

Result<std::vector<nlohmann::json>> FakeLlmServer::Requests() {
  auto r = Call("GET", "/_requests", "");
  if (!r) return r.error();
  nlohmann::json j = nlohmann::json::parse(*r, nullptr, false);
  if (!j.is_object() || !j.contains("requests")) return Error::Io("bad /_requests answer");
  return j["requests"].get<std::vector<nlohmann::json>>();
}

}  // namespace kforge::llm::testing
