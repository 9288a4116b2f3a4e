// hearth-bench-store: the prompt history view's queries on a large store.
//
//   hearth-bench-store [--messages N] [--database FILE] [--reps R]
//
// Generates a database of N messages (default 100,000: N/2 user prompts, each
// answered, with a generation record) in 500 conversations, 4 prompts x 3
// versions, 3 models, 3 quantizations, 4 finish reasons, 30% rated; the text
// is drawn from a 2,000-word vocabulary (Zipf-like), so search terms have a
// realistic spread. It is written through Store::import_json in one
// transaction (that time is printed too). Then it times each query of the
// history window (first page of 100 rows and its total, each filter alone,
// search, a sort by TTFT), R repetitions each, and prints the median and the
// worst in milliseconds. Deterministic (fixed seed).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "store/store.h"

namespace {

using hearth::store::HistoryQuery;
using hearth::store::Id;
using hearth::store::Rating;
using hearth::store::Store;
using nlohmann::json;

struct Options {
  int messages = 100000;
  std::string database;
  int reps = 15;
};

// The same 2,000 words every run (their own seed), most frequent first.
std::vector<std::string> vocabulary() {
  std::mt19937 rng(2000);
  static const char* syllables[] = {"ka", "lo", "mi", "ne", "ru",  "sa",  "ti",
                                    "vo", "ze", "pa", "qu", "bri", "dor", "fen"};
  std::vector<std::string> words;
  while (words.size() < 2000) {
    std::string w;
    const int n = 2 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) w += syllables[rng() % std::size(syllables)];
    words.push_back(w);
  }
  return words;
}

// Zipf-like: word i is drawn about 1/(i+1) as often as word 0.
std::string sentence(std::mt19937& rng, const std::vector<std::string>& words, int length) {
  std::string s;
  for (int i = 0; i < length; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const auto k = static_cast<std::size_t>(std::pow(static_cast<double>(words.size()), u)) - 1;
    s += (i ? " " : "") + words[std::min(k, words.size() - 1)];
  }
  return s;
}

json generation(std::mt19937& rng, Id version_id, std::int64_t t) {
  static const char* models[] = {"smollm2-135m-instruct", "gemma-3-270m", "qwen2-0.5b"};
  static const char* quants[] = {"Q4_1", "Q4_K_M", "Q8_0"};
  static const char* finishes[] = {"stop", "stop", "stop", "length", "cancelled", "error"};
  const std::string model = models[rng() % 3];
  return {{"prompt_version_id", version_id == 0 ? json(nullptr) : json(version_id)},
          {"model_path", "/models/" + model + ".gguf"},
          {"model_sha256", "00"},
          {"model_name", model},
          {"quantization", quants[rng() % 3]},
          {"kv_precision", "f16"},
          {"device", "cpu"},
          {"sampling",
           {{"temperature", 0.7},
            {"top_k", 40},
            {"top_p", 0.95},
            {"min_p", 0.05},
            {"repeat_penalty", 1.0},
            {"frequency_penalty", 0.0},
            {"presence_penalty", 0.0},
            {"penalty_last_n", 64},
            {"seed", rng()}}},
          {"max_tokens", 512},
          {"stop", json::array()},
          {"system_text", "You are helpful."},
          {"variables", json::object()},
          {"prompt_label", ""},
          {"prompt_tokens", 20 + rng() % 500},
          {"cached_tokens", rng() % 20},
          {"generated_tokens", 10 + rng() % 400},
          {"ttft_ms", 5.0 + static_cast<double>(rng() % 10000) / 100.0},
          {"prefill_tok_s", 500.0},
          {"decode_tok_s", 20.0 + static_cast<double>(rng() % 8000) / 100.0},
          {"itl_p50_ms", 20.0},
          {"itl_p95_ms", 30.0},
          {"itl_p99_ms", 40.0},
          {"peak_memory_bytes", 1 << 20},
          {"finish_reason", finishes[rng() % std::size(finishes)]},
          {"started_ms", t},
          {"finished_ms", t + 1000}};
}

json prompts_json(std::int64_t t0) {
  json prompts = json::array();
  const json config{{"temperature", nullptr}, {"top_p", nullptr},      {"top_k", nullptr},
                    {"min_p", nullptr},       {"max_tokens", nullptr}, {"stop", nullptr}};
  for (int p = 0; p < 4; ++p) {
    json versions = json::array();
    for (int v = 1; v <= 3; ++v) {
      versions.push_back({{"id", p * 3 + v},
                          {"version", v},
                          {"text", "prompt " + std::to_string(p)},
                          {"note", ""},
                          {"created_ms", t0 + v},
                          {"source_version_id", nullptr},
                          {"config", config}});
    }
    prompts.push_back(
        {{"id", p + 1},
         {"name", "prompt-" + std::to_string(p)},
         {"created_ms", t0},
         {"archived", false},
         {"versions", versions},
         {"labels", json::array({{{"label", "latest"}, {"version_id", p * 3 + 3}, {"updated_ms", t0}}})}});
  }
  return prompts;
}

// The export document with `messages` messages (pairs of a prompt and its answer).
json document(int messages) {
  std::mt19937 rng(20261202);
  const auto words = vocabulary();
  const std::int64_t t0 = 1'735'689'600'000;  // 2025-01-01
  const int conversations = 500;
  std::vector<json> convs(conversations);
  std::vector<std::optional<Id>> last(conversations);
  for (int c = 0; c < conversations; ++c) {
    convs[static_cast<std::size_t>(c)] = {{"id", c + 1},
                                          {"title", sentence(rng, words, 3)},
                                          {"created_ms", t0},
                                          {"archived", false},
                                          {"deleted_ms", nullptr},
                                          {"prompt_version_id", nullptr},
                                          {"label_prompt_id", nullptr},
                                          {"prompt_label", nullptr},
                                          {"messages", json::array()}};
  }
  for (int i = 0; i < messages / 2; ++i) {
    const auto c = static_cast<std::size_t>(rng() % conversations);
    const std::int64_t t = t0 + std::int64_t{i} * 60'000;  // a prompt a minute: about 35 days
    const Id user = 2 * i + 1;
    json& list = convs[c]["messages"];
    const auto rating = rng() % 10;
    list.push_back({{"id", user},
                    {"parent_id", last[c] ? json(*last[c]) : json(nullptr)},
                    {"role", "user"},
                    {"content", sentence(rng, words, 8 + static_cast<int>(rng() % 20))},
                    {"state", "complete"},
                    {"created_ms", t},
                    {"updated_ms", t},
                    {"rating", nullptr},
                    {"generation", nullptr}});
    list.push_back({{"id", user + 1},
                    {"parent_id", user},
                    {"role", "assistant"},
                    {"content", sentence(rng, words, 30 + static_cast<int>(rng() % 60))},
                    {"state", "complete"},
                    {"created_ms", t + 1000},
                    {"updated_ms", t + 1000},
                    {"rating", rating < 2   ? json{{"value", "up"}, {"updated_ms", t + 2000}}
                               : rating < 3 ? json{{"value", "down"}, {"updated_ms", t + 2000}}
                                            : json(nullptr)},
                    {"generation", generation(rng, static_cast<Id>(rng() % 13), t)}});
    last[c] = user + 1;
    convs[c]["updated_ms"] = t + 1000;
  }
  json doc{{"format", "hearth-export"}, {"version", 1}, {"prompts", prompts_json(t0)}, {"experiments", json::array()}};
  doc["conversations"] = json::array();
  for (json& c : convs) {
    if (!c.contains("updated_ms")) c["updated_ms"] = t0;
    c["current_leaf_id"] = c["messages"].empty() ? json(nullptr) : c["messages"].back()["id"];
    doc["conversations"].push_back(std::move(c));
  }
  return doc;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void time_query(Store& store, const char* name, const HistoryQuery& q, int reps) {
  std::vector<double> page_ms, count_ms;
  std::size_t rows = 0;
  std::int64_t total = 0;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    auto page = store.history(q);
    page_ms.push_back(ms_since(start));
    start = std::chrono::steady_clock::now();
    auto count = store.history_count(q);
    count_ms.push_back(ms_since(start));
    if (!page || !count) {
      std::printf("%s: %s\n", name, (page ? count.error() : page.error()).describe().c_str());
      return;
    }
    rows = page->size();
    total = *count;
  }
  std::sort(page_ms.begin(), page_ms.end());
  std::sort(count_ms.begin(), count_ms.end());
  std::printf("%-34s %5zu rows of %6lld   page %7.2f ms (worst %7.2f)   total %7.2f ms (worst %7.2f)\n", name, rows,
              static_cast<long long>(total), page_ms[page_ms.size() / 2], page_ms.back(), count_ms[count_ms.size() / 2],
              count_ms.back());
}

int run(const Options& o) {
  std::string path = o.database;
  if (path.empty()) path = (std::filesystem::temp_directory_path() / "hearth-bench-store.db").string();
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) std::filesystem::remove(path + suffix);
  auto start = std::chrono::steady_clock::now();
  const std::string text = document(o.messages).dump();
  std::printf("generated a %d-message document (%.1f MB) in %.0f ms\n", o.messages,
              static_cast<double>(text.size()) / 1e6, ms_since(start));
  auto opened = Store::open({.path = path});
  if (!opened) {
    std::printf("%s\n", opened.error().describe().c_str());
    return 1;
  }
  Store& store = **opened;
  start = std::chrono::steady_clock::now();
  auto imported = store.import_json(text);
  if (!imported) {
    std::printf("%s\n", imported.error().describe().c_str());
    return 1;
  }
  std::printf("imported %d messages into %s in %.0f ms\n\n", imported->messages, path.c_str(), ms_since(start));
  const Id version = store.resolve_prompt("prompt-1@2")->version.id;
  const Id prompt = store.find_prompt("prompt-2")->id;
  const std::int64_t t0 = 1'735'689'600'000;
  const std::int64_t day = 86'400'000;
  time_query(store, "first page (newest 100)", {.limit = 100}, o.reps);
  const auto words = vocabulary();
  time_query(store, "search: the most common word", {.search = words[0], .limit = 100}, o.reps);
  time_query(store, "search: two common words", {.search = words[1] + " " + words[2], .limit = 100}, o.reps);
  time_query(store, "search: a rare word", {.search = words[1500], .limit = 100}, o.reps);
  time_query(store, "search: a prefix", {.search = words[3].substr(0, 3), .limit = 100}, o.reps);
  time_query(store, "search: no match", {.search = "zzzzzz", .limit = 100}, o.reps);
  time_query(store, "prompt (any version)", {.prompt_id = prompt, .limit = 100}, o.reps);
  time_query(store, "prompt version", {.prompt_version_id = version, .limit = 100}, o.reps);
  time_query(store, "model", {.model = "gemma-3-270m", .limit = 100}, o.reps);
  time_query(store, "quantization", {.quantization = "Q8_0", .limit = 100}, o.reps);
  time_query(store, "finish reason (rare: error)", {.finish_reason = "error", .limit = 100}, o.reps);
  time_query(store, "rating up", {.rating = Rating::kUp, .limit = 100}, o.reps);
  time_query(store, "rating none", {.rating = Rating::kNone, .limit = 100}, o.reps);
  time_query(store, "date range (one day)", {.since_ms = t0 + 10 * day, .until_ms = t0 + 11 * day, .limit = 100},
             o.reps);
  time_query(store, "conversation", {.conversation_id = 7, .limit = 100}, o.reps);
  time_query(store, "sorted by TTFT", {.limit = 100, .sort = hearth::store::HistorySort::kTtft}, o.reps);
  time_query(store, "sorted by TTFT, ascending",
             {.limit = 100, .sort = hearth::store::HistorySort::kTtft, .descending = false}, o.reps);
  time_query(store, "sorted by TTFT, page 10", {.limit = 100, .offset = 900, .sort = hearth::store::HistorySort::kTtft},
             o.reps);
  time_query(store, "sorted by decode tok/s", {.limit = 100, .sort = hearth::store::HistorySort::kDecodeTps}, o.reps);
  time_query(store, "sorted by TTFT, one model",
             {.model = "gemma-3-270m", .limit = 100, .sort = hearth::store::HistorySort::kTtft}, o.reps);
  time_query(store, "sorted by TTFT, one finish reason",
             {.finish_reason = "length", .limit = 100, .sort = hearth::store::HistorySort::kTtft}, o.reps);
  time_query(store, "sorted by TTFT, a model with no answers",
             {.model = "no-such-model", .limit = 100, .sort = hearth::store::HistorySort::kTtft}, o.reps);
  time_query(store, "sorted by prompt version (no index)",
             {.limit = 100, .sort = hearth::store::HistorySort::kPromptVersion}, o.reps);
  time_query(store, "page 100 (offset 9,900)", {.limit = 100, .offset = 9900}, o.reps);
  start = std::chrono::steady_clock::now();
  auto exported = store.export_json();
  std::printf("\nexported everything (%.1f MB) in %.0f ms\n",
              exported ? static_cast<double>(exported->size()) / 1e6 : 0.0, ms_since(start));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--messages")
      o.messages = std::max(2, std::atoi(argv[i + 1]));
    else if (flag == "--database")
      o.database = argv[i + 1];
    else if (flag == "--reps")
      o.reps = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: hearth-bench-store [--messages N] [--database FILE] [--reps R]\n");
      return 2;
    }
  }
  return run(o);
}
