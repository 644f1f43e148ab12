#include "llm/model_spec.h"

#include <gtest/gtest.h>

#include <map>

namespace kforge::llm {
namespace {

TEST(ModelSpec, ParsesEachProvider) {
  auto a = ParseModelSpec("openai:gpt-4o");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->provider, Provider::kOpenAi);
  EXPECT_EQ(a->model, "gpt-4o");
  EXPECT_EQ(a->base_url, "");
  EXPECT_DOUBLE_EQ(a->weight, 1.0);

  auto b = ParseModelSpec("openai:qwen2.5-coder@http://localhost:8000/v1/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->model, "qwen2.5-coder");
  EXPECT_EQ(b->base_url, "http://localhost:8000/v1");  // trailing slash dropped
  EXPECT_EQ(b->ToString(), "openai:qwen2.5-coder@http://localhost:8000/v1");

  auto c = ParseModelSpec(" anthropic:claude-sonnet-4-20250514@https://proxy.example/anthropic ");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->provider, Provider::kAnthropic);
  EXPECT_EQ(c->base_url, "https://proxy.example/anthropic");

  auto d = ParseModelSpec("replay:20261123-143012-3fa9c1");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->provider, Provider::kReplay);
  EXPECT_EQ(d->run_id, "20261123-143012-3fa9c1");
  EXPECT_EQ(d->ToString(), "replay:20261123-143012-3fa9c1");
}

TEST(ModelSpec, ModelNamesMayContainColonsAndAts) {
  auto ollama = ParseModelSpec("openai:qwen2.5-coder:7b@http://localhost:11434/v1");
  ASSERT_TRUE(ollama.ok());
  EXPECT_EQ(ollama->model, "qwen2.5-coder:7b");
  auto vertex = ParseModelSpec("anthropic:claude-3-5@20240620");
  ASSERT_TRUE(vertex.ok());
  EXPECT_EQ(vertex->model, "claude-3-5@20240620");
  EXPECT_EQ(vertex->base_url, "");
}

TEST(ModelSpec, ParsesWeightedLists) {
  auto specs = ParseModelSpecs("openai:a*0.8, anthropic:b@http://h:1*0.2,replay:r");
  ASSERT_TRUE(specs.ok()) << specs.error().message;
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_DOUBLE_EQ((*specs)[0].weight, 0.8);
  EXPECT_EQ((*specs)[1].base_url, "http://h:1");
  EXPECT_DOUBLE_EQ((*specs)[1].weight, 0.2);
  EXPECT_DOUBLE_EQ((*specs)[2].weight, 1.0);
}

TEST(ModelSpec, RejectsMalformedSpecsNamingTheProblem) {
  struct Case {
    const char* spec;
    const char* why;
  } cases[] = {
      {"", "empty spec"},
      {"gpt-4o", "no provider prefix"},
      {"google:gemini", "unknown provider 'google'"},
      {"openai:", "no model name"},
      {"openai:@http://x", "no model name"},
      {"openai:m*0", "weight must be positive"},
      {"openai:m*-1", "weight must be positive"},
      {"openai:m*abc", "weight is not a number"},
      {"openai:m@ftp://host", "must start with http:// or https://"},
      {"openai:m@http://", "base URL has no host"},
      {"replay:", "replay needs a run id"},
      {"replay:a/b", "a run id has no"},
      {"openai:a,,openai:b", "empty spec"},
  };
  for (const Case& c : cases) {
    auto r = ParseModelSpecs(c.spec);
    ASSERT_FALSE(r.ok()) << c.spec << " was accepted";
    EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
    EXPECT_NE(r.error().message.find(c.why), std::string::npos)
        << c.spec << " -> " << r.error().message;
  }
}

// A stand-in model that answers with its own name.
class NamedClient : public LlmClient {
 public:
  explicit NamedClient(std::string name) : name_(std::move(name)) {}
  LlmResult<LlmResponse> Complete(const LlmRequest&, const TextDeltaFn&) override {
    LlmResponse r;
    r.text = name_;
    r.model = name_;
    return r;
  }
  std::string spec() const override { return "openai:" + name_; }
  std::string model() const override { return name_; }

 private:
  std::string name_;
};

std::vector<std::string> Sample(uint64_t seed, int n) {
  std::vector<EnsembleClient::Member> members;
  members.push_back({std::make_unique<NamedClient>("a"), 0.8});
  members.push_back({std::make_unique<NamedClient>("b"), 0.2});
  EnsembleClient ensemble(std::move(members), seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(ensemble.Complete({})->text);
  return out;
}

TEST(EnsembleClient, SamplesByWeightReproduciblyFromItsSeed) {
  auto first = Sample(42, 2000);
  EXPECT_EQ(first, Sample(42, 2000));
  EXPECT_NE(first, Sample(43, 2000));
  std::map<std::string, int> counts;
  for (const auto& s : first) ++counts[s];
  EXPECT_NEAR(counts["a"] / 2000.0, 0.8, 0.04);
  EXPECT_NEAR(counts["b"] / 2000.0, 0.2, 0.04);
}

TEST(EnsembleClient, DescribesItsMembers) {
  std::vector<EnsembleClient::Member> members;
  members.push_back({std::make_unique<NamedClient>("a"), 3});
  members.push_back({std::make_unique<NamedClient>("b"), 1});
  EnsembleClient ensemble(std::move(members), 1);
  EXPECT_EQ(ensemble.spec(), "openai:a*3,openai:b*1");
  EXPECT_EQ(ensemble.model(), "ensemble");
  LlmClient* picked = ensemble.Pick();
  EXPECT_TRUE(picked->model() == "a" || picked->model() == "b");
}

}  // namespace
}  // namespace kforge::llm
