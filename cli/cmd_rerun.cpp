// hearth-cli rerun MESSAGE_ID [--model M | --endpoint URL [--api-key K] [--remote-model NAME]] [--prompt
// NAME[@VERSION|@LABEL]] [--var K=V]...
//   [--database FILE] [--json] [generate's engine and sampling options]
// A past user message again, with its conversation up to it: the new answer
// is a sibling of the earlier ones. What is not given is taken from the
// latest earlier answer (prompt version, variables, sampling with its seed,
// max tokens, stop strings; the model file when it still exists). Prints the
// new answer and how it compares with that earlier one. --json:
// {"conversation_id", "user_message_id", "assistant_message_id", "text",
//  "finish_reason", "generation", "previous": {"assistant_message_id", "text",
//  "generation"} | null, "comparison": {"word_diff": [{"op", "text"}],
//  "changed": {field: {"before", "after"}}, "measurements": {field: {"before", "after"}}}}
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/store_json.h"
#include "cli/turn_options.h"
#include "conversation/prepare.h"
#include "models/catalog.h"
#include "store/word_diff.h"

namespace hearth::cli {
namespace {

struct RerunOptions {
  TurnOptions turn;
  store::Id message = 0;
  std::string model;  // empty: the earlier answer's file, else the default model
  std::int32_t context_length = 0;
};

// The earlier answer's model file when it is still there, else the catalog's default.
std::string model_for(store::Store& store, const store::Message& asked) {
  store::HistoryQuery q;
  q.conversation_id = asked.conversation_id;
  q.limit = 10000;
  for (const auto& entry : unwrap(store.history(q))) {
    if (entry.message_id != asked.id || !entry.generation) continue;
    std::error_code ec;
    if (std::filesystem::is_regular_file(entry.generation->model_path, ec)) return entry.generation->model_path;
  }
  return models::builtin_catalog().default_entry().name;
}

nlohmann::json compare(const nlohmann::json& before, const nlohmann::json& after, const std::string& old_text,
                       const std::string& new_text) {
  nlohmann::json diff = nlohmann::json::array();
  for (const auto& op : store::word_diff(old_text, new_text))
    diff.push_back({{"op", to_string(op.op)}, {"text", op.text}});
  nlohmann::json changed = nlohmann::json::object(), measured = nlohmann::json::object();
  for (const char* key : {"prompt_version", "prompt_label", "system_text", "variables", "model", "model_sha256",
                          "quantization", "kv_precision", "device", "sampling", "max_tokens", "stop"}) {
    if (before.value(key, nlohmann::json()) != after.value(key, nlohmann::json())) {
      changed[key] = {{"before", before.value(key, nlohmann::json())}, {"after", after.value(key, nlohmann::json())}};
    }
  }
  for (const char* key : {"prompt_tokens", "cached_tokens", "generated_tokens", "ttft_ms", "prefill_tps", "decode_tps",
                          "itl_p50_ms", "itl_p95_ms", "itl_p99_ms", "finish_reason"}) {
    measured[key] = {{"before", before.value(key, nlohmann::json())}, {"after", after.value(key, nlohmann::json())}};
  }
  return {{"word_diff", diff}, {"changed", changed}, {"measurements", measured}};
}

void print_comparison(const nlohmann::json& c, store::Id before_id, const std::string& old_text, store::Id after_id,
                      const std::string& new_text) {
  std::cout << "--- before (message " << before_id << ")\n"
            << old_text << "\n+++ after (message " << after_id << ")\n"
            << new_text << "\n";
  for (const auto& [key, v] : c["changed"].items()) {
    std::cout << "changed " << key << ": " << v["before"].dump() << " -> " << v["after"].dump() << "\n";
  }
  for (const auto& [key, v] : c["measurements"].items()) {
    std::cout << key << ": " << v["before"].dump() << " -> " << v["after"].dump() << "\n";
  }
  std::cout << "word diff: ";
  for (const auto& op : c["word_diff"]) {
    const std::string kind = op["op"], text = op["text"];
    std::cout << (kind == "delete" ? "[-" + text + "-]" : kind == "insert" ? "{+" + text + "+}" : text);
  }
  std::cout << "\n";
}

void run_rerun(RerunOptions o) {
  const conversation::TurnSettings settings = turn_settings(o.turn);
  auto store = open_database(o.turn.database, Access::kWrite);
  const store::Message asked = unwrap(store->get_message(o.message));
  if (asked.role != store::Role::kUser) {
    throw Failure{"message " + std::to_string(o.message) + " is not a user message (it is " +
                      store::to_string(asked.role) + "'s): give the id of the prompt it answers",
                  1, "invalid_argument"};
  }
  check_prompt(*store, o.turn);
  if (o.turn.endpoint.empty()) o.turn.setup.model = o.model.empty() ? model_for(*store, asked) : o.model;
  StartedModel model = start_model(o.turn);
  store::Id before_id = 0;
  auto turn = unwrap(conversation::begin_rerun(*store, o.message, settings, &before_id));
  const bool json = o.turn.database.json;
  const conversation::TurnResult result = run(*store, model, std::move(turn), json);
  nlohmann::json out = turn_json(*store, result);
  out["previous"] = nullptr;
  if (before_id != 0) {
    const store::Message before = unwrap(store->get_message(before_id));
    const auto before_gen = unwrap(store->get_generation(before_id));
    const nlohmann::json before_json = before_gen ? generation_json(*store, *before_gen) : nlohmann::json::object();
    out["previous"] = {{"assistant_message_id", before_id}, {"text", before.content}, {"generation", before_json}};
    out["comparison"] = compare(before_json, out["generation"], before.content, result.text);
    if (!json) print_comparison(out["comparison"], before_id, before.content, result.turn.answer_id, result.text);
  }
  if (json) {
    std::cout << out.dump() << "\n";
  } else {
    print_summary(result);
  }
}

}  // namespace

void add_rerun_command(CLI::App& app) {
  auto o = std::make_shared<RerunOptions>();
  CLI::App* cmd =
      app.add_subcommand("rerun", "A past user message again (a new sibling answer), compared with the earlier answer");
  cmd->add_option("message_id", o->message, "The user message to send again")->required();
  auto* model = cmd->add_option("--model", o->model,
                                "Model file or catalog name (default: the earlier answer's, else the default)");
  cmd->add_option("--ctx", o->turn.setup.config.context_length, "Context length in tokens (0: the engine's default)");
  add_run_options(*cmd, o->turn.setup);
  add_turn_options(cmd, o->turn);
  model->excludes("--endpoint");
  cmd->callback([o] { run_rerun(*o); });
}

}  // namespace hearth::cli
