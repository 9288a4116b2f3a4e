// hearth-cli history [--search T] [--prompt NAME[@VERSION|@LABEL]] [--model M]
//   [--quantization Q] [--finish R] [--rating up|down|none] [--since DATE]
//   [--until DATE] [--conversation ID] [--limit N] [--offset N] [--sort COLUMN] [--asc]
// Every user prompt sent, newest first, with its newest answer's record.
// --prompt NAME matches every version; NAME@LABEL the label's version now.
// --json: {"total": N, "entries": [store_json.h's history_entry_json]}.
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "cli/store_json.h"
#include "cli/store_session.h"

namespace hearth::cli {
namespace {

using nlohmann::json;

struct HistoryOptions {
  DatabaseOptions db;
  std::string search, prompt, model, quantization, finish, rating, since, until, sort = "time";
  std::optional<std::int64_t> conversation;
  int limit = 50;
  int offset = 0;
  bool ascending = false;
};

const std::map<std::string, store::HistorySort>& sort_columns() {
  static const std::map<std::string, store::HistorySort> columns{
      {"time", store::HistorySort::kTime},
      {"conversation", store::HistorySort::kConversation},
      {"model", store::HistorySort::kModel},
      {"ttft", store::HistorySort::kTtft},
      {"decode_tps", store::HistorySort::kDecodeTps},
      {"prompt_tokens", store::HistorySort::kPromptTokens},
      {"generated_tokens", store::HistorySort::kGeneratedTokens},
      {"finish", store::HistorySort::kFinishReason},
      {"rating", store::HistorySort::kRating},
      {"text", store::HistorySort::kText},
      {"prompt_version", store::HistorySort::kPromptVersion},
      {"quantization", store::HistorySort::kQuantization},
      {"kv_precision", store::HistorySort::kKvPrecision},
      {"device", store::HistorySort::kDevice},
      {"temperature", store::HistorySort::kTemperature},
      {"cached_tokens", store::HistorySort::kCachedTokens}};
  return columns;
}

store::HistoryQuery query_from(store::Store& s, const HistoryOptions& o) {
  store::HistoryQuery q;
  q.search = o.search;
  q.conversation_id = o.conversation;
  q.model = o.model;
  q.quantization = o.quantization;
  q.finish_reason = o.finish;
  q.limit = o.limit;
  q.offset = o.offset;
  q.descending = !o.ascending;
  q.sort = sort_columns().at(o.sort);
  if (!o.rating.empty()) {
    q.rating = o.rating == "up" ? store::Rating::kUp : o.rating == "down" ? store::Rating::kDown : store::Rating::kNone;
  }
  if (!o.since.empty()) q.since_ms = parse_time(o.since, false, "--since");
  if (!o.until.empty()) q.until_ms = parse_time(o.until, true, "--until");
  if (!o.prompt.empty()) {
    if (o.prompt.find('@') == std::string::npos) {
      q.prompt_id = unwrap(s.find_prompt(o.prompt)).id;
    } else {
      q.prompt_version_id = unwrap(s.resolve_prompt(o.prompt)).version.id;
    }
  }
  return q;
}

std::string first_line(const std::string& text, std::size_t width) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

void print_table(const json& entries) {
  std::printf("%-20s %-7s %-18s %-12s %7s %7s %-7s %s\n", "time", "message", "model", "prompt", "ttft_ms", "tok/s",
              "finish", "text");
  for (const json& e : entries) {
    const bool answered = !e["model"].is_null();
    std::string prompt = "-";
    if (!e["prompt_version"].is_null()) {
      prompt = e["prompt_version"]["name"].get<std::string>() + "@" +
               std::to_string(e["prompt_version"]["version"].get<int>());
    }
    std::printf("%-20.19s %-7lld %-18.18s %-12.12s %7.0f %7.1f %-7.7s %s\n", e["time"].get<std::string>().c_str(),
                static_cast<long long>(e["message_id"].get<std::int64_t>()),
                answered ? e["model"].get<std::string>().c_str() : "-", prompt.c_str(),
                answered ? e["ttft_ms"].get<double>() : 0.0, answered ? e["decode_tps"].get<double>() : 0.0,
                answered ? e["finish_reason"].get<std::string>().c_str() : "-",
                first_line(e["text"].get<std::string>(), 60).c_str());
  }
}

void run_history(const HistoryOptions& o) {
  auto s = open_database(o.db, Access::kRead);
  const store::HistoryQuery q = query_from(*s, o);
  const auto rows = unwrap(s->history(q));
  json entries = json::array();
  for (const auto& e : rows) entries.push_back(history_entry_json(e));
  const std::int64_t total = unwrap(s->history_count(q));
  if (o.db.json) {
    std::cout << json{{"total", total}, {"entries", entries}}.dump(2) << "\n";
    return;
  }
  print_table(entries);
  std::printf("(%zu of %lld)\n", rows.size(), static_cast<long long>(total));
}

}  // namespace

void add_history_command(CLI::App& app) {
  auto o = std::make_shared<HistoryOptions>();
  CLI::App* cmd = app.add_subcommand("history", "Every prompt sent, newest first, with what answered it");
  cmd->add_option("--search", o->search, "Full-text search of the prompt's text (every word, as a prefix)");
  cmd->add_option("--prompt", o->prompt, "NAME (any version), NAME@VERSION or NAME@LABEL");
  cmd->add_option("--model", o->model, "Model name or file path");
  cmd->add_option("--quantization", o->quantization, "e.g. Q4_1");
  cmd->add_option("--finish", o->finish, "Finish reason: stop, length, cancelled, error");
  cmd->add_option("--rating", o->rating, "up, down or none")->check(CLI::IsMember({"up", "down", "none"}));
  cmd->add_option("--since", o->since, "From this time on (YYYY-MM-DD[THH:MM[:SS]] UTC, or epoch ms)");
  cmd->add_option("--until", o->until, "Before this time (a bare date includes that day)");
  cmd->add_option("--conversation", o->conversation, "Only this conversation");
  cmd->add_option("--limit", o->limit, "Rows (default 50)")->check(CLI::Range(0, 10000));
  cmd->add_option("--offset", o->offset, "Skip this many rows")->check(CLI::NonNegativeNumber);
  std::vector<std::string> names;
  for (const auto& [name, column] : sort_columns()) names.push_back(name);
  cmd->add_option("--sort", o->sort, "Sort column (default time)")->check(CLI::IsMember(names));
  cmd->add_flag("--asc", o->ascending, "Ascending (default: descending)");
  add_database_options(cmd, o->db);
  cmd->callback([o] { run_history(*o); });
}

}  // namespace hearth::cli
