#include "cuda_test_support.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <unistd.h>

#include "models/loader.h"
#include "models/synthetic.h"
#if defined(HEARTH_HAVE_CUDA)
#include "engine/backend/cuda/cuda_context.h"
#endif

namespace hearth::models::test {

std::string cuda_skip_reason() {
#if defined(HEARTH_HAVE_CUDA)
  if (cuda::device_count() == 0) return "no CUDA device: the GPU model tests run on a machine with an NVIDIA GPU";
  return "";
#else
  return "built without CUDA (nvcc not found or HEARTH_CUDA=OFF): nothing to test";
#endif
}

Result<std::filesystem::path> write_tiny_model(const std::string& arch, const std::string& quant, std::uint64_t seed) {
  SyntheticSpec spec;
  spec.shape = {"custom", 256, 2, 4, 2, 512, 600, 512, 10000.0f, 1e-5f, false, arch};
  HEARTH_ASSIGN_OR_RETURN(spec.quant, parse_synthetic_quant(quant));
  spec.seed = seed;
  const auto path = std::filesystem::temp_directory_path() /
                    ("hearth-cuda-" + arch + "-" + quant + "-" + std::to_string(::getpid()) + ".gguf");
  HEARTH_TRY(write_synthetic_model(spec, path));
  return path;
}

Result<std::filesystem::path> write_shaped_model(const std::string& shape, const std::string& quant,
                                                 std::uint64_t seed) {
  const SyntheticShape* found = find_synthetic_shape(shape);
  if (found == nullptr) return make_error(ErrorCode::kNotFound, "no synthetic shape " + shape);
  SyntheticSpec spec;
  spec.shape = *found;
  HEARTH_ASSIGN_OR_RETURN(spec.quant, parse_synthetic_quant(quant));
  spec.seed = seed;
  const auto path = std::filesystem::temp_directory_path() /
                    ("hearth-cuda-" + shape + "-" + quant + "-" + std::to_string(::getpid()) + ".gguf");
  HEARTH_TRY(write_synthetic_model(spec, path));
  return path;
}

Result<ModelPair> load_pair(const std::filesystem::path& path, bool kv_fp8, std::int32_t num_blocks) {
  ModelPair pair;
  LoadOptions cpu;
  cpu.device = "cpu";
  LoadOptions gpu;
  gpu.device = "cuda:0";
  gpu.kv_precision = kv_fp8 ? KvPrecision::kFp8E4M3 : KvPrecision::kF16;
  HEARTH_ASSIGN_OR_RETURN(pair.cpu, load_model(path, cpu));
  HEARTH_ASSIGN_OR_RETURN(pair.gpu, load_model(path, gpu));
  const KvLayout layout{num_blocks, 16};
  HEARTH_TRY(pair.cpu.model->allocate_kv(layout));
  HEARTH_TRY(pair.gpu.model->allocate_kv(layout));
  return pair;
}

double relative_l2(std::span<const float> a, std::span<const float> b) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    diff += d * d;
    norm += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  if (a.size() != b.size() || !std::isfinite(diff)) return INFINITY;
  return std::sqrt(diff / std::max(norm, 1e-30));
}

Result<std::vector<std::vector<float>>> run_script(Model& model, std::span<const ScriptedSequence> script) {
  const std::uint32_t n_vocab = model.hparams().n_vocab;
  std::size_t n_steps = 0;
  for (const auto& s : script) n_steps = std::max(n_steps, s.step_tokens.size());
  std::vector<std::int32_t> pos(script.size(), 0);
  std::vector<std::vector<float>> rows;
  for (std::size_t step = 0; step < n_steps; ++step) {
    std::vector<SequenceStep> steps;
    std::size_t n_rows = 0;
    for (std::size_t i = 0; i < script.size(); ++i) {
      if (step >= script[i].step_tokens.size() || script[i].step_tokens[step].empty()) continue;
      SequenceStep s;
      s.tokens = script[i].step_tokens[step];
      s.start_pos = pos[i];
      s.block_table = script[i].blocks;
      s.all_logits = script[i].all_logits;
      n_rows += s.all_logits ? s.tokens.size() : 1;
      pos[i] += static_cast<std::int32_t>(s.tokens.size());
      steps.push_back(s);
    }
    std::vector<float> logits(n_rows * n_vocab);
    HEARTH_TRY(model.forward(steps, logits));
    for (std::size_t r = 0; r < n_rows; ++r) {
      rows.emplace_back(logits.begin() + static_cast<std::ptrdiff_t>(r * n_vocab),
                        logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * n_vocab));
    }
  }
  return rows;
}

std::vector<std::int32_t> random_tokens(std::size_t count, std::uint32_t n_vocab, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> dist(0, static_cast<std::int32_t>(n_vocab) - 1);
  std::vector<std::int32_t> out(count);
  for (auto& t : out) t = dist(rng);
  return out;
}

}  // namespace hearth::models::test
