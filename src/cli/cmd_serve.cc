// kforge serve: evaluations over HTTP (CONTRACT.md "kforge serve"; docs/rl.md).
#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli/command.h"
#include "cli/config_setup.h"
#include "common/files.h"
#include "common/line_printer.h"
#include "eval/evaluator.h"
#include "run/device_probe.h"
#include "run/signal_stop.h"
#include "run/stop_request.h"
#include "serve/evaluation_server.h"
#include "serve/evaluation_service.h"

namespace kforge::cli {

namespace {

namespace fs = std::filesystem;

struct ServeArgs {
  int port = -1;
  std::string host = "127.0.0.1";
  std::string device = "auto";
  std::string token_env;
  int workers = 0;  // 0: one per visible GPU on cuda, 1 on cpu
  int queue = 64;
  int max_body_mb = 4;
  ConfigFlags config;
};

void Say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

int RunServe(const ServeArgs& a) {
  auto bad = [](std::string message) { throw OperationError{Error::BadInput(std::move(message))}; };
  if (a.port < 0 || a.port > 65535) bad(fmt::format("--port must be 0-65535, not {}", a.port));
  if (a.queue < 1) bad(fmt::format("--queue must be at least 1, not {}", a.queue));
  if (a.workers < 0) bad(fmt::format("--workers must be at least 1, not {}", a.workers));
  if (a.max_body_mb < 1 || a.max_body_mb > 1024) {
    bad(fmt::format("--max-body-mb must be 1-1024, not {}", a.max_body_mb));
  }
  serve::ServerOptions server_options;
  server_options.host = a.host;
  server_options.port = a.port;
  server_options.queue_capacity = static_cast<size_t>(a.queue);
  server_options.limits.max_body_bytes = static_cast<size_t>(a.max_body_mb) * 1024 * 1024;
  if (!a.token_env.empty()) {
    const char* token = std::getenv(a.token_env.c_str());
    if (token == nullptr || *token == '\0') {
      bad(fmt::format("--token-env {}: the environment variable is not set or empty", a.token_env));
    }
    server_options.token = token;
  }

  Config config = LoadConfig(a.config);
  EvalOptions options = EvalOptionsFromConfig(config);
  auto device = run::ProbeDevice(a.device, 0);
  if (!device) throw OperationError{device.error()};
  options.device = device->kind;
  std::vector<int> gpus;
  int cpu_workers = a.workers == 0 ? 1 : a.workers;
  if (device->kind == "cuda") {
    int n = a.workers == 0 ? device->visible_gpus : a.workers;
    if (n > device->visible_gpus) {
      bad(fmt::format("--workers {}: on cuda there is one worker per GPU and PyTorch sees {}", n,
                      device->visible_gpus));
    }
    for (int g = 0; g < n; ++g) gpus.push_back(g);
  }
  fs::path scratch_parent =
      options.scratch_root.empty() ? fs::temp_directory_path() / "kforge" : options.scratch_root;
  auto scratch = MakeTempDir(scratch_parent, fmt::format("serve-{}-", ::getpid()));
  if (!scratch) throw OperationError{scratch.error()};
  // Removed however the command ends (but for an abandoning _Exit).
  struct RemoveOnExit {
    fs::path path;
    ~RemoveOnExit() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_scratch{*scratch};

  serve::InProcessEvaluationService service(options, gpus, cpu_workers, device->hardware, *scratch);
  // Evaluations run quietly: the server's own log is one line per request.
  LinePrinter::Get().set_quiet(true);
  serve::EvaluationServer server(server_options, service);
  run::StopRequest stop;
  run::SignalStop signals(stop);
  ThrowIfError(server.Start());
  Say(fmt::format("kforge serve: listening on http://{}:{} ({}, {}; {} worker{}, queue {}{})",
                  a.host, server.port(), device->kind, device->hardware, service.workers(),
                  service.workers() == 1 ? "" : "s", a.queue,
                  server_options.token ? ", bearer token required" : ""));

  while (!stop.requested()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Say(
      fmt::format("kforge serve: shutting down; {} evaluation(s) in flight finish first "
                  "(again to abandon them)",
                  server.Health()["busy"].get<int>()));
  server.Shutdown();
  std::atomic<bool> finished{false};
  std::thread waiter([&] {
    server.Wait();
    finished = true;
  });
  while (!finished) {
    if (stop.abandon()) {
      server.AbandonInFlight();
      Say("kforge serve: abandoned the evaluations in flight");
      // The evaluations cannot be interrupted from here; their harness
      // processes see their pipes close and exit.
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  waiter.join();
  Say("kforge serve: stopped");
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& root, CommandTable& table) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = root.add_subcommand("serve", "Evaluate candidates over HTTP (POST /v1/evaluate)");
  cmd->add_option("--port", args->port, "TCP port (0: any free port, printed on start)")
      ->required();
  cmd->add_option("--host", args->host, "Address to listen on")->default_val("127.0.0.1");
  cmd->add_option("--device", args->device, "auto|cuda|cpu")
      ->envname("KFORGE_DEVICE")
      ->default_val("auto");
  cmd->add_option("--token-env", args->token_env,
                  "Require 'Authorization: Bearer <value of this environment variable>'");
  cmd->add_option("--workers", args->workers,
                  "Evaluations at once (cpu: default 1; cuda: one per GPU, default all visible)");
  cmd->add_option("--queue", args->queue, "Evaluations waiting at most; more get 503")
      ->default_val(64);
  cmd->add_option("--max-body-mb", args->max_body_mb, "Largest request body; larger get 413")
      ->default_val(4);
  AddConfigFlags(cmd, args->config);
  cmd->callback([&table, args] { table.selected = [args] { return RunServe(*args); }; });
}

}  // namespace kforge::cli
