// One spdlog logger per component ("gguf", "tokenizer", "engine", ...), all
// writing to one shared distributing sink. Front ends attach their own sinks
// (the app's log panel, a file) with add_sink; by default logs go to stderr.
#pragma once

#include <memory>
#include <string_view>

#include <spdlog/logger.h>
#include <spdlog/sinks/sink.h>

namespace hearth::log {

// The logger of `component`, created on first use. Thread-safe.
std::shared_ptr<spdlog::logger> get(std::string_view component);

// Adds / removes a sink that receives every component's messages.
void add_sink(spdlog::sink_ptr sink);
void remove_sink(const spdlog::sink_ptr& sink);

// Drops the default stderr sink (a CLI printing JSON keeps stderr for errors).
void set_stderr_enabled(bool enabled);

void set_level(spdlog::level::level_enum level);

}  // namespace hearth::log
