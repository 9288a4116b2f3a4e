// Hearth's side of bench_vs_llamacpp.py: keeps the model loaded and answers
// one JSON request per stdin line with one JSON line on stdout, so the driver
// can interleave Hearth and llama.cpp repetitions in the same run.
//   {"op": "info"}                           -> {"weights_bytes", "n_vocab", "n_threads"}
//   {"op": "prefill", "ids": [...]}          -> {"seconds"}: one forward step of the whole prompt
//                                               from an empty cache, logits of the last token
//   {"op": "decode", "prompt": [...], "n": N} -> {"seconds", "tokens", "step_seconds"}: after an
//                                               untimed prefill, N greedy steps of one token (EOS ignored)
//   {"op": "bandwidth", "mib": M, "threads": T} -> {"gb_per_s"}: best of 5 passes reading M MiB
// Usage: hearth-bench-peer MODEL THREADS   (MODEL: a path, a catalog name, or "default")
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/model/model.h"
#include "models/catalog.h"
#include "models/loader.h"

namespace {

using namespace hearth;
using nlohmann::json;
using Seconds = std::chrono::duration<double>;

constexpr std::int32_t kBlockSize = 16;
constexpr std::int32_t kMaxTokens = 2048;  // KV room: the longest prompt plus decoded tokens

struct Bench {
  Model& model;
  std::vector<std::int32_t> table;  // [kMaxTokens / kBlockSize] block ids 0..n-1
  std::vector<float> logits;        // [n_vocab]

  Result<double> forward(std::span<const std::int32_t> ids, std::int32_t pos) {
    const SequenceStep step{ids, pos, table, true};
    const auto t0 = std::chrono::steady_clock::now();
    HEARTH_TRY(model.forward(std::span(&step, 1), logits));
    return Seconds(std::chrono::steady_clock::now() - t0).count();
  }

  std::int32_t argmax() const {
    return static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }

  Result<json> decode(const std::vector<std::int32_t>& prompt, std::int32_t n) {
    HEARTH_TRY(forward(prompt, 0));
    auto pos = static_cast<std::int32_t>(prompt.size());
    std::vector<std::int32_t> out;
    std::vector<double> steps;  // seconds per token, arg-max included
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int32_t i = 0; i < n; ++i) {
      const auto s0 = std::chrono::steady_clock::now();
      const std::int32_t next = argmax();
      out.push_back(next);
      HEARTH_TRY(forward(std::span(&next, 1), pos++));
      steps.push_back(Seconds(std::chrono::steady_clock::now() - s0).count());
    }
    return json{
        {"seconds", Seconds(std::chrono::steady_clock::now() - t0).count()}, {"tokens", out}, {"step_seconds", steps}};
  }
};

// Read bandwidth: `threads` threads each sum their share of a buffer larger
// than the caches (8-byte loads the compiler vectorizes); best of 5 passes.
double read_bandwidth(std::size_t mib, int threads) {
  std::vector<std::uint64_t> buf(mib * (1u << 20) / sizeof(std::uint64_t));
  std::iota(buf.begin(), buf.end(), std::uint64_t{1});
  std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    const std::size_t share = buf.size() / static_cast<std::size_t>(threads);
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const std::uint64_t* p = buf.data() + static_cast<std::size_t>(t) * share;
        std::uint64_t s = 0;
        for (std::size_t i = 0; i < share; ++i) s += p[i];
        sums[static_cast<std::size_t>(t)] = s;
      });
    }
    for (auto& th : pool) th.join();
    const double s = Seconds(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(share * static_cast<std::size_t>(threads) * 8) / s / 1e9);
  }
  if (std::accumulate(sums.begin(), sums.end(), std::uint64_t{0}) == 0) return 0;  // keeps the loads alive
  return best;
}

Result<json> handle(Bench& b, const json& req, int n_threads) {
  const std::string op = req.value("op", "");
  if (op == "info") {
    return json{{"weights_bytes", b.model.memory().weights_bytes},
                {"n_vocab", b.model.hparams().n_vocab},
                {"n_threads", n_threads}};
  }
  if (op == "prefill") {
    HEARTH_ASSIGN_OR_RETURN(double s, b.forward(req.at("ids").get<std::vector<std::int32_t>>(), 0));
    return json{{"seconds", s}};
  }
  if (op == "decode") {
    return b.decode(req.at("prompt").get<std::vector<std::int32_t>>(), req.at("n").get<std::int32_t>());
  }
  if (op == "bandwidth") {
    return json{{"gb_per_s", read_bandwidth(req.at("mib").get<std::size_t>(), req.at("threads").get<int>())}};
  }
  return make_error(ErrorCode::kInvalidArgument, "unknown op '" + op + "'");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "--q8-activations")) {
    std::cerr << "usage: hearth-bench-peer MODEL THREADS [--q8-activations] (then JSON requests on stdin)\n";
    return 2;
  }
  const std::string name = std::string(argv[1]) == "default" ? models::builtin_catalog().default_entry().name : argv[1];
  const int threads = std::stoi(argv[2]);
  auto path = models::resolve_model(name);
  if (!path) return std::cerr << path.error().describe() << "\n", 1;
  models::LoadOptions load;
  load.n_threads = threads;
  load.refine_activations = argc == 3;  // --q8-activations: llama.cpp's plain 8-bit activation blocks
  auto bundle = models::load_model(*path, load);
  if (!bundle) return std::cerr << bundle.error().describe() << "\n", 1;
  Model& model = *bundle->model;
  if (auto r = model.allocate_kv(KvLayout{kMaxTokens / kBlockSize, kBlockSize}); !r) {
    return std::cerr << r.error().describe() << "\n", 1;
  }
  Bench bench{model, std::vector<std::int32_t>(kMaxTokens / kBlockSize), std::vector<float>(model.hparams().n_vocab)};
  std::iota(bench.table.begin(), bench.table.end(), 0);
  std::cout << json{{"ready", true}, {"path", path->string()}}.dump() << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
    const json req = json::parse(line, nullptr, false);
    auto reply = req.is_discarded() ? Result<json>(make_error(ErrorCode::kInvalidArgument, "request is not JSON"))
                                    : handle(bench, req, threads);
    std::cout << (reply ? *reply : json{{"error", reply.error().describe()}}).dump() << std::endl;
  }
  return 0;
}
