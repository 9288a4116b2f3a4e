// "Serve this model": hearth-server's OpenAI API (server/OpenAiServer) over
// the app's loaded engine, on a thread of its own, so editors and scripts use
// the model the app has loaded (their requests share its engine with the
// chat). Plain C++, owned by the EngineWorker next to the engine it serves:
// it must stop before that engine goes (the worker drops it first).
#pragma once

#include <memory>
#include <string>

#include "hearth/engine.h"
#include "hearth/result.h"

namespace hearth::app {

struct ServeOptions {
  std::string host = "127.0.0.1";  // loopback only
  int port = 8080;                 // 0: any free port
  std::string api_key;             // "" : none
  std::string model_id;            // what /v1/models lists
};

class ModelServer {
 public:
  // Binds and starts serving; an address in use is an error naming it.
  static Result<std::unique_ptr<ModelServer>> start(Engine& engine, const ServeOptions& options);
  ~ModelServer();  // stops (requests in flight are cancelled) and joins
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  const std::string& url() const { return url_; }  // "http://127.0.0.1:8080/v1"

 private:
  struct Impl;
  explicit ModelServer(std::unique_ptr<Impl> impl, std::string url);
  std::unique_ptr<Impl> impl_;
  std::string url_;
};

}  // namespace hearth::app
