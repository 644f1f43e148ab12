// kforge llm test: one call to a model, to check a spec, a key and an
// endpoint before a long run depends on them (CONTRACT.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "common/line_printer.h"
#include "llm/call_log.h"
#include "llm/llm_session.h"
#include "llm/llm_settings.h"

namespace kforge::cli {

namespace {

struct LlmTestArgs {
  std::string spec;
  std::string prompt = "Reply with one short sentence that names the model you are.";
  std::string stage = "llm_test";
  bool json = false;
  ConfigFlags config;
};

int RunLlmTest(const LlmTestArgs& a) {
  Config config = LoadConfig(a.config);
  auto settings = llm::LlmSettings::FromConfig(config);
  if (!settings) throw OperationError{settings.error()};

  // The configured JSONL call log records (and replays) calls; without one
  // the call is kept in memory only.
  std::unique_ptr<llm::LlmCallLog> log;
  if (!settings->call_log_path.empty()) {
    log = std::make_unique<llm::JsonlCallLog>(settings->call_log_path);
  } else {
    log = std::make_unique<llm::MemoryCallLog>();
  }
  std::string run_id = "llm-test-" + llm::NewCallId().substr(0, 8);
  auto session = llm::LlmSession::Open(std::move(settings).value(),
                                       {run_id, a.spec, log.get(), nullptr, nullptr});
  if (!session) throw OperationError{session.error().ToError()};

  llm::Prompt prompt;
  prompt.Text("prompt", a.prompt);
  auto reply = (*session)->Ask(a.stage, prompt);
  if (!reply) throw OperationError{reply.error().ToError()};

  if (a.json) {
    nlohmann::json out = {
        {"text", reply->text},
        {"model", reply->model},
        {"usage",
         {{"input_tokens", reply->usage.input_tokens},
          {"output_tokens", reply->usage.output_tokens}}},
        {"spec", (*session)->ClientFor(a.stage).spec()},
        {"cost_usd", reply->cost_usd},
        {"latency_ms", reply->latency_ms},
        {"run_id", run_id},
    };
    std::cout << llm::DumpJson(out) << std::endl;
  } else {
    std::cout << reply->text << std::endl;
    LinePrinter::Get().Line(fmt::format(
        "{}: {} input + {} output tokens, ${:.6f}, {:.0f} ms", reply->model,
        reply->usage.input_tokens, reply->usage.output_tokens, reply->cost_usd, reply->latency_ms));
  }
  return 0;
}

}  // namespace

void AddLlmCommand(CLI::App& root, CommandTable& table) {
  CLI::App* llm = root.add_subcommand("llm", "Talk to a model directly");
  llm->require_subcommand(1);

  auto args = std::make_shared<LlmTestArgs>();
  CLI::App* test = llm->add_subcommand("test", "Make one call and print the reply");
  test->add_option("--llm", args->spec,
                   "Model spec: openai:MODEL[@BASE_URL], anthropic:MODEL[@BASE_URL], "
                   "replay:RUN_ID (default: config llm.spec)");
  test->add_option("--prompt", args->prompt, "The prompt to send");
  test->add_option("--stage", args->stage,
                   "Stage name to ask as (picks llm.stage.<stage> when configured)");
  test->add_flag("--json", args->json, "Print one JSON object on stdout");
  AddConfigFlags(test, args->config);
  test->callback([args, &table] { table.selected = [args] { return RunLlmTest(*args); }; });
}

}  // namespace kforge::cli
