// hearth-server's HTTP side: OpenAI's API over one Engine.
//
//   OpenAiServer server(*engine, options);
//   Result<int> port = server.bind();   // loopback by default; port 0: any free port
//   server.serve();                     // blocks until stop() (any thread)
//
// Routes: GET /health, GET /metrics, GET /v1/models[/{id}], POST
// /v1/chat/completions, POST /v1/completions (README, "HTTP server"). Every
// completion goes to the one engine, so concurrent clients share its batches
// and its prefix cache. cpp-httplib stays inside the .cpp files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hearth/engine.h"
#include "hearth/result.h"
#include "server/api_request.h"

namespace hearth::server {

struct ServerOptions {
  std::string host = "127.0.0.1";            // loopback: nothing outside the machine reaches it unless asked
  int port = 8080;                           // 0: any free port (bind() returns it)
  std::string api_key;                       // "": no key; else "Authorization: Bearer KEY" on all but /health
  std::string model_id;                      // what /v1/models lists and "model" must name
  std::vector<std::string> model_aliases;    // other names "model" may use (the path given, the file name)
  std::size_t max_body_bytes = 4u << 20;     // request bodies over this get 413
  std::int32_t max_prompt_tokens = 0;        // 0: whatever fits the context
  int max_concurrent = 64;                   // completions in flight; one more gets 429
  std::int32_t completions_max_tokens = 16;  // /v1/completions without max_tokens (OpenAI's default)
  ParseLimits parse;
};

class OpenAiServer {
 public:
  OpenAiServer(Engine& engine, ServerOptions options);
  ~OpenAiServer();
  OpenAiServer(const OpenAiServer&) = delete;
  OpenAiServer& operator=(const OpenAiServer&) = delete;

  // Binds the listening socket; returns the port (the chosen one for port 0).
  Result<int> bind();
  // Serves until stop(). Requests in flight when it stops are cancelled.
  Result<void> serve();
  // Thread-safe; also from a signal-waiting thread. Before serve() has
  // started listening it does nothing: wait for running() first.
  void stop();
  // True while serve() is accepting connections (thread-safe).
  bool running() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::server
