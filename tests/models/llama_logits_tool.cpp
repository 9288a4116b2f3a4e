// Test helper for the logits oracles: runs a model of any supported
// architecture (models::load_model, on the CPU) over token sequences and
// writes every position's logits (float32, little-endian) to a file, computed
// two ways: one token per step (decode path, K/V read back from the paged
// cache) and the whole prompt in one step (prefill path; only the last
// position). Layout: for each prompt, [n_tokens][n_vocab] decode logits, then
// [n_vocab] prefill logits of the last token.
//
// --from N: the first N tokens of each prompt go in one step without logits
// (a chunked prefill), then the rest one per step; only positions >= N are
// written ([n_tokens - N][n_vocab], then the prefill row). For long prompts
// (sliding windows) whose every row would not fit a file.
//
// Usage: llama_logits_tool [--q8-activations] [--from N] MODEL OUT.bin THREADS 1,2,3 [4,5,6 ...]
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "models/loader.h"

namespace {

std::vector<std::int32_t> parse_ids(const std::string& s) {
  std::vector<std::int32_t> ids;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) ids.push_back(std::stoi(item));
  return ids;
}

int die(const hearth::Error& e) {
  std::fprintf(stderr, "llama_logits_tool: %s\n", e.describe().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hearth;
  // --q8-activations first: plain 8-bit activation blocks (no outlier refinement).
  const bool q8 = argc > 1 && std::string_view(argv[1]) == "--q8-activations";
  if (q8) --argc, ++argv;
  std::size_t from = 0;
  if (argc > 2 && std::string_view(argv[1]) == "--from") {
    from = static_cast<std::size_t>(std::atoi(argv[2]));
    argc -= 2, argv += 2;
  }
  if (argc < 5) {
    std::fprintf(stderr, "usage: llama_logits_tool [--q8-activations] [--from N] MODEL OUT.bin THREADS IDS [IDS...]\n");
    return 2;
  }
  models::LoadOptions options;
  options.n_threads = std::atoi(argv[3]);
  options.refine_activations = !q8;
  auto bundle = models::load_model(argv[1], options);
  if (!bundle) return die(bundle.error());
  auto& m = *bundle->model;
  const std::int32_t block_size = 16, blocks_per_seq = 128;
  if (auto r = m.allocate_kv(KvLayout{2 * blocks_per_seq, block_size}); !r) return die(r.error());
  // Two sequences' worth of blocks, deliberately out of order, so the paged reads are exercised.
  std::vector<std::int32_t> decode_table, prefill_table;
  for (std::int32_t b = 0; b < blocks_per_seq; ++b) {
    decode_table.push_back(2 * blocks_per_seq - 1 - 2 * b);
    prefill_table.push_back(2 * b);
  }
  const std::size_t vocab = m.hparams().n_vocab;
  std::ofstream out(argv[2], std::ios::binary);
  std::vector<float> logits(vocab);
  for (int p = 4; p < argc; ++p) {
    const auto ids = parse_ids(argv[p]);
    if (from > 0 && from < ids.size()) {
      SequenceStep head{std::span(ids).first(from), 0, decode_table, false};
      if (auto r = m.forward(std::span(&head, 1), logits); !r) return die(r.error());
    }
    for (std::size_t i = from < ids.size() ? from : 0; i < ids.size(); ++i) {
      SequenceStep step{std::span(ids).subspan(i, 1), static_cast<std::int32_t>(i), decode_table, true};
      if (auto r = m.forward(std::span(&step, 1), logits); !r) return die(r.error());
      out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(vocab * sizeof(float)));
    }
    SequenceStep whole{ids, 0, prefill_table, true};
    if (auto r = m.forward(std::span(&whole, 1), logits); !r) return die(r.error());
    out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(vocab * sizeof(float)));
  }
  return out ? 0 : 1;
}
