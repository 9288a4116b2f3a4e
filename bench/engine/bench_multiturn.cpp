// hearth-bench multiturn MODEL: an 8-turn chat growing past 1,500 tokens (a
// long document first, then short questions, 48-token answers). Each
// turn's prompt runs on two engines, prefix cache on and off, and its time to
// first token is reported for both. Target: from turn 3 on, TTFT with the
// cache is at most 15% of TTFT without it.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "bench_common.h"

namespace hearth::bench {
namespace {

constexpr int kTurns = 8;
constexpr std::int32_t kAnswerTokens = 48;

// The first turn hands over a long document (~1,000 tokens), the later ones
// ask short follow-up questions about it: the usual shape of a chat about a
// document, where everything but the newest question is a cached prefix.
std::string user_message(int turn) {
  static const char* const sentences[] = {
      "The lighthouse keeper logged the weather every evening, noting the wind, the swell and the colour of the sky.",
      "Ships passing the headland signalled with lamps, and the keeper answered each one before writing it down.",
      "In winter the supply boat came only twice a month, so the pantry was stocked with flour, salt fish and tea.",
      "A storm in the third week of November tore two slates from the roof and flooded the lower storeroom.",
      "The keeper's daughter kept a separate notebook of birds: gannets, kittiwakes, and once a lost hoopoe.",
      "Repairs to the lamp mechanism required patience, a steady hand and a set of brass tools kept in oil.",
      "On clear nights the beam reached twenty miles, sweeping the water in a slow circle every fifteen seconds.",
      "Letters from the mainland arrived in bundles, read twice over, then stored in a tin box under the stairs.",
  };
  static const char* const questions[] = {
      "Which birds did the daughter note?",     "How often did the supply boat come in winter?",
      "What did the November storm damage?",    "How far did the beam reach on clear nights?",
      "Where were the letters kept?",           "What tools did the lamp repairs need?",
      "What did the keeper log every evening?",
  };
  if (turn > 0) return questions[(turn - 1) % 7];
  std::string text = "Here are my notes from the lighthouse.\n";
  for (int week = 0; week < 6; ++week) {
    text += "Week " + std::to_string(week + 1) + ": ";
    for (int i = 0; i < 8; ++i) text += std::string(sentences[(week + i) % 8]) + " ";
    text += "\n";
  }
  return text + "Summarise them briefly.";
}

struct TurnResult {
  int turn = 0;
  std::int32_t prompt_tokens = 0, cached_tokens = 0;
  double ttft_on = 0, ttft_off = 0;
};

Request greedy_chat(const std::vector<ChatTurn>& history) {
  Request r;
  r.messages = history;
  r.sampling.temperature = 0;
  r.max_tokens = kAnswerTokens;
  r.ignore_eos = true;  // every turn adds the same number of answer tokens
  return r;
}

void print(const std::vector<TurnResult>& turns, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const TurnResult& t : turns) {
      out.push_back({{"turn", t.turn},
                     {"prompt_tokens", t.prompt_tokens},
                     {"cached_tokens", t.cached_tokens},
                     {"ttft_ms_cache_on", t.ttft_on},
                     {"ttft_ms_cache_off", t.ttft_off}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%4s %8s %8s %14s %15s %7s\n", "turn", "prompt", "cached", "ttft_on_ms", "ttft_off_ms", "ratio");
  for (const TurnResult& t : turns) {
    std::printf("%4d %8d %8d %14.1f %15.1f %6.1f%%\n", t.turn, t.prompt_tokens, t.cached_tokens, t.ttft_on, t.ttft_off,
                t.ttft_off > 0 ? 100.0 * t.ttft_on / t.ttft_off : 0.0);
  }
}

void run(const ModelArgs& args, std::int32_t context) {
  if (context < 256) fail("--ctx must be at least 256");
  models::RunConfig config = args.run_config();
  config.context_length = context;
  config.max_sequences = 1;
  config.prefix_cache = true;
  auto on = open_engine(args, config);
  config.prefix_cache = false;
  auto off = open_engine(args, config);
  std::vector<ChatTurn> history = {{"system", "You are a careful assistant who summarises notes."}};
  std::vector<TurnResult> turns;
  for (int t = 0; t < kTurns; ++t) {
    history.push_back({"user", user_message(t)});
    const Request request = greedy_chat(history);
    const FinishEvent with = run_requests(*on, {request})[0];
    const FinishEvent without = run_requests(*off, {request})[0];
    Result<std::string> answer = on->detokenize(with.generated_token_ids);
    if (!answer) fail(answer.error());
    history.push_back({"assistant", *answer});
    turns.push_back(
        {t + 1, with.usage.prompt_tokens, with.usage.cached_tokens, with.usage.ttft_ms, without.usage.ttft_ms});
  }
  print(turns, args.json);
}

}  // namespace

void add_multiturn_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("multiturn", "TTFT per turn of an 8-turn chat, prefix cache on and off");
  auto args = std::make_shared<ModelArgs>();
  auto context = std::make_shared<std::int32_t>(4096);
  add_model_args(*cmd, *args);
  cmd->add_option("--ctx", *context,
                  "Context length of both engines (the chat grows past 1,500 tokens of a subword tokenizer; the "
                  "byte-level one of hearth-cli synth files makes it ~8,300: use 16384)")
      ->capture_default_str();
  cmd->callback([args, context] { run(*args, *context); });
}

}  // namespace hearth::bench
