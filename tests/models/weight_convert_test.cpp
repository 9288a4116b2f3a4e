// Load-time weight conversion (models/weight_convert.h, `--quant`), on
// synthetic files: every converted row is exactly what the kernels' scalar
// quantizer makes of the dequantized source row, and within the target's
// rounding error of it; finer formats and partial blocks are refused with the
// reason; the plan's bytes are the converted bytes; threads never change a
// byte; a model loaded with a conversion says what it runs and from what.
#include "models/weight_convert.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/cpu/dequantize.h"
#include "kernels/cpu/ggml_type.h"
#include "kernels/cpu/quantize.h"
#include "models/loader.h"
#include "models/synthetic.h"

namespace hearth::models {
namespace {

namespace fs = std::filesystem;
using gguf::GgmlType;

fs::path synth(const std::string& quant, const std::string& tag) {
  SyntheticSpec spec;
  spec.shape = *find_synthetic_shape("smollm2-135m");
  spec.shape.n_layer = 2;
  spec.shape.n_vocab = 512;
  spec.quant = *parse_synthetic_quant(quant);
  const fs::path path =
      fs::temp_directory_path() / ("hearth-convert-" + tag + "-" + std::to_string(::getpid()) + ".gguf");
  const Result<void> written = write_synthetic_model(spec, path);
  EXPECT_TRUE(written.ok()) << written.error().describe();
  return path;
}

std::unique_ptr<gguf::GgufFile> open(const fs::path& path) {
  Result<std::unique_ptr<gguf::GgufFile>> f = gguf::GgufFile::open(path);
  EXPECT_TRUE(f.ok()) << f.error().describe();
  return std::move(f).value();
}

std::vector<float> dequant_row(GgmlType type, const std::byte* row, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  if (type == GgmlType::kF16) {
    kernels::dequantize_row_f16(row, out.data(), n);
  } else if (type == GgmlType::kQ4_0) {
    kernels::dequantize_row_q4_0(row, out.data(), n);
  } else {
    ADD_FAILURE() << "unexpected type";
  }
  return out;
}

TEST(WeightConvert, F16ToQ4_0IsTheScalarQuantizerOfEachRowWithinItsError) {
  const fs::path path = synth("F16", "f16");
  auto file = open(path);
  const auto source = open(path);  // an untouched copy to compare against
  Result<ConversionReport> report = convert_weights(*file, GgmlType::kQ4_0, 3);
  ASSERT_TRUE(report.ok()) << report.error().describe();
  EXPECT_EQ(report->from, "F16");
  EXPECT_EQ(report->to, "Q4_0");
  int matrices = 0;
  for (std::size_t i = 0; i < file->tensors().size(); ++i) {
    const gguf::TensorInfo& t = file->tensors()[i];
    const gguf::TensorInfo& s = source->tensors()[i];
    if (s.n_dims != 2) {
      EXPECT_EQ(t.type, s.type) << t.name << ": vectors stay as they are";
      continue;
    }
    ++matrices;
    ASSERT_EQ(t.type, GgmlType::kQ4_0) << t.name;
    const std::int64_t cols = t.ne[0];
    const std::size_t out_row = kernels::row_bytes(GgmlType::kQ4_0, cols);
    ASSERT_EQ(t.n_bytes, out_row * static_cast<std::size_t>(t.ne[1]));
    std::vector<std::byte> expect(out_row);
    for (std::int64_t r = 0; r < t.ne[1]; r += 37) {  // every 37th row: all of them take long under ASan
      const std::vector<float> x = dequant_row(GgmlType::kF16, s.data + r * s.row_bytes(), cols);
      kernels::quantize_row_q4_0(x.data(), expect.data(), cols);
      ASSERT_EQ(std::memcmp(expect.data(), t.data + r * out_row, out_row), 0) << t.name << " row " << r;
      const std::vector<float> y = dequant_row(GgmlType::kQ4_0, t.data + r * out_row, cols);
      for (std::int64_t b = 0; b < cols; b += 32) {
        float amax = 0;
        for (std::int64_t k = b; k < b + 32; ++k) amax = std::max(amax, std::fabs(x[k]));
        // Q4_0: d = max / -8, codes -8..7: a value is off by at most d/2, the largest by up to d.
        for (std::int64_t k = b; k < b + 32; ++k) {
          EXPECT_LE(std::fabs(x[k] - y[k]), amax / 8.0f + 1e-6f) << t.name << " row " << r << " col " << k;
        }
      }
    }
  }
  EXPECT_EQ(report->matrices, matrices);
  fs::remove(path);
}

TEST(WeightConvert, FinerFormatsAndPartialBlocksAreRefusedWithTheReason) {
  const fs::path path = synth("Q4_0", "q4");
  auto file = open(path);
  for (GgmlType finer : {GgmlType::kQ8_0, GgmlType::kF16, GgmlType::kQ5_0}) {
    Result<ConversionPlan> p = plan_conversion(*file, finer);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().code, ErrorCode::kUnsupported);
    EXPECT_NE(p.error().message.find("finer"), std::string::npos) << p.error().message;
    EXPECT_NE(p.error().message.find("cannot restore"), std::string::npos) << p.error().message;
  }
  // The same type: nothing to do, nothing refused.
  Result<ConversionReport> same = convert_weights(*file, GgmlType::kQ4_0, 1);
  ASSERT_TRUE(same.ok()) << same.error().describe();
  EXPECT_EQ(same->matrices, 0);
  // 576-wide rows are not whole 256-element super-blocks: Q4_K is refused naming the tensor.
  const fs::path f16 = synth("F16", "f16k");
  auto wide = open(f16);
  Result<ConversionPlan> k = plan_conversion(*wide, GgmlType::kQ4_K);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("whole blocks of 256"), std::string::npos) << k.error().message;
  EXPECT_FALSE(parse_weight_quant("Q4_K_M").ok());
  EXPECT_FALSE(parse_weight_quant("int3").ok());
  EXPECT_EQ(*parse_weight_quant("Q8_0"), GgmlType::kQ8_0);
  fs::remove(path);
  fs::remove(f16);
}

TEST(WeightConvert, PlanBytesAreTheConvertedBytesAndThreadsChangeNothing) {
  const fs::path path = synth("F16", "plan");
  auto one = open(path);
  auto many = open(path);
  Result<ConversionPlan> planned = plan_conversion(*one, GgmlType::kQ8_0);
  ASSERT_TRUE(planned.ok()) << planned.error().describe();
  ASSERT_TRUE(convert_weights(*one, GgmlType::kQ8_0, 1).ok());
  ASSERT_TRUE(convert_weights(*many, GgmlType::kQ8_0, 4).ok());
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < one->tensors().size(); ++i) {
    const gguf::TensorInfo& a = one->tensors()[i];
    const gguf::TensorInfo& b = many->tensors()[i];
    bytes += a.n_bytes;
    ASSERT_EQ(a.n_bytes, b.n_bytes);
    EXPECT_EQ(std::memcmp(a.data, b.data, a.n_bytes), 0) << a.name;
  }
  EXPECT_EQ(planned->weights_bytes, bytes);
  fs::remove(path);
}

TEST(WeightConvert, ALoadedModelSaysWhatItRunsAndFromWhat) {
  const fs::path path = synth("F16", "load");
  LoadOptions options;
  options.quant = "Q8_0";
  options.n_threads = 2;
  Result<ModelBundle> bundle = load_model(path, options);
  ASSERT_TRUE(bundle.ok()) << bundle.error().describe();
  EXPECT_EQ(bundle->run.weight_format, "Q8_0");
  EXPECT_EQ(bundle->run.weights_converted_from, "F16");
  EXPECT_GT(bundle->run.conversion_ms, 0.0);
  // The prefix cache must not mistake the converted weights for the file's own.
  Result<ModelBundle> plain = load_model(path, LoadOptions{});
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(bundle->model_id, plain->model_id);
  EXPECT_TRUE(plain->run.weights_converted_from.empty());
  options.quant = "F32";
  Result<ModelBundle> finer = load_model(path, options);
  ASSERT_FALSE(finer.ok());
  EXPECT_NE(finer.error().message.find("finer"), std::string::npos);
  fs::remove(path);
}

}  // namespace
}  // namespace hearth::models
