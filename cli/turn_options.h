// What `send` and `rerun` share: the options of one chat turn (the prompt and
// its {{variables}}, sampling and limits as `generate` spells them, the
// database), folded into conversation::TurnSettings; the model opened and
// identified for the record; and the turn's JSON.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/engine_session.h"
#include "cli/store_session.h"
#include "conversation/recorder.h"
#include "conversation/run_turn.h"
#include "conversation/turn.h"

namespace hearth::cli {

struct TurnOptions {
  EngineSetup setup;
  SamplingParams sampling;  // generate's defaults; only the options given override a prompt version's
  int max_tokens = 512;
  std::vector<std::string> stop;
  std::string prompt;                  // NAME[@VERSION|@LABEL]
  std::vector<std::string> variables;  // K=V
  DatabaseOptions database;
  // A remote OpenAI-compatible endpoint instead of a local model file.
  std::string endpoint;      // --endpoint URL ("" : the local engine)
  std::string api_key;       // --api-key (else $HEARTH_API_KEY)
  std::string remote_model;  // --remote-model (else the endpoint's only model)
  CLI::App* command = nullptr;
};

// --temp ... --seed, -n/--max-tokens, --stop, --prompt, --var, --database,
// --json, --endpoint, --api-key, --remote-model. With --endpoint, the
// command's MODEL is not needed (and not allowed).
void add_turn_options(CLI::App* cmd, TurnOptions& options);

// The settings of the options: sampling defaults, and overrides for each option given.
conversation::TurnSettings turn_settings(const TurnOptions& options);

// Fails before any model is loaded when --prompt names nothing in the store.
void check_prompt(store::Store& store, const TurnOptions& options);

// A send's defaults, as the app's: the conversation's own generation settings
// (conversation_id != 0 and it has them), else settings.json's defaults for new
// conversations (sampling, max tokens, system prompt); the options given
// explicitly still win (they are the overrides). A settings file with bad values
// warns on stderr, naming the key, and its defaults apply for those.
void apply_front_end_defaults(conversation::TurnSettings& settings, store::Store& store, store::Id conversation_id);

struct StartedModel {
  std::unique_ptr<Engine> engine;
  conversation::ModelIdentity identity;
};
// The local model of options.setup, or the remote endpoint when --endpoint was given.
StartedModel start_model(const TurnOptions& options);

// Runs the turn, streaming the answer to stdout unless --json.
conversation::TurnResult run(store::Store& store, StartedModel& model, conversation::PreparedTurn turn, bool json);

// {"conversation_id", "user_message_id", "assistant_message_id", "text", "finish_reason", "generation"}
nlohmann::json turn_json(store::Store& store, const conversation::TurnResult& result);

// One line on stderr about the turn (without --json).
void print_summary(const conversation::TurnResult& result);

}  // namespace hearth::cli
