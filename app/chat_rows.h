// What the chat view shows of a conversation: the messages from the root to
// the current leaf, each with its place among its siblings and, for answers,
// the generation record. Read from the store in one go (storage thread).
#pragma once

#include <optional>
#include <vector>

#include "store/store.h"

namespace hearth::app {

struct ChatRow {
  store::Message message;
  int sibling_index = 0;  // 0-based among the versions of this turn
  int sibling_count = 1;
  std::vector<store::Id> sibling_ids;  // oldest first
  std::optional<store::GenerationRecord> generation;
  store::Rating rating = store::Rating::kNone;  // the user's thumbs on an answer
};

struct ConversationPath {
  store::Id conversation_id = 0;
  std::vector<ChatRow> rows;
};

store::StoreResult<ConversationPath> load_path(store::Store& store, store::Id conversation_id);

}  // namespace hearth::app
