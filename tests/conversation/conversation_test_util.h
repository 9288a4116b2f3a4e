// Shared by the conversation tests: a temporary folder, a tiny synthetic
// model (greedy decoding: the same answer every run) and a store in it.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "conversation/prepare.h"
#include "conversation/run_turn.h"
#include "models/run_config.h"
#include "models/synthetic.h"
#include "tests/store/store_test_util.h"

namespace hearth::conversation::testing {

using store::testing::TempDir;

inline std::string write_tiny_model(const TempDir& dir) {
  models::SyntheticSpec spec;
  spec.shape = {"custom", 128, 2, 4, 2, 256, 300, 512, 10000.0f, 1e-5f, false};
  spec.quant = models::parse_synthetic_quant("Q8_0").value();
  const std::string path = dir.file("tiny-q8_0.gguf");
  EXPECT_TRUE(models::write_synthetic_model(spec, path).ok());
  return path;
}

inline models::OpenedEngine open_tiny_engine(const std::string& path) {
  models::RunConfig config;
  config.device = "cpu";
  config.threads = 1;
  config.context_length = 512;
  auto opened = models::open_engine(path, config);
  EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().describe());
  return std::move(opened).value();
}

// Greedy, a fixed seed, a short answer.
inline TurnSettings greedy(int max_tokens = 12) {
  TurnSettings s;
  s.sampling.temperature = 0;
  s.sampling.seed = 7;
  s.max_tokens = max_tokens;
  return s;
}

}  // namespace hearth::conversation::testing
