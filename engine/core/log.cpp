#include "engine/core/log.h"

#include <map>
#include <mutex>
#include <string>

#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace hearth::log {
namespace {

// The registry is process-wide on purpose: logging is the one service every
// layer may use without having it passed in (as spdlog itself is).
struct Registry {
  std::mutex mutex;
  std::shared_ptr<spdlog::sinks::dist_sink_mt> dist = std::make_shared<spdlog::sinks::dist_sink_mt>();
  spdlog::sink_ptr stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;
  spdlog::level::level_enum level = spdlog::level::info;

  Registry() { dist->add_sink(stderr_sink); }
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: loggers may log during static teardown
  return *r;
}

}  // namespace

std::shared_ptr<spdlog::logger> get(std::string_view component) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.loggers.find(component);
  if (it != r.loggers.end()) return it->second;
  auto logger = std::make_shared<spdlog::logger>(std::string(component), r.dist);
  logger->set_level(r.level);
  r.loggers.emplace(std::string(component), logger);
  return logger;
}

void add_sink(spdlog::sink_ptr sink) {
  registry().dist->add_sink(std::move(sink));
}

void remove_sink(const spdlog::sink_ptr& sink) {
  registry().dist->remove_sink(sink);
}

void set_stderr_enabled(bool enabled) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.dist->remove_sink(r.stderr_sink);
  if (enabled) r.dist->add_sink(r.stderr_sink);
}

void set_level(spdlog::level::level_enum level) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.level = level;
  for (auto& [name, logger] : r.loggers) logger->set_level(level);
}

}  // namespace hearth::log
