// Hostile model files (issue 14): hyper-parameters that parse but make no
// sense are refused at load with an error naming them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "models/loader.h"
#include "models/synthetic.h"

namespace hearth::models {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& tag) {
  return fs::temp_directory_path() / ("hearth-hostile-" + tag + "-" + std::to_string(::getpid()) + ".gguf");
}

SyntheticSpec tiny_spec() {
  SyntheticSpec spec;
  spec.shape = {"custom", 64, 1, 2, 2, 128, 300, 128, 10000.0f, 1e-5f, false};
  spec.quant = parse_synthetic_quant("F32").value();
  return spec;
}

Result<ModelBundle> load_with(float rope_base, float rms_eps, const std::string& tag) {
  SyntheticSpec spec = tiny_spec();
  spec.shape.rope_base = rope_base;
  spec.shape.rms_eps = rms_eps;
  const fs::path path = temp_file(tag);
  EXPECT_TRUE(write_synthetic_model(spec, path).ok());
  Result<ModelBundle> bundle = load_model(path, LoadOptions{1});
  fs::remove(path);
  return bundle;
}

TEST(HostileModel, NonFiniteHyperParametersAreRefusedAtLoad) {
  ASSERT_TRUE(load_with(10000.0f, 1e-5f, "ok").ok());
  for (const auto& [base, eps, tag] : {std::tuple{10000.0f, INFINITY, "eps-inf"},
                                       std::tuple{INFINITY, 1e-5f, "base-inf"}, std::tuple{10000.0f, NAN, "eps-nan"}}) {
    const Result<ModelBundle> r = load_with(base, eps, tag);
    ASSERT_FALSE(r.ok()) << tag;
    EXPECT_EQ(r.error().code, ErrorCode::kCorruptFile) << tag;
    EXPECT_NE(r.error().message.find("RoPE base"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace hearth::models
