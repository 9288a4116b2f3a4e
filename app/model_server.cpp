#include "app/model_server.h"

#include <atomic>
#include <thread>

#ifdef HEARTH_APP_HAVE_SERVER
#include "server/openai_server.h"
#endif

namespace hearth::app {

#ifdef HEARTH_APP_HAVE_SERVER
struct ModelServer::Impl {
  Impl(Engine& engine, server::ServerOptions options) : http(engine, std::move(options)) {}
  server::OpenAiServer http;
  std::thread thread;
  std::atomic<bool> finished{false};  // serve() returned
};

Result<std::unique_ptr<ModelServer>> ModelServer::start(Engine& engine, const ServeOptions& options) {
  server::ServerOptions o;
  o.host = options.host;
  o.port = options.port;
  o.api_key = options.api_key;
  o.model_id = options.model_id;
  auto impl = std::make_unique<Impl>(engine, std::move(o));
  HEARTH_ASSIGN_OR_RETURN(const int port, impl->http.bind());
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] {
    (void)raw->http.serve();
    raw->finished = true;
  });
  return std::unique_ptr<ModelServer>(
      new ModelServer(std::move(impl), "http://" + options.host + ":" + std::to_string(port) + "/v1"));
}

ModelServer::~ModelServer() {
  // stop() only ends a server that is listening: the thread may not be there yet.
  while (!impl_->finished) {
    if (impl_->http.running()) {
      impl_->http.stop();
      break;
    }
    std::this_thread::yield();
  }
  impl_->thread.join();
}
#else
struct ModelServer::Impl {};

Result<std::unique_ptr<ModelServer>> ModelServer::start(Engine&, const ServeOptions&) {
  return make_error(ErrorCode::kUnsupported, "this build of Hearth has no HTTP server (built without cpp-httplib)");
}

ModelServer::~ModelServer() = default;
#endif

ModelServer::ModelServer(std::unique_ptr<Impl> impl, std::string url) : impl_(std::move(impl)), url_(std::move(url)) {}

}  // namespace hearth::app
