// Starting a turn, on the thread that owns the store. Each function checks
// everything that can be refused (an unknown prompt or version, a variable
// without a value, bad sampling values) BEFORE it writes, so a refused turn
// leaves the conversation as it was; then it stores the user's message (or
// the edit), begins the 'streaming' answer and returns the plan.
#pragma once

#include <optional>
#include <string>

#include "conversation/turn.h"
#include "store/store.h"

namespace hearth::conversation {

struct SendInput {
  store::Id conversation_id = 0;  // 0: a new conversation titled after the message
  std::string text;
  // The message the new one answers; nullopt with use_current_leaf: the
  // conversation's current leaf (what it shows); nullopt without: a root.
  std::optional<store::Id> parent{};
  bool use_current_leaf = true;
  // Applying settings.prompt also pins it to the conversation (from this turn on).
  bool pin_prompt = true;
};
store::StoreResult<PreparedTurn> begin_send(store::Store& store, const SendInput& input, const TurnSettings& settings);

// Another answer after `message_id`: beside it when it is an answer, under it when it is the user's.
store::StoreResult<PreparedTurn> begin_regenerate(store::Store& store, store::Id message_id,
                                                  const TurnSettings& settings);

// A new version of a user message (a sibling branch), answered.
store::StoreResult<PreparedTurn> begin_edit(store::Store& store, store::Id message_id, const std::string& text,
                                            const TurnSettings& settings);

// The past user message `user_message_id` again, with its context up to it: a
// new answer beside its earlier ones. Unless `settings` say otherwise, the
// prompt version, variables and sampling (seed included) of its latest answer
// are used again. `previous` receives that answer's id (0 when it had none).
store::StoreResult<PreparedTurn> begin_rerun(store::Store& store, store::Id user_message_id, TurnSettings settings,
                                             store::Id* previous = nullptr);

}  // namespace hearth::conversation
