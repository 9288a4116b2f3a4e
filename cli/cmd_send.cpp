// hearth-cli send (MODEL | --endpoint URL [--api-key K] [--remote-model NAME]) (--new | --conversation ID)
//   [--prompt NAME[@VERSION|@LABEL]] [--var K=V]... --message TEXT [--database FILE] [--json]
//   [generate's engine and sampling options]
// One chat turn through conversation/, stored exactly as the app stores it:
// the user's message under the conversation's current leaf, the answer
// streamed into the store, its generation recorded. With --endpoint a remote
// OpenAI-compatible server answers; the record's device is its base URL. A --prompt is pinned to
// the conversation (its label, or its version), so later turns keep it.
// --json prints {"conversation_id", "user_message_id", "assistant_message_id",
// "text", "finish_reason", "generation": {...}} (names are an interface).
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/turn_options.h"
#include "conversation/prepare.h"

namespace hearth::cli {
namespace {

struct SendOptions {
  TurnOptions turn;
  bool is_new = false;
  store::Id conversation = 0;
  std::string message;
};

void run_send(const SendOptions& o) {
  if (o.is_new == (o.conversation != 0)) throw Failure{"give exactly one of --new and --conversation ID", 2, "usage"};
  conversation::TurnSettings settings = turn_settings(o.turn);
  auto store = open_database(o.turn.database, Access::kWrite);
  if (o.conversation != 0) unwrap(store->get_conversation(o.conversation));
  apply_front_end_defaults(settings, *store, o.conversation);
  check_prompt(*store, o.turn);
  StartedModel model = start_model(o.turn);
  conversation::SendInput input;
  input.conversation_id = o.conversation;
  input.text = o.message;
  auto turn = unwrap(conversation::begin_send(*store, input, settings));
  const conversation::TurnResult result = run(*store, model, std::move(turn), o.turn.database.json);
  if (o.turn.database.json) {
    std::cout << turn_json(*store, result).dump() << "\n";
  } else {
    print_summary(result);
  }
}

}  // namespace

void add_send_command(CLI::App& app) {
  auto o = std::make_shared<SendOptions>();
  CLI::App* cmd = app.add_subcommand("send", "One chat turn, stored in the conversation database as the app stores it");
  add_engine_options(*cmd, o->turn.setup);
  auto* fresh = cmd->add_flag("--new", o->is_new, "Start a new conversation");
  auto* existing = cmd->add_option("--conversation", o->conversation, "Continue conversation ID");
  fresh->excludes(existing);
  cmd->add_option("--message", o->message, "The message to send")->required();
  add_turn_options(cmd, o->turn);
  cmd->callback([o] { run_send(*o); });
}

}  // namespace hearth::cli
