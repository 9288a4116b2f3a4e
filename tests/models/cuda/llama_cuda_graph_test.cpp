// Decode steps replayed from CUDA graphs (engine/backend/cuda/step_graph.h)
// against the same steps enqueued op by op: identical logits, bit for bit,
// including across a context bucket (the graph re-captured and updated),
// with layer timing on one step in 3 (two graph topologies), for one, two
// and sixteen sequences per step, into a fresh host buffer every step. Label `gpu`.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "cuda_test_support.h"
#if defined(HEARTH_HAVE_CUDA)
#include "engine/gguf/gguf_file.h"
#include "models/llama/llama_cuda_model.h"
#endif

namespace hearth::models::test {
namespace {

#if defined(HEARTH_HAVE_CUDA)

Result<std::unique_ptr<LlamaCudaModel>> load_cuda(const std::filesystem::path& path, bool graphs) {
  HEARTH_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path));
  LlamaCudaOptions options;
  options.cuda_graphs = graphs;
  options.layer_timing_interval = 3;
  return LlamaCudaModel::load(std::move(file), options);
}

// Sequence A: a 240-token prompt, then 40 decode steps (crossing position
// 256, a bucket boundary); sequence B: a 10-token prompt and 20 decode steps
// beside A's first ones (2-sequence decode steps), then A decodes alone.
std::vector<ScriptedSequence> script(std::uint32_t n_vocab) {
  ScriptedSequence a, b;
  for (std::int32_t i = 0; i < 20; ++i) a.blocks.push_back(i), b.blocks.push_back(20 + i);
  a.step_tokens.push_back(random_tokens(240, n_vocab, 1));
  b.step_tokens.push_back(random_tokens(10, n_vocab, 2));
  for (std::uint32_t s = 0; s < 40; ++s) {
    a.step_tokens.push_back(random_tokens(1, n_vocab, 100 + s));
    if (s < 20) b.step_tokens.push_back(random_tokens(1, n_vocab, 200 + s));
  }
  return {a, b};
}

using Script = std::vector<ScriptedSequence> (*)(std::uint32_t n_vocab);

// Runs `script` on a tiny Q4_0 model (seed) without and with graphs: the
// logits must be equal bit for bit, and `replayed` steps launched from graphs.
void expect_graphs_equal_eager(std::uint64_t seed, Script script, std::uint64_t replayed) {
  auto path = write_tiny_model("llama", "Q4_0", seed);
  ASSERT_TRUE(path.ok()) << path.error().message;
  std::vector<std::vector<float>> rows[2];
  std::uint64_t launches[2] = {0, 0};
  for (const bool graphs : {false, true}) {
    auto model = load_cuda(*path, graphs);
    ASSERT_TRUE(model.ok()) << model.error().message;
    ASSERT_TRUE((*model)->allocate_kv(KvLayout{40, 16}).ok());
    auto r = run_script(**model, script((*model)->hparams().n_vocab));
    ASSERT_TRUE(r.ok()) << r.error().message;
    rows[graphs] = std::move(*r);
    launches[graphs] = (*model)->cuda_graph_launches();
  }
  std::filesystem::remove(*path);
  EXPECT_EQ(launches[0], 0u);
  EXPECT_EQ(launches[1], replayed);
  ASSERT_EQ(rows[0].size(), rows[1].size());
  for (std::size_t i = 0; i < rows[0].size(); ++i) {
    ASSERT_EQ(rows[0][i].size(), rows[1][i].size());
    EXPECT_EQ(std::memcmp(rows[0][i].data(), rows[1][i].data(), rows[0][i].size() * sizeof(float)), 0)
        << "logits row " << i;
  }
}

TEST(CudaGraphs, ReplayedDecodeStepsEqualEagerOnes) {
  SKIP_WITHOUT_CUDA();
  expect_graphs_equal_eager(23, script, 39);  // 40 decode steps; the first eager (it loads the kernels' code)
}

// 16 sequences (20-token prompts) decoding together for 12 steps: on this
// model mmq takes every product of a 16-row step, so those steps are graphs
// too (CudaBackend::graph_max_sequences), each equal to its eager twin.
std::vector<ScriptedSequence> sixteen(std::uint32_t n_vocab) {
  std::vector<ScriptedSequence> sc(16);
  for (std::uint32_t i = 0; i < 16; ++i) {
    sc[i].blocks = {static_cast<std::int32_t>(2 * i), static_cast<std::int32_t>(2 * i + 1)};
    sc[i].step_tokens.push_back(random_tokens(20, n_vocab, 300 + i));
    for (std::uint32_t s = 0; s < 12; ++s) sc[i].step_tokens.push_back(random_tokens(1, n_vocab, 400 + 16 * s + i));
  }
  return sc;
}

TEST(CudaGraphs, SixteenSequenceDecodeStepsReplayAsEagerOnes) {
  SKIP_WITHOUT_CUDA();
  expect_graphs_equal_eager(29, sixteen, 11);  // 12 decode steps of 16 rows, the first eager
}

#else

TEST(CudaGraphs, NeedsCuda) {
  GTEST_SKIP() << cuda_skip_reason();
}

#endif

}  // namespace
}  // namespace hearth::models::test
