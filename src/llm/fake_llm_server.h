// Test support: runs tests/fixtures/fake_llm_server.py on a free loopback
// port for the duration of a test suite and scripts it over its control
// endpoints. Only the tests link this.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "llm/http_transport.h"

namespace kforge::llm::testing {

class FakeLlmServer {
 public:
  // Starts the server (python3) and waits for its port; `replies_file` is
  // passed as --replies when not empty.
  static Result<std::unique_ptr<FakeLlmServer>> Start(const std::string& replies_file = "");
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const;                               // http://127.0.0.1:PORT
  std::string OpenAiSpec(const std::string& model) const;     // openai:MODEL@.../v1
  std::string AnthropicSpec(const std::string& model) const;  // anthropic:MODEL@...

  // Appends behaviours to the server's queue (see the fixture's docstring).
  Status Script(const nlohmann::json& behaviours);
  Status Reset();
  // Every model request the server received since the last reset.
  Result<std::vector<nlohmann::json>> Requests();

 private:
  FakeLlmServer() = default;
  Result<std::string> Call(const std::string& method, const std::string& path,
                           const std::string& body);

  pid_t pid_ = -1;
  int port_ = 0;
  CurlTransport transport_;
};

}  // namespace kforge::llm::testing
