// hearth-cli perplexity MODEL --file TEXT [--ctx N] [--threads N] [--json]:
// perplexity over a text file, with its standard error (engine/eval/perplexity.h
// says how it is measured: as llama.cpp's perplexity tool does).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/engine_session.h"
#include "engine/eval/perplexity.h"
#include "engine/model/model.h"
#include "engine/tokenizer/encoder.h"
#include "engine/tokenizer/vocabulary.h"
#include "models/catalog.h"
#include "models/loader.h"

namespace hearth::cli {
namespace {

struct PerplexityCliOptions {
  std::string model;
  std::string file;
  int ctx = 512;
  EngineSetup setup;  // --threads, --device, --kv, --vram-budget, --q8-activations
  bool json = false;
};

void run_perplexity(const PerplexityCliOptions& opt) {
  std::ostringstream text;
  text << read_text_file(opt.file);
  // Perplexity drives the model without an engine: the loader's half of the configuration.
  const models::RunConfig config = opt.setup.run_config();
  const models::LoadOptions load = models::load_options(config, config.device);
  ModelBundle bundle = unwrap(models::load_model(unwrap(models::resolve_model(opt.model)), load));
  tokenizer::EncodeOptions eo;
  eo.add_special = false;  // BOS goes at the start of each window, not of the text
  const auto tokens = unwrap(tokenizer::encode(bundle.vocabulary, text.str(), eo));
  eval::PerplexityOptions po;
  po.context = opt.ctx;
  if (bundle.vocabulary->add_bos()) po.bos = bundle.vocabulary->bos();
  if (!opt.json) {
    po.progress = [](std::int32_t done, std::int32_t total) { std::fprintf(stderr, "\rwindow %d/%d", done, total); };
  }
  const auto r = unwrap(eval::perplexity(*bundle.model, tokens, po));
  if (opt.json) {
    std::cout << nlohmann::json{{"perplexity", r.perplexity},
                                {"standard_error", r.standard_error},
                                {"scored_tokens", r.scored_tokens},
                                {"windows", r.windows},
                                {"context", opt.ctx},
                                {"text_tokens", tokens.size()},
                                {"tokens_per_second", r.tokens_per_second}}
                     .dump()
              << "\n";
    return;
  }
  std::fprintf(stderr, "\n");
  std::printf("perplexity %.4f +/- %.4f  (%lld tokens scored in %d windows of %d; %.1f tokens/s)\n", r.perplexity,
              r.standard_error, static_cast<long long>(r.scored_tokens), r.windows, opt.ctx, r.tokens_per_second);
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto opt = std::make_shared<PerplexityCliOptions>();
  CLI::App* cmd = app.add_subcommand("perplexity", "Perplexity of a model over a text file");
  cmd->add_option("model", opt->model, "Path to a .gguf file or a catalog name")->required();
  cmd->add_option("--file", opt->file, "UTF-8 text file")->required();
  cmd->add_option("--ctx", opt->ctx, "Tokens per window")->capture_default_str();
  add_run_options(*cmd, opt->setup);
  cmd->add_flag("--json", opt->json, "Print JSON");
  cmd->callback([opt] { run_perplexity(*opt); });
}

}  // namespace hearth::cli
