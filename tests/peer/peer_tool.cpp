// The Hearth side of the llama.cpp peer tests (peer_parity_test.py), driving
// the Model directly, without the engine runtime:
// Either command may be preceded by --q8-activations (plain 8-bit activation
// blocks, as llama.cpp; the default refines blocks that hold an outlier).
//   peer_tool generate MODEL THREADS N_TOKENS IN.json OUT.json
//       IN: {"prompts": [[ids...], ...], "stop": [ids...]}; greedy generation of up
//       to N_TOKENS per prompt. OUT: [{"tokens": [...], "top": [[[id, logit] x5] per step]}, ...]
//   peer_tool perplexity MODEL THREADS CTX IDS.json
//       IDS: a JSON array of token ids. Prints {"perplexity", "perplexity_err",
//       "scored_tokens", "windows", "seconds"} from engine/eval/perplexity.h.
//   peer_tool path MODEL
//       The resolved model file (so the Python side opens the same file).
// MODEL is a path, a catalog name, or "default".
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/eval/perplexity.h"
#include "models/catalog.h"
#include "models/loader.h"
#include "tests/peer/greedy.h"

namespace {

using namespace hearth;
using nlohmann::json;

int fail(const Error& e) {
  std::cerr << "peer_tool: " << e.describe() << "\n";
  return 1;
}

Result<std::filesystem::path> resolve(const std::string& model) {
  return models::resolve_model(model == "default" ? models::builtin_catalog().default_entry().name : model);
}

Result<ModelBundle> load(const std::string& model, int threads, bool refine_activations) {
  HEARTH_ASSIGN_OR_RETURN(auto path, resolve(model));
  models::LoadOptions options;
  options.n_threads = threads;
  options.refine_activations = refine_activations;
  return models::load_model(path, options);
}

Result<json> read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot open " + path);
  json j = json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  if (j.is_discarded()) return make_error(ErrorCode::kInvalidArgument, path + " is not valid JSON");
  return j;
}

int run_generate(Model& model, int n_tokens, const std::string& in_path, const std::string& out_path) {
  auto in = read_json(in_path);
  if (!in) return fail(in.error());
  peer::GreedyOptions options;
  options.max_new_tokens = n_tokens;
  options.stop_tokens = (*in)["stop"].get<std::vector<std::int32_t>>();
  json out = json::array();
  for (const auto& p : (*in)["prompts"]) {
    const auto prompt = p.get<std::vector<std::int32_t>>();
    auto steps = peer::greedy_generate(model, prompt, options);
    if (!steps) return fail(steps.error());
    json tokens = json::array(), top = json::array();
    for (const auto& s : *steps) {
      tokens.push_back(s.token);
      json row = json::array();
      for (const auto& t : s.top) row.push_back({t.id, t.logit});
      top.push_back(row);
    }
    out.push_back({{"tokens", tokens}, {"top", top}});
  }
  std::ofstream(out_path) << out.dump();
  return 0;
}

int run_perplexity(Model& model, int context, const std::string& ids_path) {
  auto ids = read_json(ids_path);
  if (!ids) return fail(ids.error());
  const auto tokens = ids->get<std::vector<std::int32_t>>();
  const auto t0 = std::chrono::steady_clock::now();
  eval::PerplexityOptions options;  // no BOS: SmolLM2 does not add one, and the caller's ids are used as given
  options.context = context;
  auto r = eval::perplexity(model, tokens, options);
  if (!r) return fail(r.error());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << json{{"perplexity", r->perplexity},
                    {"perplexity_err", r->standard_error},
                    {"scored_tokens", r->scored_tokens},
                    {"windows", r->windows},
                    {"seconds", s}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // --q8-activations first: plain 8-bit activation blocks, llama.cpp's arithmetic.
  const bool q8 = argc > 1 && std::string(argv[1]) == "--q8-activations";
  if (q8) --argc, ++argv;
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "path" && argc == 3) {
    auto path = resolve(argv[2]);
    if (!path) return fail(path.error());
    std::cout << path->string() << "\n";
    return 0;
  }
  const bool gen = cmd == "generate" && argc == 7;
  const bool ppl = cmd == "perplexity" && argc == 6;
  if (!gen && !ppl) {
    std::cerr << "usage: peer_tool [--q8-activations] generate MODEL THREADS N_TOKENS IN.json OUT.json\n"
                 "       peer_tool perplexity MODEL THREADS CTX IDS.json\n"
                 "       peer_tool path MODEL\n";
    return 2;
  }
  auto bundle = load(argv[2], std::stoi(argv[3]), !q8);
  if (!bundle) return fail(bundle.error());
  Model& model = *bundle->model;
  if (gen) return run_generate(model, std::stoi(argv[4]), argv[5], argv[6]);
  return run_perplexity(model, std::stoi(argv[4]), argv[5]);
}
