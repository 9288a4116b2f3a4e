#include "engine/core/log.h"

#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

namespace hearth {
namespace {

TEST(Log, ComponentsShareAttachedSinks) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  sink->set_pattern("[%n] %v");
  log::add_sink(sink);
  log::get("gguf")->info("read {} tensors", 3);
  log::get("tokenizer")->warn("fallback");
  log::remove_sink(sink);
  log::get("gguf")->info("not captured");
  EXPECT_EQ(out.str(), "[gguf] read 3 tensors\n[tokenizer] fallback\n");
  EXPECT_EQ(log::get("gguf").get(), log::get("gguf").get());
}

}  // namespace
}  // namespace hearth
