// hearth-server MODEL [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--kv-budget-mib M] [engine options of generate]
// Serves the model over OpenAI's HTTP API until SIGINT or SIGTERM. Prints
// "hearth-server: serving ID on http://HOST:PORT" on stdout once it accepts
// connections (with --port 0, the port it chose). Errors: one line on stderr,
// exit code 1.
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <pthread.h>

#include <CLI/CLI.hpp>

#include "models/run_config_cli.h"
#include "server/openai_server.h"

namespace {

using namespace hearth;

struct Options {
  std::string model;
  models::RunConfig config;
  models::EngineFlags flags;
  server::ServerOptions server;
  double kv_budget_mib = 0;
};

void add_engine_options(CLI::App& app, Options& o) {
  app.add_option("model", o.model, "Path to a .gguf file or a catalog name")->required();
  app.add_option("--ctx", o.config.context_length, "Context length in tokens (0: the engine's default)");
  models::add_run_config_options(app, o.config, o.flags);
  app.add_option("--max-sequences", o.config.max_sequences, "Sequences per engine step (the batch)")
      ->capture_default_str();
  app.add_option("--max-batch-tokens", o.config.max_batch_tokens,
                 "Tokens per engine step (prefill chunks + decodes); 0: 512 on a GPU, 256 on the CPU")
      ->capture_default_str();
  app.add_option("--kv-budget-mib", o.kv_budget_mib,
                 "KV cache pool in MiB, fractions allowed (0: room for two full contexts); a request that cannot "
                 "fit it gets 503")
      ->check(CLI::Range(0.0, 1.0e7));
}

void add_server_options(CLI::App& app, Options& o) {
  server::ServerOptions& s = o.server;
  app.add_option("--host", s.host, "Address to listen on (loopback by default)")->capture_default_str();
  app.add_option("--port", s.port, "Port (0: any free port, printed on stdout)")->capture_default_str();
  app.add_option("--api-key", s.api_key, "Require 'Authorization: Bearer KEY' on every route but /health")
      ->envname("HEARTH_API_KEY");
  app.add_option("--model-name", s.model_id, "The model's id in /v1/models (default: the file's name without .gguf)");
  app.add_option("--max-body-bytes", s.max_body_bytes, "Largest request body accepted (413 past it)")
      ->capture_default_str();
  app.add_option("--max-prompt-tokens", s.max_prompt_tokens, "Longest prompt accepted in tokens (0: the context)")
      ->capture_default_str();
  app.add_option("--max-concurrent", s.max_concurrent, "Completions in flight at once (429 past it)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--max-json-depth", s.parse.max_depth, "Deepest nesting of arrays and objects in a body")
      ->check(CLI::Range(2, 1000))
      ->capture_default_str();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "hearth-server: %s\n", message.c_str());
  return 1;
}

// Serves until SIGINT/SIGTERM. The signals are blocked in every thread and
// taken by one waiting thread, which stops the server from outside a signal handler.
int serve(const Options& o) {
  Result<models::RunConfig> config = models::apply_flags(o.config, o.flags);
  if (!config) return fail(config.error().describe());
  config->kv_budget_bytes = static_cast<std::size_t>(o.kv_budget_mib * 1024.0 * 1024.0);
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts: they all inherit it
  std::signal(SIGPIPE, SIG_IGN);                  // a client gone mid-write is an error value, not a signal

  Result<models::OpenedEngine> opened = models::open_engine(o.model, *config);
  if (!opened) return fail(opened.error().describe());
  const ModelRunInfo& run = opened->engine->run_info();
  std::fprintf(stderr, "[%s on %s (%s), KV %s, context %d tokens]\n", run.weight_format.c_str(), run.device.c_str(),
               run.device_name.c_str(), to_string(run.kv_precision), opened->engine->context_length());

  server::ServerOptions options = o.server;
  const std::string stem = opened->path.stem().string();
  if (options.model_id.empty()) options.model_id = stem;
  options.model_aliases = {o.model, stem, opened->path.filename().string()};
  server::OpenAiServer http(*opened->engine, options);
  Result<int> port = http.bind();
  if (!port) return fail(port.error().describe());

  std::thread waiter([&http, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    http.stop();
  });
  std::printf("hearth-server: serving %s on http://%s:%d\n", options.model_id.c_str(), options.host.c_str(), *port);
  std::fflush(stdout);
  Result<void> served = http.serve();
  http.stop();
  pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter if no signal came
  waiter.join();
  if (!served) return fail(served.error().describe());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Hearth's OpenAI-compatible HTTP server: one model, one engine, many clients", "hearth-server"};
  app.set_version_flag("--version", std::string("hearth-server ") + HEARTH_VERSION);
  Options o;
  add_engine_options(app, o);
  add_server_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return serve(o);
}
