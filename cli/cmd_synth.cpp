// hearth-cli synth --shape NAME --quant TYPE -o FILE: a synthetic llama-family
// model with random weights of real shapes, for benchmarks at realistic sizes.
#include <cstdio>
#include <memory>

#include "cli/cli_common.h"
#include "models/synthetic.h"

namespace hearth::cli {
namespace {

struct SynthOptions {
  std::string shape = "smollm2-135m";
  std::string quant = "Q4_0";
  std::string output;
  std::uint64_t seed = 1;
  std::string arch;  // "": the shape's own (llama, or qwen2 for qwen2-7b)
  std::int32_t boost_layer = -1;
  float boost = 1.0f;
  // Overrides of the named shape (0 = keep).
  std::uint32_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_vocab = 0, n_ctx = 0;
};

void run_synth(const SynthOptions& opt) {
  models::SyntheticSpec spec;
  if (opt.shape == "custom") {
    spec.shape = models::SyntheticShape{"custom", 0, 0, 0, 0, 0, 32000, 4096, 10000.0f, 1e-5f, false};
  } else if (const auto* s = models::find_synthetic_shape(opt.shape)) {
    spec.shape = *s;
  } else {
    fail("unknown shape '" + opt.shape + "' (known: smollm2-135m, llama-1b, llama-8b, qwen2-7b, custom)");
  }
  auto override_with = [](std::uint32_t& field, std::uint32_t value) {
    if (value) field = value;
  };
  override_with(spec.shape.n_embd, opt.n_embd);
  override_with(spec.shape.n_layer, opt.n_layer);
  override_with(spec.shape.n_head, opt.n_head);
  override_with(spec.shape.n_head_kv, opt.n_head_kv);
  override_with(spec.shape.n_ff, opt.n_ff);
  override_with(spec.shape.n_vocab, opt.n_vocab);
  override_with(spec.shape.n_ctx, opt.n_ctx);
  if (!opt.arch.empty()) spec.shape.architecture = opt.arch;
  spec.quant = unwrap(models::parse_synthetic_quant(opt.quant));
  spec.seed = opt.seed;
  spec.boosted_layer = opt.boost_layer;
  spec.boost = opt.boost;
  auto written = models::write_synthetic_model(spec, opt.output);
  if (!written) fail(written.error());
  std::fprintf(stderr, "wrote %s (%s, %s)\n", opt.output.c_str(), spec.shape.name.c_str(), spec.quant.name.c_str());
}

}  // namespace

void add_synth_command(CLI::App& app) {
  auto opt = std::make_shared<SynthOptions>();
  CLI::App* cmd = app.add_subcommand("synth", "Write a synthetic llama-family model (random weights, real shapes)");
  cmd->add_option("--shape", opt->shape, "smollm2-135m, llama-1b, llama-8b, qwen2-7b, or custom (give every size)")
      ->capture_default_str();
  cmd->add_option("--quant", opt->quant, "F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q4_K Q5_K Q6_K Q4_K_M")
      ->capture_default_str();
  cmd->add_option("-o,--output", opt->output, "Output .gguf file")->required();
  cmd->add_option("--seed", opt->seed, "Random seed")->capture_default_str();
  cmd->add_option("--arch", opt->arch,
                  "llama, or qwen2 (NeoX RoPE, Q/K/V biases); default: the shape's own (llama; qwen2 for qwen2-7b)");
  cmd->add_option("--embd", opt->n_embd, "Hidden width");
  cmd->add_option("--layers", opt->n_layer, "Layers");
  cmd->add_option("--heads", opt->n_head, "Attention heads");
  cmd->add_option("--kv-heads", opt->n_head_kv, "KV heads");
  cmd->add_option("--ffn", opt->n_ff, "Feed-forward width");
  cmd->add_option("--vocab", opt->n_vocab, "Vocabulary size");
  cmd->add_option("--ctx", opt->n_ctx, "Context length");
  cmd->add_option("--boost-layer", opt->boost_layer,
                  "Scale this layer's weight matrices by --boost (an overflow-check test model)");
  cmd->add_option("--boost", opt->boost, "The factor for --boost-layer")->capture_default_str();
  cmd->callback([opt] { run_synth(*opt); });
}

}  // namespace hearth::cli
