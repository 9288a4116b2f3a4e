// The real default model (SmolLM2-135M-Instruct Q4_1): opens quickly and holds
// what its model card says. Every key and tensor is cross-checked against the
// Python gguf package by the gguf_oracle_default_model test.
#include <gtest/gtest.h>

#include <chrono>

#include "engine/gguf/gguf_file.h"
#include "models/catalog.h"

namespace hearth::gguf {
namespace {

std::unique_ptr<GgufFile> open_default() {
  auto path = models::resolve_model(models::builtin_catalog().default_entry().name);
  EXPECT_TRUE(path.ok()) << (path.ok() ? "" : path.error().describe());
  if (!path) return nullptr;
  auto f = GgufFile::open(*path);
  EXPECT_TRUE(f.ok()) << (f.ok() ? "" : f.error().describe());
  return f.ok() ? std::move(f).value() : nullptr;
}

TEST(GgufDefaultModel, HyperParametersAndVocabulary) {
  auto f = open_default();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->get_string("general.architecture").value(), "llama");
  EXPECT_EQ(f->get_uint("llama.block_count").value(), 30u);
  EXPECT_EQ(f->get_uint("llama.embedding_length").value(), 576u);
  EXPECT_EQ(f->get_uint("llama.attention.head_count").value(), 9u);
  EXPECT_EQ(f->get_uint("llama.attention.head_count_kv").value(), 3u);
  EXPECT_EQ(f->get_string("tokenizer.ggml.model").value(), "gpt2");
  auto tokens = f->get_string_array("tokenizer.ggml.tokens").value();
  ASSERT_EQ(tokens.size(), 49152u);
  EXPECT_EQ(tokens[0], "<|endoftext|>");
  EXPECT_EQ(tokens[1], "<|im_start|>");
  EXPECT_EQ(tokens[2], "<|im_end|>");
  EXPECT_EQ(f->get_numeric_array<std::int32_t>("tokenizer.ggml.token_type").value().size(), tokens.size());
  EXPECT_GT(f->get_string_array("tokenizer.ggml.merges").value().size(), 40000u);

  const TensorInfo* emb = f->tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->n_dims, 2u);
  EXPECT_EQ(emb->ne[0], 576);
  EXPECT_EQ(emb->ne[1], 49152);
  EXPECT_EQ(f->tensor("output.weight"), nullptr);  // tied embeddings
  EXPECT_EQ(f->tensors().size(), 2u + 30u * 9u);
  std::uint64_t end = 0;
  for (const TensorInfo& t : f->tensors()) end = std::max(end, t.file_offset + t.n_bytes);
  EXPECT_LE(end, f->file_size());
  EXPECT_GT(end + 64 * 1024, f->file_size());  // the tensors fill the file
}

TEST(GgufDefaultModel, OpensInMilliseconds) {
  auto path = models::resolve_model(models::builtin_catalog().default_entry().name);
  ASSERT_TRUE(path.ok()) << path.error().describe();
  ASSERT_TRUE(GgufFile::open(*path).ok());  // warm the page cache
  const auto t0 = std::chrono::steady_clock::now();
  auto f = GgufFile::open(*path);
  const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(f.ok());
  std::cout << "open + parse: " << ms << " ms\n";
  EXPECT_LT(ms, 250.0);  // ~10 ms in an optimised build; generous for sanitizer builds on a busy machine
}

}  // namespace
}  // namespace hearth::gguf
